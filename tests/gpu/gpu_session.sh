#!/usr/bin/env bash
# Everything this project measures on a GPU machine, in one bounded run, for a session
# lent a few minutes of one GPU (issue 35): the gpu tests, the CUDA-replay scoreboard of the
# shared H100 models, two recordings the corpus lacks (a CNN and a mixture-of-experts
# layer: ET, Kineto, light Kineto, unprofiled step, peak memory) converted with their light
# profiles, simulated and replayed, one rank of NCCL, what each profiler costs per op
# (profiler_overhead.py), the GPU proof (tests/gpu/record_and_replay.sh), and
# torch 2.x CPU/gloo recordings (4-rank DDP, tp=2 x dp=2) with a quiet machine's truths.
# Stages run in that order, each under its own time limit and never past DEADLINE_S: a
# failed or skipped stage is said in OUT/summary.txt and the next one runs. Results are
# packed after every stage into OUT/*.tgz (a few files, as a device tool brings back).
#
#   tests/gpu/gpu_session.sh BUILD TRACES OUT      (TRACES: ../shared/traces)
#   DEADLINE_S=480 tests/gpu/gpu_session.sh build .dev/traces "$OUT"
# STAGES="scoreboard moe" runs only those stages; RECORDINGS=DIR takes the GPU models'
# recordings from DIR (a previous run's moe/ and conv/ folders) instead of recording.
set -uo pipefail

BUILD=$(cd "${1:?BUILD}" && pwd)
TRACES=$(cd "${2:?TRACES}" && pwd)
OUT=$(mkdir -p "${3:?OUT}" && cd "$3" && pwd)
DEADLINE_S=${DEADLINE_S:-480}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/gpu_session.XXXX)
start=$(date +%s)
summary="$OUT/summary.txt"
: >"$summary"
convert="$BUILD/converter/et-convert"
sim="$BUILD/simulator/et-sim"
rep="$BUILD/replay/et-replay"
record="$here/examples/record_trace.py"

pack() {  # everything so far in two archives: reports and logs; the recordings
  find "$work" -name '*.json' -size +64k -exec gzip -9 -n -f {} + 2>/dev/null
  (cd "$work" && tar -czf "$OUT/results.tgz" --exclude='*_et*.json*' \
    --exclude='*_kineto*.json*' --exclude='*.et' --exclude='*trace.json*' .)
  rm -f "$OUT"/recordings.tgz.*
  (cd "$work" && find . \( -name '*_et*.json*' -o -name '*_kineto*.json*' \
    -o -name '*trace.json*' \) -print0 |
    tar -czf - --null -T - | split -b 15m -d - "$OUT/recordings.tgz.")
}

# stage NAME LIMIT_S COMMAND...: runs COMMAND in $work/NAME with its output in log.txt.
stage() {
  local name=$1 limit=$2
  shift 2
  if [ -n "${STAGES:-}" ] && [[ " $STAGES " != *" $name "* ]]; then
    return
  fi
  local left=$((DEADLINE_S - ($(date +%s) - start) - 5))
  if [ "$left" -lt 20 ]; then
    echo "$name: skipped ($left s left before the deadline)" | tee -a "$summary"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  mkdir -p "$work/$name"
  local t0
  t0=$(date +%s)
  echo "== $name (limit $limit s) $(date +%T)" >&2
  (cd "$work/$name" && timeout -k 5 "$limit" bash -c '"$@"' stage "$@") \
    >"$work/$name/log.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc in $(($(date +%s) - t0)) s" | tee -a "$summary"
  tail -n 4 "$work/$name/log.txt" | sed 's/^/    /' >>"$summary"
  pack
}

machine() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'
  lscpu | grep -E '^(Model name|CPU\(s\))'
}

