#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS (default 60) from a seed corpus made of
# the real traces in tests/data and the hostile corpus in tests/data/bad; new
# inputs it finds go to BUILD/fuzz-corpus/<target>, crashes to
# BUILD/fuzz-crashes/. Fails if any target finds a crash, leak or timeout.
#   tests/fuzz/run_fuzzers.sh BUILD [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=$1
SECONDS_PER_TARGET=${2:-60}
DATA=tests/data
seed() {  # seed TARGET FILE...: copies the files in (gunzipped copies too)
  local dir=$BUILD/fuzz-corpus/$1
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    cp "$f" "$dir/"
    # Damaged gzips (on purpose) decompress partly: keep what comes out.
    case $f in *.gz) gzip -dc "$f" > "$dir/$(basename "${f%.gz}")" 2>/dev/null || true ;; esac
  done
}
seed fuzz_et_json $DATA/hta/simple_add_et.json.gz $DATA/chakra/allgather_2rank_et.1.0.2.json.gz \
  $DATA/bad/inputs/et_*.json
seed fuzz_kineto $DATA/hta/simple_add_kineto.json.gz \
  $DATA/hta/event_sync_multi_stream_kineto.json.gz $DATA/bad/inputs/kineto_*.json
seed fuzz_et_reader $DATA/chakra/mlp_mp.0.et $DATA/chakra/mlp_mp.1.et \
  $DATA/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et $DATA/bad/inputs/graph_*
# Config seeds: the first byte picks the reader (see fuzz_configs.cc).
dir=$BUILD/fuzz-corpus/fuzz_configs
mkdir -p "$dir"
i=0
for f in $DATA/astra-sim/configs/*.yml; do { printf '\x00'; cat "$f"; } > "$dir/topo$i"; i=$((i+1)); done
for f in $DATA/astra-sim/configs/*system*.json; do { printf '\x01'; cat "$f"; } > "$dir/sys$i"; i=$((i+1)); done
{ printf '\x02'; cat simulator/platform/presets/devices.json; } > "$dir/devices"
printf '\x03{"format": "et-calibration", "entries": [{"name": "aten::mm", "input_shapes": [[2, 2]], "mean_us": 1}]}' > "$dir/cal"
printf '\x04[{"pg_name": "0", "ranks": [0, 1], "group_size": 2}]' > "$dir/groups"
printf '\x05{name: mine, gpu: A100, gpus_per_node: 8, nics_per_node: 4, nic_gbits: 200}' > "$dir/platform"
for f in $DATA/nccl-tests/logs/*.txt; do { printf '\x06'; head -c 20000 "$f"; } > "$dir/log$i"; i=$((i+1)); done
# Inputs that once crashed or hung a target: tests/fuzz/regressions/TARGET-*.
for f in tests/fuzz/regressions/*; do
  t=$(basename "$f"); t=${t%%-*}
  mkdir -p "$BUILD/fuzz-corpus/$t" && cp "$f" "$BUILD/fuzz-corpus/$t/"
done
# The newer imports: a Kineto trace alone, an nsys export.
seed fuzz_kineto_only $DATA/kineto-only/hta_alexnet_trace.json.gz $DATA/hta/simple_add_kineto.json.gz
seed fuzz_nsys $DATA/nsys/nsysai_mock_rtx3080.sqlite.gz

mkdir -p "$BUILD/fuzz-crashes"
status=0
# The two newer imports run a third as long: they start from large seeds and
# keep CI's added time to about a minute.
for target in fuzz_et_json fuzz_kineto fuzz_et_reader fuzz_configs fuzz_kineto_only fuzz_nsys; do
  seconds=$SECONDS_PER_TARGET
  max_len=65536
  case $target in fuzz_kineto_only|fuzz_nsys)
    seconds=$(( (SECONDS_PER_TARGET + 2) / 3 ))
    max_len=1048576 ;;  # an nsys export is a few hundred KB at the least
  esac
  echo "== $target: ${seconds}s"
  log=$BUILD/fuzz-crashes/$target.log
  # The field names of each reader (tests/fuzz/*.dict, kept in step by
  # check_dictionaries.py); fuzz_et_json and fuzz_et_reader have none yet.
  dict=tests/fuzz/${target}.dict
  case $target in fuzz_kineto_only) dict=tests/fuzz/fuzz_kineto.dict ;; esac
  dict_flag=()
  [ -f "$dict" ] && dict_flag=(-dict="$dict")
  if "$BUILD/tests/fuzz/$target" "$BUILD/fuzz-corpus/$target" "${dict_flag[@]}" \
      -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=4096 -timeout=20 \
      -artifact_prefix="$BUILD/fuzz-crashes/$target-" -print_final_stats=1 > "$log" 2>&1; then
    tail -n 12 "$log"
  else
    tail -n 60 "$log"
    echo "== $target FAILED (log: $log)"
    status=1
  fi
done
exit $status
