#!/usr/bin/env bash
# et-sim --layout and --search at a world of 10^5 ranks (issue 53, docs/benchmarks.md
# "Layouts of 10^5 ranks"): CPU time (user + system), wall time and peak RSS of each run,
# best of REPEATS by CPU time, on small real one-rank traces. Prints a markdown table.
#
# Usage: tests/bench/layout_search_bench.sh BUILD_DIR
# Environment: BENCH_DATA_DIR (default /tmp/et-bench), REPEATS (default 3), WORLD
# (default 100000).
#
# Inputs: tests/data/tp-synth/tpmlp1 (the Megatron MLP on one rank: 2 column/row pairs,
# 1,028 host ops) and tests/data/cpu-corpus/cpu_gpt_w64 (a GPT-style stack), each
# converted with its Kineto trace.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DATA=${BENCH_DATA_DIR:-/tmp/et-bench}
REPEATS=${REPEATS:-3}
WORLD=${WORLD:-100000}
mkdir -p "$DATA"

convert() {  # stem et.json.gz kineto.json.gz
  local out=$DATA/$1.et
  [[ -s $out ]] || "$BUILD/converter/et-convert" "$2" "$out" --kineto "$3" --quiet
  echo "$out"
}
MLP=$(convert tpmlp1 "$REPO/tests/data/tp-synth/tpmlp1_et.json.gz" \
  "$REPO/tests/data/tp-synth/tpmlp1_kineto.json.gz")
GPT=$(convert cpu_gpt_w64 "$REPO/tests/data/cpu-corpus/cpu_gpt_w64_et.json.gz" \
  "$REPO/tests/data/cpu-corpus/cpu_gpt_w64_kineto.json.gz")

# Best of REPEATS by CPU: "cpu_s wall_s rss_mb".
measure() {
  local best=""
  for _ in $(seq "$REPEATS"); do
    /usr/bin/time -f "%U %S %e %M" -o "$DATA/time.txt" "$@" >/dev/null 2>&1
    read -r u s e m <"$DATA/time.txt"
    local line
    line=$(awk -v u="$u" -v s="$s" -v e="$e" -v m="$m" \
      'BEGIN { printf "%.2f %.2f %.0f", u + s, e, m / 1024 }')
    if [[ -z $best || $(awk -v a="$line" -v b="$best" \
      'BEGIN { split(a, x, " "); split(b, y, " "); print (x[1] < y[1]) }') == 1 ]]; then
      best=$line
    fi
  done
  echo "$best"
}

echo "| input | run | layouts | CPU s (user + sys) | wall s | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for et in "$MLP" "$GPT"; do
  name=$(basename "$et" .et)
  layouts=$("$BUILD/simulator/et-sim" "$et" --search "world=$WORLD" --json |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["search"]["layouts"]))')
  for run in "--layout dp=$WORLD" "--layout tp=4,pp=2,dp=$((WORLD / 8)) --micro-batches 4" \
    "--search world=$WORLD" "--search world=$WORLD --micro-batches 4"; do
    # shellcheck disable=SC2086
    read -r cpu wall rss < <(measure "$BUILD/simulator/et-sim" "$et" $run)
    n=1
    [[ $run == --search* ]] && n=$layouts
    echo "| $name | \`$run\` | $n | $cpu | $wall | $rss |"
  done
done
