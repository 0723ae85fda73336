#!/usr/bin/env bash
# Records the CPU corpus of issue 36 (tests/data/cpu-corpus) on a quiet many-core machine
# (the GPU machine's host): single-rank recordings of every model the recorder has, one
# thread, one at a time on one pinned core, then 2- and 4-rank gloo runs, each alone on the
# machine. Every recording has its ET, Kineto trace, unprofiled truth, peak memory, the
# profiler's measured cost (profiler_calibration) and its recipe (recipes.txt), the truth
# timed again after the recording (unprofiled_step_after_ms, docs/step-model.md "Two
# truths"), the minor page faults a step of every run and what one costs on this host
# (docs/step-model.md, "Page faults"), and a light profile (multi-rank: one per rank, for
# et-convert --ranks N --host-profile 'X_kineto_light_r%d.json.gz'). 6-8 minutes in
# all on the H100 machine's host. Recordings run side by side on a cloud VM's vCPUs disagreed with
# their own truths by up to 3x (docs/step-model.md), so nothing runs beside a recording.
# Results are packed after every recording into OUT/corpus.tgz: a run cut short keeps
# what it finished.
#
#   tests/gpu/cpu_corpus.sh OUT         (DEADLINE_S, default 540; CORE, default 3)
set -uo pipefail
CORE=${CORE:-3}
source "$(dirname "$0")/recording_run.sh"
recording_run "${1:-}" corpus.tgz 540
{
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)'
  python3 -c 'import torch; print("torch", torch.__version__)'
} >machine.txt 2>&1

# NAME RANKS ARGS...: one rank pinned to $CORE with one thread, or RANKS gloo ranks with
# two threads each.
recording() {
  local name=$1 ranks=$2
  shift 2
  local limit
  limit=$(($(left) - 10))
  [ "$limit" -gt 20 ] || { echo "$name: skipped" >>summary.txt; return; }
  if [ "$ranks" = 1 ]; then
    echo "$name: --device cpu --steps 5 --warmup 3 $* (OMP_NUM_THREADS=1, core $CORE)" >>recipes.txt
    OMP_NUM_THREADS=1 timeout -k 5 "$limit" taskset -c "$CORE" python3 "$record" \
      --device cpu --steps 5 --warmup 3 "$@" --et-out "${name}_et.json" \
      --kineto-out "${name}_kineto.json" --kineto-light-out "${name}_kineto_light.json" \
      >"$name.log" 2>&1
  else
    echo "$name: --device cpu --spawn $ranks --steps 5 --warmup 3 $* (OMP_NUM_THREADS=2)" >>recipes.txt
    OMP_NUM_THREADS=2 timeout -k 5 "$limit" python3 "$record" --device cpu --spawn "$ranks" \
      --steps 5 --warmup 3 "$@" --et-out "${name}_et_r{rank}.json" \
      --kineto-out "${name}_kineto_r{rank}.json" \
      --kineto-light-out "${name}_kineto_light_r{rank}.json" >"$name.log" 2>&1
  fi
  echo "$name: exit $? at $(($(date +%s) - start)) s" >>summary.txt
  pack
}

recording cpu_mlp_w64 1 --model mlp --width 64 --batch 16
recording cpu_gpt_w64 1 --model gpt --width 64 --batch 16
recording cpu_moe_w64 1 --model moe --width 64 --batch 4 --seq 16
recording cpu_rnn_w128 1 --model rnn --width 128 --batch 16 --seq 32
recording cpu_conv_w16 1 --model conv --width 16 --batch 16
recording cpu_mlp_w256 1 --model mlp --width 256 --batch 32
recording cpu_gpt_w256 1 --model gpt --width 256 --batch 8
recording cpu_moe_w128 1 --model moe --width 128 --batch 4 --seq 16
recording cpu_conv_w32 1 --model conv --width 32 --batch 8
recording cpu_rnn_w512 1 --model rnn --width 512 --batch 4 --seq 16
recording cpu_mlp_w1024 1 --model mlp --width 1024 --batch 8
recording cpu_gpt_w512 1 --model gpt --width 512 --heads 8 --batch 4
recording ddp_gpt_2r 2 --model gpt --width 128 --batch 8 --port 29631
recording ddp_gpt_4r 4 --model gpt --width 128 --batch 8 --port 29632
recording ddp_rnn_2r 2 --model rnn --width 128 --batch 8 --port 29633
recording tp2_mlp 2 --model mlp --width 256 --batch 16 --tp 2 --port 29634
recording ddp_conv_4r 4 --model conv --width 16 --batch 8 --port 29635
echo "done in $(($(date +%s) - start)) s" >>summary.txt
pack
cat summary.txt
