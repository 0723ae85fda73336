#!/usr/bin/env bash
# et-convert benchmark: wall time, CPU time, MB/s and peak RSS of et-convert, of a bare
# JSON parse of the same file (json_parse_floor: simdjson DOM and nlohmann SAX, the
# floor), and of MLCommons Chakra's reference Python converter when REF_CONVERTER_DIR
# names a checkout of it. Prints markdown tables on stdout; builds nothing.
#
# Usage: tests/bench/run_benchmarks.sh BUILD_DIR
#   BUILD_DIR must hold converter/et-convert and tests/bench/json_parse_floor.
# Environment:
#   BENCH_DATA_DIR     inputs, made here if absent (default /tmp/et-bench)
#   REF_CONVERTER_DIR  root of a mlcommons/chakra checkout (src/converter/...); unset: no
#                      reference rows. et_def_pb2.py is generated there with protoc if absent.
#   REF_PYTHON         interpreter for the reference and the recorder (default /usr/bin/python3)
#   REPEATS            runs per C++ measurement, best wall kept (default 3)
#   REF_REPEATS        runs per reference measurement (default 1)
#   REF_NO_LOG=1       also time the reference's PyTorchConverter.convert() called directly,
#                      without the CLI's DEBUG log file (two records per node)
#   INPUTS             subset of: param medium large (default all three)
#   ET_CONVERT_BIN, FLOOR_BIN  override the two programs taken from BUILD_DIR
#
# Inputs: the three 1.0.x/1.1.x traces of tests/data/param (gunzipped), and two traces
# recorded with tests/data/pytorch-1.13-cpu/big.py (PyTorch 1.13, schema 1.0.1):
# `big.py 4 10 medium` (~100k nodes) and `big.py 12 10 large` (~300k nodes, ~160 MB),
# each also rewritten to 1.1.0-chakra.0.0.4 by et_upgrade_schema.py, since the reference
# rejects 1.0.1. Recording needs torch 1.13 in REF_PYTHON.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/../.." && pwd)
DATA_DIR=${BENCH_DATA_DIR:-/tmp/et-bench}
PYTHON=${REF_PYTHON:-/usr/bin/python3}
REPEATS=${REPEATS:-3}
REF_REPEATS=${REF_REPEATS:-1}
INPUTS=${INPUTS:-"param medium large"}
ET_CONVERT=${ET_CONVERT_BIN:-$BUILD_DIR/converter/et-convert}
FLOOR=${FLOOR_BIN:-$BUILD_DIR/tests/bench/json_parse_floor}

for tool in "$ET_CONVERT" "$FLOOR" /usr/bin/time; do
  [[ -x $tool ]] || { echo "$0: error: $tool: missing (build it first)" >&2; exit 1; }
done
mkdir -p "$DATA_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# --- inputs -----------------------------------------------------------------------------

# Records big.py LAYERS STEPS TAG into DATA_DIR/TAG_et.json unless it exists.
record_big() {
  local layers=$1 steps=$2 tag=$3
  [[ -s $DATA_DIR/${tag}_et.json ]] && return 0
  echo "recording big.py $layers $steps $tag ..." >&2
  (cd "$DATA_DIR" && "$PYTHON" "$REPO_DIR/tests/data/pytorch-1.13-cpu/big.py" \
    "$layers" "$steps" "$tag" >&2)
}

# Writes DATA_DIR/TAG_et.1.1.0.json from the 1.0.1 recording unless it exists.
upgrade_big() {
  local tag=$1
  [[ -s $DATA_DIR/${tag}_et.1.1.0.json ]] && return 0
  "$PYTHON" "$BENCH_DIR/et_upgrade_schema.py" "$DATA_DIR/${tag}_et.json" \
    "$DATA_DIR/${tag}_et.1.1.0.json"
}

# Prints the input files, one per line, making them if absent.
prepare_inputs() {
  local name
  for set in $INPUTS; do
    case $set in
      param)
        for name in resnet_1gpu_et.1.0.3 resnet_1gpu_et.1.1.1 resnet_2gpu_et.1.1.0; do
          if [[ ! -s $DATA_DIR/$name.json ]]; then
            gunzip -c "$REPO_DIR/tests/data/param/$name.json.gz" >"$DATA_DIR/$name.json.tmp"
            mv "$DATA_DIR/$name.json.tmp" "$DATA_DIR/$name.json"
          fi
          echo "$DATA_DIR/$name.json"
        done ;;
      medium | large)
        if [[ $set == medium ]]; then record_big 4 10 medium; else record_big 12 10 large; fi
        upgrade_big "$set" >&2
        echo "$DATA_DIR/${set}_et.json"
        echo "$DATA_DIR/${set}_et.1.1.0.json" ;;
      *) echo "$0: error: unknown input set $set" >&2; exit 2 ;;
    esac
  done
}