# The models the corpus lacks, on the GPU: recorded, converted, predicted, replayed.
gpu_model() {
  local name=$1
  shift
  if [ -n "${RECORDINGS:-}" ]; then
    cp "$RECORDINGS/$name/${name}"_*.json* . && gunzip -f ./*.gz || return
  else
    python3 "$record" --device cuda --steps 3 --warmup 3 "$@" \
      --et-out "${name}_et.json" --kineto-out "${name}_kineto.json" \
      --kineto-light-out "${name}_kineto_light.json" || return
  fi
  # With its light profile the host costs are learned from the recording.
  local light=()
  [ -f "${name}_kineto_light.json" ] && light=(--host-profile "${name}_kineto_light.json")
  "$convert" "${name}_et.json" "$name.et" --kineto "${name}_kineto.json" "${light[@]}" ||
    return
  "$sim" "$name.et" --json >"$name.sim.json"
  "$sim" "$name.et" --json --host-profile "${name}_kineto_light.json" >"$name.sim_light.json"
  "$sim" "$name.et" --json --host-time recorded >"$name.sim_recorded.json"
  "$rep" "$name.et" --device cuda --warmup 2 --iters 10 --json "$name.replay.json" --top 25
  "$rep" "$name.et" --device cuda --warmup 2 --iters 10 --host-time recorded \
    --json "$name.replay_recorded.json"
}

nccl_one_rank() {
  "$convert" "$here/examples/data/ddp_mlp_et_r%d.json.gz" ddp.%d.et --ranks 4 \
    --kineto "$here/examples/data/ddp_mlp_trace_r%d.json.gz" --quiet || return
  NCCL_DEBUG=INFO "$rep" ddp.0.et --device cuda --world 1 --iters 3 --json nccl.replay.json
}

# torch 2.x on the CPU over gloo: what Debian's torch 1.13 cannot record (pg_name on each
# collective, the process-group table). 4 threads a rank on the 16 cores.
cpu_ranks() {
  local name=$1
  shift
  OMP_NUM_THREADS=4 python3 "$record" --device cpu --spawn 4 --steps 3 "$@" \
    --et-out "${name}_et_r{rank}.json" --kineto-out "${name}_kineto_r{rank}.json" || return
  "$convert" "${name}_et_r%d.json" "$name.%d.et" --ranks 4 --kineto "${name}_kineto_r%d.json"
  "$sim" "$name.%d.et" --ranks 4 --json >"$name.sim.json"
}

# Single-rank CPU recordings, one thread each, side by side on their own cores: the host
# model's truths on a quiet machine (issue 36).
cpu_corpus() {
  local i=0 pids=()
  for spec in "mlp --width 256 --batch 32" "gpt --width 256 --batch 8" \
    "conv --width 16 --batch 16" "moe --width 128 --batch 4 --seq 16"; do
    set -- $spec
    local name="cpu_$1_w$3"
    OMP_NUM_THREADS=1 taskset -c $(((2 + 2 * i) % $(nproc))) python3 "$record" --device cpu --model $spec \
      --steps 3 --warmup 3 --et-out "${name}_et.json" --kineto-out "${name}_kineto.json" \
      >"$name.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  cat ./*.log
  return $rc
}

# A replay's own trace (Perfetto) of two models, to set beside their Kineto traces.
replay_traces() {
  local m
  for m in gpt2 resnet50; do
    "$convert" "$TRACES/h100/${m}_et.json.gz" "$m.et" --kineto "$TRACES/h100/${m}_kineto.json.gz" \
      --quiet || return
    "$rep" "$m.et" --device cuda --warmup 1 --iters 1 --trace "$m.replay_trace.json" \
      --json "$m.replay.json" --top 40
    # The step timed with the events around every op, as before: their cost.
    "$rep" "$m.et" --device cuda --warmup 2 --iters 10 --op-timing in-step \
      --json "$m.in_step.replay.json" >/dev/null
  done
}

export convert sim rep record here TRACES RECORDINGS
export -f replay_traces
export -f machine gpu_model nccl_one_rank cpu_ranks cpu_corpus
stage machine 30 machine
stage ctest_gpu 120 ctest --test-dir "$BUILD" --output-on-failure -L gpu
stage scoreboard 200 env ET_SHARED_TRACES="$TRACES" python3 "$here/tests/fidelity/scoreboard.py" \
  "$BUILD" --replay-device cuda --keep .
stage moe 120 gpu_model moe --model moe --width 1024 --batch 8 --seq 512 --experts 8
stage conv 120 gpu_model conv --model conv --width 64 --batch 256
stage gpt 120 gpu_model gpt --model gpt --width 1024 --heads 16 --seq 512 --batch 8
stage nccl 60 nccl_one_rank
stage replay_traces 60 replay_traces
stage profiler_cost 90 python3 "$here/tests/gpu/profiler_overhead.py"
stage proof 180 bash "$here/tests/gpu/record_and_replay.sh" "$BUILD" .
stage cpu_ddp4 120 cpu_ranks ddp4 --model mlp --width 256 --batch 32 --port 29621
stage cpu_tp2dp2 120 cpu_ranks tp2dp2 --model mlp --width 128 --batch 16 --tp 2 --port 29622
stage cpu_corpus 120 cpu_corpus
echo "done in $(($(date +%s) - start)) s" | tee -a "$summary"
