#!/usr/bin/env bash
# Records GPU models nobody tuned the host model on (issue 36's "models kept aside"): each
# an ET, a Kineto trace, a light profile, the unprofiled truth (before and after the
# recording), peak memory, page faults and the profiler's measured cost, one recording at a
# time on the GPU machine. Nothing runs beside a recording. Results are packed after every
# recording into OUT/heldout.tgz, so a run cut short keeps what it finished; the tools run
# on them afterwards, on any machine (docs/benchmarks.md, "GPU models kept aside";
# tests/data/gpu-heldout and gpu-heldout-b are two runs of it on two machine starts).
#
#   tests/gpu/gpu_heldout.sh OUT          (DEADLINE_S, default 480)
set -uo pipefail
source "$(dirname "$0")/recording_run.sh"
recording_run "${1:-}" heldout.tgz 480
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E '^(Model name|CPU\(s\))'
  python3 -c 'import torch; print("torch", torch.__version__)'
} >machine.txt 2>&1

# NAME ARGS...: one recording on the GPU, 3 profiled steps after 3 warm-up steps.
recording() {
  local name=$1
  shift
  local limit
  limit=$(($(left) - 10))
  [ "$limit" -gt 30 ] || { echo "$name: skipped" >>summary.txt; return; }
  echo "$name: --device cuda --steps 3 --warmup 3 $*" >>recipes.txt
  timeout -k 5 "$limit" python3 "$record" --device cuda --steps 3 --warmup 3 "$@" \
    --et-out "${name}_et.json" --kineto-out "${name}_kineto.json" \
    --kineto-light-out "${name}_kineto_light.json" >"$name.log" 2>&1
  echo "$name: exit $? at $(($(date +%s) - start)) s" >>summary.txt
  pack
}

recording gpu_rnn_w512 --model rnn --width 512 --batch 32 --seq 64
recording gpu_gpt_w256 --model gpt --width 256 --heads 4 --seq 128 --batch 8
recording gpu_mlp_w64 --model mlp --width 64 --batch 16
recording gpu_conv_w32 --model conv --width 32 --batch 64
recording gpu_moe_w512 --model moe --width 512 --batch 4 --seq 256 --experts 4
recording gpu_rnn_w1024 --model rnn --width 1024 --batch 16 --seq 128
recording gpu_mlp_w2048 --model mlp --width 2048 --batch 256
recording gpu_gpt_w768 --model gpt --width 768 --heads 12 --seq 256 --batch 8
echo "done in $(($(date +%s) - start)) s" >>summary.txt
pack
cat summary.txt
