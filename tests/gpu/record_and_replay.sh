#!/usr/bin/env bash
# The GPU proof of et-replay in one command, for a machine with an NVIDIA GPU,
# PyTorch and this project built (make build): records a GPT-style training
# step (execution trace + Kineto trace, examples/record_trace.py), converts it
# with its Kineto trace, replays it, and prints the replayed step against the
# recorded one, GEMM TFLOP/s and collective bus bandwidth. Then runs
# `ctest -L gpu`. With RANKS > 1 the step is DDP over NCCL and the replay runs
# under mpirun. DEVICE=cpu runs the same pipeline without a GPU (a dry run), with
# CPU-sized defaults (WIDTH=128 SEQ=64 BATCH=4: a few minutes on 2 cores; the GPU
# sizes took over 17 minutes there). Each stage prints a line as it starts.
#
#   tests/gpu/record_and_replay.sh [BUILD] [OUT]
#   RANKS=2 WIDTH=2048 tests/gpu/record_and_replay.sh build /tmp/proof
set -euo pipefail

BUILD=${1:-build}
OUT=${2:-$BUILD/gpu-proof}
DEVICE=${DEVICE:-cuda}
RANKS=${RANKS:-1}
PYTHON=${PYTHON:-python3}
# A GPT block big enough that GEMMs, not launches, fill the GPU; on a CPU, small
# enough to finish in minutes.
if [ "$DEVICE" = cpu ]; then
  WIDTH=${WIDTH:-128} HEADS=${HEADS:-4} SEQ=${SEQ:-64} BATCH=${BATCH:-4}
else
  WIDTH=${WIDTH:-1024} HEADS=${HEADS:-16} SEQ=${SEQ:-512} BATCH=${BATCH:-8}
fi
STEPS=${STEPS:-3}

here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
record=("$here/examples/record_trace.py" --model gpt --device "$DEVICE"
  --width "$WIDTH" --heads "$HEADS" --seq "$SEQ" --batch "$BATCH"
  --steps "$STEPS" --warmup 2
  --et-out "$OUT/gpt_et_r{rank}.json" --kineto-out "$OUT/gpt_kineto_r{rank}.json")
stage() { echo "record_and_replay.sh: [$1/3] $2 ($(date +%T))" >&2; }
stage 1 "recording $STEPS steps of a GPT block (width $WIDTH, seq $SEQ, batch $BATCH) on $DEVICE, $RANKS rank(s)"
if [ "$RANKS" -gt 1 ]; then
  "$PYTHON" "${record[@]}" --spawn "$RANKS"
else
  "$PYTHON" "${record[@]}"
fi

stage 2 "converting"
"$BUILD/converter/et-convert" "$OUT/gpt_et_r%d.json" "$OUT/gpt.%d.et" \
  --ranks "$RANKS" --kineto "$OUT/gpt_kineto_r%d.json"

replay=("$BUILD/replay/et-replay" "$OUT/gpt.%d.et" --device "$DEVICE"
  --warmup 2 --iters 5 --json "$OUT/replay.%d.json" --trace "$OUT/replay.trace.json"
  --calibration "$OUT/calibration.json" --top 15)
stage 3 "replaying (2 warm-up and 5 timed iterations)"
if [ "$RANKS" -gt 1 ]; then
  mpirun --allow-run-as-root -np "$RANKS" "${replay[@]}" | tee "$OUT/replay.txt"
else
  "${replay[@]}" | tee "$OUT/replay.txt"
fi

if [ "$DEVICE" != cpu ]; then
  nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee "$OUT/gpu.txt"
  ctest --test-dir "$BUILD" --output-on-failure -L gpu | tee "$OUT/ctest-gpu.txt"
fi