# --- measurement ------------------------------------------------------------------------

# Runs "$@" REPS times under /usr/bin/time; prints "wall cpu rss_kb rc" of the fastest run
# (rss: the largest seen). Its stdout goes to $WORK/last.out.
measure() {
  local reps=$1; shift
  local best_wall="" best_cpu="" max_rss=0 rc=0 i
  for ((i = 0; i < reps; i++)); do
    local t0=$EPOCHREALTIME
    if /usr/bin/time -f '%e %U %S %M' -o "$WORK/time" "$@" >"$WORK/last.out" \
      2>"$WORK/last.err"; then rc=0; else rc=$?; fi
    local t1=$EPOCHREALTIME
    if [[ $rc -ne 0 ]]; then
      echo "$0: warning: $* exited $rc: $(tail -1 "$WORK/last.err")" >&2
      echo "- - 0 $rc"
      return 0
    fi
    local wall user sys rss cpu
    read -r wall user sys rss < <(tail -1 "$WORK/time")
    # Wall from bash's microsecond clock (/usr/bin/time rounds to 10 ms).
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z $best_wall ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN { exit !(a < b) }'; then
      best_wall=$wall best_cpu=$cpu
    fi
    ((rss > max_rss)) && max_rss=$rss
  done
  echo "$best_wall $best_cpu $max_rss 0"
}

schema_of() {
  head -c 4096 "$1" | grep -o '"schema": *"[^"]*"' | head -1 | sed 's/.*"\([^"]*\)"$/\1/'
}

REF_PARENT=""
setup_reference() {
  [[ -n ${REF_CONVERTER_DIR:-} ]] || return 0
  local dir
  dir=$(cd "$REF_CONVERTER_DIR" && pwd)
  [[ -f $dir/src/converter/pytorch_converter.py ]] || {
    echo "$0: error: $dir: not a chakra checkout" >&2; exit 1; }
  if [[ ! -f $dir/schema/protobuf/et_def_pb2.py ]]; then
    (cd "$dir" && protoc --python_out=. schema/protobuf/et_def.proto)
  fi
  # The converter uses package-relative imports: expose the checkout as package `chakra`.
  REF_PARENT=$WORK/refpkg
  mkdir -p "$REF_PARENT"
  ln -s "$dir" "$REF_PARENT/chakra"
}

run_reference() {
  local in=$1
  PYTHONPATH=$REF_PARENT measure "$REF_REPEATS" "$PYTHON" -m chakra.src.converter.converter \
    --log-filename "$WORK/ref.log" PyTorch --input "$in" --output "$WORK/ref.et"
}

# The same conversion without the CLI's logging set-up (DEBUG records are then dropped).
run_reference_no_log() {
  local in=$1
  PYTHONPATH=$REF_PARENT measure "$REF_REPEATS" "$PYTHON" -c \
    'import sys; from chakra.src.converter.pytorch_converter import PyTorchConverter as C
C().convert(sys.argv[1], sys.argv[2], False)' "$in" "$WORK/ref.et"
}

# Prints one table row and remembers the numbers for the ratio table.
row() {
  local input=$1 nodes=$2 mb=$3 tool=$4 wall=$5 cpu=$6 rss_kb=$7 rc=$8
  if [[ $rc -ne 0 || $wall == - ]]; then
    printf '| %s | %s | %s | %s | failed (exit %s) | | | |\n' "$input" "$nodes" "$mb" "$tool" "$rc"
    return
  fi
  awk -v i="$input" -v n="$nodes" -v m="$mb" -v t="$tool" -v w="$wall" -v c="$cpu" \
    -v r="$rss_kb" 'BEGIN {
      rate = (w > 0) ? sprintf("%.0f", m / w) : "-";
      printf "| %s | %s | %s | %s | %.3f | %.2f | %s | %.0f |\n", i, n, m, t, w, c, rate, r / 1024 }'
  echo "$input|$tool|$wall|$cpu|$rss_kb" >>"$WORK/results"
}

