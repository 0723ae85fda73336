#!/bin/bash
# Runs two et-sim binaries on every trace under ../shared/traces, tests/data and
# examples/data and compares what they print and write: stdout, stderr, exit
# code, --json, timelines, per-rank jobs and sweep charts, byte for byte. For
# changes meant to keep behaviour (issue 52's split of simulator/ by idea): a
# reorganisation must print "different: 0".
#   tests/simulator/compare_et_sim.sh OLD_ET_SIM NEW_ET_SIM ET_CONVERT [WORK_DIR] [FILTER]
# Inputs: every .et as it is, and every ET or Kineto JSON converted alone by
# ET_CONVERT (the files it refuses are skipped, and counted); FILTER (an
# extended regex on the input path) narrows them. Each input runs with the
# option sets below (the ones the tests use), a few per kind of input.
set -u
OLD=$(realpath "$1"); NEW=$(realpath "$2"); CONVERT=$(realpath "$3")
W=${4:-/tmp/compare_et_sim}; FILTER=${5:-.}
REPO=$(cd "$(dirname "$0")/../.." && pwd); SHARED=$(realpath -m "$REPO/../shared/traces")
rm -rf "$W"; mkdir -p "$W/et"
n=0; same=0; diffs=()
# run NAME ARGS...: both binaries in $W/{old,new}/NAME (outputs relative to it).
run() {
  local name=$1; shift; n=$((n + 1))
  for v in old new; do
    local bin=$OLD; [ $v = new ] && bin=$NEW
    local d=$W/$v/$name; mkdir -p "$d"
    (cd "$d" && timeout 300 nice -n 19 "$bin" "$@" >stdout 2>stderr; echo $? >rc)
  done
  if diff -r "$W/old/$name" "$W/new/$name" >/dev/null; then same=$((same + 1)); else diffs+=("$name"); fi
}
id() { echo "$1" | sed -e "s#^$SHARED#shared#" -e "s#^$REPO/##" -e 's#[/%.]#_#g'; }
mapfile -t ETS < <(find "$SHARED" "$REPO/tests/data" "$REPO/examples/data" -type f -name '*.et' |
  grep -E "$FILTER" | sort)
refused=0
while IFS= read -r f; do
  out="$W/et/$(id "$f").et"
  if timeout 300 "$CONVERT" "$f" "$out" >/dev/null 2>&1; then ETS+=("$out"); else refused=$((refused + 1)); fi
done < <(find "$SHARED" "$REPO/tests/data" "$REPO/examples/data" -type f \
  \( -name '*.json' -o -name '*.json.gz' \) | grep -E "$FILTER" | sort)
# The bundled demo: four ranks with their Kineto traces.
"$CONVERT" "$REPO/examples/data/ddp_mlp_et_r%d.json.gz" "$W/et/demo.%d.et" --ranks 4 \
  --kineto "$REPO/examples/data/ddp_mlp_trace_r%d.json.gz" >/dev/null 2>&1
run demo "$W/et/demo.%d.et" --ranks 4 --top 8 --host-time recorded
run demo_json "$W/et/demo.%d.et" --ranks 4 --json --timeline t.json
run demo_ab "$W/et/demo.%d.et" --ranks 4 --comm alpha-beta --algorithm ring
# Every trace with the default and the JSON report; every EVERY-th (default 1)
# with the other option sets too.
EVERY=${EVERY:-1}; k=0
for f in "${ETS[@]}"; do
  i=$(id "$f"); k=$((k + 1))
  run "plain_$i" "$f"
  run "json_$i" "$f" --json --host-time recorded --timeline t.json
  [ $((k % EVERY)) -eq 0 ] || continue
  run "world_$i" "$f" --world 4 --write-ranks job --comm alpha-beta
  run "layout_$i" "$f" --layout dp=8 --json --write-ranks job
  run "sweep_$i" "$f" --sweep dp=1,2,4 --chart c.svg
  run "astra_$i" "$f" --schedule astra --comm astra --json
  run "roofline_$i" "$f" --compute roofline --device A100 --topology DGX-A100
done
for op in all_reduce all_gather sendrecv; do
  run "nccl_tests_$op" --nccl-tests "$op" --world 16 --json
  run "nccl_tests_log_$op" --nccl-tests "$op" --comm-from "$REPO/tests/data/nccl-tests/logs/03_xe9680-h100-2x8-ib_allreduce.txt"
done
run usage_world x.et --world 0
run usage_pattern 'x.%d.et'
run usage_nodes --nccl-tests all_reduce --nodes 2 --gpus-per-node 4 --world 3
echo "compare_et_sim: $n runs on ${#ETS[@]} traces ($refused inputs et-convert refused), same: $same, different: ${#diffs[@]}"
for d in "${diffs[@]}"; do echo "  differs: $d"; done
