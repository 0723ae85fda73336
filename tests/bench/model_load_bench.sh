#!/usr/bin/env bash
# Node-model benchmark (issue 10, docs/benchmarks.md "The node model"): CPU time and
# peak RSS of each tool that loads a .et into the node model, on a ~308k-node graph,
# against the .et file's size (the budget: 2x). Prints a markdown table on stdout.
#
# Usage: tests/bench/model_load_bench.sh BUILD_DIR [BASE_BUILD_DIR]
#   BASE_BUILD_DIR: a build of an earlier commit, measured alongside ("before" rows).
# Environment: BENCH_DATA_DIR (default /tmp/et-bench), REPEATS (default 3, best kept).
#
# Input: tfm_small (PyTorch 1.13, tests/data/pytorch-1.13-cpu) upgraded to 1.1.0 and its
# top-level ops repeated to 308,000 nodes (tests/bench/et_repeat_ops.py), converted with
# `et-convert --keep all`: the issue's `big.py 12 10` stand-in, made without torch.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [BASE_BUILD_DIR]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
BASE=${2:+$(cd "$2" && pwd)}
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$BENCH_DIR/../.." && pwd)
DATA=${BENCH_DATA_DIR:-/tmp/et-bench}
REPEATS=${REPEATS:-3}
mkdir -p "$DATA"

ET=$DATA/big308k.et
if [[ ! -s $ET ]]; then
  echo "making $ET ..." >&2
  python3 "$BENCH_DIR/et_upgrade_schema.py" \
    "$REPO/tests/data/pytorch-1.13-cpu/tfm_small_et.json.gz" "$DATA/tfm_small.1.1.0.json"
  python3 "$BENCH_DIR/et_repeat_ops.py" "$DATA/tfm_small.1.1.0.json" \
    "$DATA/big308k.json" 308000 >&2
  "$BUILD/converter/et-convert" "$DATA/big308k.json" "$ET" --keep all --quiet
fi
ET_MB=$(( $(stat -c %s "$ET") / 1000000 ))

# best CPU s (user + sys) and its peak RSS in MB over REPEATS runs of "$@"
measure() {
  local best="" rss=""
  for _ in $(seq "$REPEATS"); do
    local out
    out=$(/usr/bin/time -f "%U %S %M" "$@" 2>&1 >/dev/null | tail -1)
    read -r u s m <<< "$out"
    local cpu
    cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
    if [[ -z $best ]] || awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$cpu; rss=$((m / 1000))
    fi
  done
  echo "$best $rss"
}

row() {  # label build command...
  local label=$1 build=$2; shift 2
  local which=after
  [[ $build == "$BASE" ]] && which=before
  read -r cpu rss <<< "$(measure "${@/#BIN/$build}")"
  printf "| %s | %s | %s | %s | %.2f |\n" "$label" "$which" \
    "$cpu" "$rss" "$(awk -v r="$rss" -v e="$ET_MB" 'BEGIN { print r / e }')"
}

echo "input: $ET ($ET_MB MB)"
echo
echo "| run | build | CPU s | peak RSS MB | RSS / .et |"
echo "|---|---|---|---|---|"
for b in $BASE $BUILD; do
  row "et-sim --world 1024" "$b" BIN/simulator/et-sim "$ET" --world 1024
  row "et-viz --report" "$b" BIN/visualizer/et-viz "$ET" --report
  row "et-viz --report --by-shape" "$b" BIN/visualizer/et-viz "$ET" --report --by-shape
  row "et-replay (host ops off: load + plan)" "$b" BIN/replay/et-replay "$ET" \
    --iters 1 --warmup 0 --host-ops off --host-gaps off
done