bench_input() {
  local in=$1 name mb nodes schema
  name=$(basename "$in" .json)
  mb=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1e6 }')
  "$FLOOR" "$in" all >"$WORK/floor.out"
  nodes=$(sed -n 's/^nodes=//p' "$WORK/floor.out")
  floor_rates "$name" "$mb" <"$WORK/floor.out" >>"$WORK/floor_table"
  schema=$(schema_of "$in")
  read -r w c r rc < <(measure "$REPEATS" "$ET_CONVERT" "$in" "$WORK/out.et" --quiet)
  row "$name" "$nodes" "$mb" "et-convert" "$w" "$c" "$r" "$rc"
  read -r w c r rc < <(measure "$REPEATS" "$ET_CONVERT" "$in" "$WORK/out.et" --quiet \
    --keep all)
  row "$name" "$nodes" "$mb" "et-convert --keep all" "$w" "$c" "$r" "$rc"
  read -r w c r rc < <(measure "$REPEATS" "$FLOOR" "$in" simdjson)
  row "$name" "$nodes" "$mb" "floor: simdjson DOM" "$w" "$c" "$r" "$rc"
  read -r w c r rc < <(measure "$REPEATS" "$FLOOR" "$in" nlohmann-sax)
  row "$name" "$nodes" "$mb" "floor: nlohmann SAX" "$w" "$c" "$r" "$rc"
  [[ -n $REF_PARENT ]] || return 0
  if [[ $schema == 1.0.1 ]]; then
    printf '| %s | %s | %s | reference (Python) | rejects schema 1.0.1 | | | |\n' \
      "$name" "$nodes" "$mb"
    return
  fi
  read -r w c r rc < <(run_reference "$in")
  row "$name" "$nodes" "$mb" "reference (Python)" "$w" "$c" "$r" "$rc"
  [[ ${REF_NO_LOG:-0} == 1 ]] || return 0
  read -r w c r rc < <(run_reference_no_log "$in")
  row "$name" "$nodes" "$mb" "reference, no debug log" "$w" "$c" "$r" "$rc"
}

# Turns json_parse_floor's output into a row of parse-only MB/s (no process start, no read).
floor_rates() {
  awk -v i="$1" -v m="$2" '{ for (f = 2; f <= NF; f++) { split($f, kv, "=");
      if (kv[1] == "mb_per_s") rate[$1] = kv[2] } }
    END { printf "| %s | %s | %s | %s | %s |\n", i, m, rate["simdjson-dom"],
          rate["simdjson-dom-warm"], rate["nlohmann-sax"] }'
}

# Speed-up and memory ratio of et-convert (default, and --keep all: every node, like the
# reference's output) over the reference, per input both ran.
print_ratios() {
  [[ -n $REF_PARENT && -s $WORK/results ]] || return 0
  echo
  echo "| input | et-convert mode | wall speed-up | CPU speed-up | memory ratio (ref RSS / ours) |"
  echo "|---|---|---|---|---|"
  awk -F'|' '$2 ~ /^et-convert/ { key = $1 "|" $2; w[key] = $3; c[key] = $4; r[key] = $5;
                                   mode[key] = ($2 == "et-convert" ? "default" : "--keep all");
                                   input[key] = $1; order[++n] = key }
       $2 == "reference (Python)" { rw[$1] = $3; rc[$1] = $4; rr[$1] = $5 }
       END { for (i = 1; i <= n; i++) { k = order[i]; in_ = input[k]; if (!(in_ in rw)) continue;
               printf "| %s | %s | %.1fx | %.1fx | %.1fx |\n", in_, mode[k], rw[in_] / w[k],
                      (c[k] > 0 ? rc[in_] / c[k] : 0), rr[in_] / r[k] } }' "$WORK/results"
}

main() {
  setup_reference
  local inputs
  inputs=$(prepare_inputs)
  echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;" \
    "best of $REPEATS runs (reference: $REF_REPEATS); $(date -u +%Y-%m-%d);" \
    "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| input | nodes | MB | tool | wall s | CPU s | MB/s (wall) | peak RSS MB |"
  echo "|---|---|---|---|---|---|---|---|"
  local in
  for in in $inputs; do bench_input "$in"; done
  print_ratios
  echo
  echo "Parse only, in-process (MB/s, file already in memory):"
  echo
  echo "| input | MB | simdjson DOM (first parse) | simdjson DOM (buffers reused) | nlohmann SAX |"
  echo "|---|---|---|---|---|"
  cat "$WORK/floor_table"
  echo
  echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

main
