#!/usr/bin/env bash
# Time and peak memory of et-convert on profiler traces alone (issue 20)
# against ET + Kineto conversion of the same steps:
#   1. a ~100 MB CPU pair recorded here with ../shared/traces/pytorch-1.13-cpu/
#      big.py (ET + the legacy profiler's trace of the same 7 steps, 9 layers): ET + trace
#      vs the trace alone;
#   2. the H100 gpt2 steps (../shared/traces/h100): ET + Kineto vs the Kineto
#      trace alone vs the light trace alone;
#   3. a ~100 MB Nsight Systems export (tests/bench/nsys_tile.py: the 2xH100
#      capture tiled 42x), which has no ET: its time and memory per MB against
#      those of case 1's ET + trace.
# Usage: tests/bench/profiler_import_bench.sh BUILD_DIR WORK_DIR
# Prints one line per conversion: seconds, peak RSS, input MB; then ratios.
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"; work=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../../shared/traces
convert=$build/converter/et-convert
mkdir -p "$work"
cd "$work"
if [ ! -f bench_trace.json ]; then
  /usr/bin/python3 "$shared/pytorch-1.13-cpu/big.py" 9 7 bench >/dev/null
fi
if [ ! -f big_nsys.sqlite ]; then
  /usr/bin/python3 "$here/nsys_tile.py" \
    "$shared/nsys/nsysai_mfu_2gpu_before.sqlite.gz" big_nsys.sqlite 100
fi

mb() { du -b "$@" | awk '{s += $1} END {printf "%.1f", s / 1e6}'; }
# run NAME INPUT_MB COMMAND...: prints "NAME seconds peak_kb input_mb".
run() {
  local name=$1 size=$2
  shift 2
  /usr/bin/time -o time.txt -f "%e %M" "$@" --quiet >/dev/null 2>&1
  echo "$name $(tail -1 time.txt) $size"
}

results=$(
  run cpu_et_plus_trace "$(mb bench_et.json bench_trace.json)" \
    "$convert" bench_et.json out_et.et --kineto bench_trace.json
  run cpu_trace_alone "$(mb bench_trace.json)" \
    "$convert" bench_trace.json out_trace.et
  zcat "$shared/h100/gpt2_et.json.gz" > gpt2_et.json
  zcat "$shared/h100/gpt2_kineto.json.gz" > gpt2_kineto.json
  zcat "$shared/h100/gpt2_kineto_light.json.gz" > gpt2_kineto_light.json
  run gpt2_et_plus_kineto "$(mb gpt2_et.json gpt2_kineto.json)" \
    "$convert" gpt2_et.json out_gpt2.et --kineto gpt2_kineto.json
  run gpt2_kineto_alone "$(mb gpt2_kineto.json)" \
    "$convert" gpt2_kineto.json out_gpt2_k.et
  run gpt2_kineto_light_alone "$(mb gpt2_kineto_light.json)" \
    "$convert" gpt2_kineto_light.json out_gpt2_l.et
  run nsys_100mb "$(mb big_nsys.sqlite)" \
    "$convert" big_nsys.sqlite 'out_nsys.%d.et'
)
echo "conversion seconds peak_kb input_mb"
echo "$results"
echo "$results" | awk '
  {t[$1] = $2; m[$1] = $3; s[$1] = $4}
  END {
    printf "trace alone / ET + trace (same 7 CPU steps): time %.2fx, memory %.2fx\n",
      t["cpu_trace_alone"] / t["cpu_et_plus_trace"], m["cpu_trace_alone"] / m["cpu_et_plus_trace"]
    printf "gpt2 Kineto alone / ET + Kineto (same 3 H100 steps): time %.2fx, memory %.2fx\n",
      t["gpt2_kineto_alone"] / t["gpt2_et_plus_kineto"], m["gpt2_kineto_alone"] / m["gpt2_et_plus_kineto"]
    printf "gpt2 light Kineto alone / ET + Kineto: time %.2fx, memory %.2fx\n",
      t["gpt2_kineto_light_alone"] / t["gpt2_et_plus_kineto"], m["gpt2_kineto_light_alone"] / m["gpt2_et_plus_kineto"]
    printf "nsys %.0f MB / CPU ET + trace %.0f MB: time %.2fx, memory %.2fx (per input MB: time %.2fx, memory %.2fx)\n",
      s["nsys_100mb"], s["cpu_et_plus_trace"],
      t["nsys_100mb"] / t["cpu_et_plus_trace"], m["nsys_100mb"] / m["cpu_et_plus_trace"],
      (t["nsys_100mb"] / s["nsys_100mb"]) / (t["cpu_et_plus_trace"] / s["cpu_et_plus_trace"]),
      (m["nsys_100mb"] / s["nsys_100mb"]) / (m["cpu_et_plus_trace"] / s["cpu_et_plus_trace"])
  }'
