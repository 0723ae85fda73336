#!/bin/sh
# Records the memory-truth traces of this folder (README.md) with Debian's
# PyTorch 1.13 on a CPU: OUT defaults to this folder.
set -e
here=$(cd "$(dirname "$0")" && pwd)
rec="$here/../../../examples/record_trace.py"
out=${1:-$here}
common="--steps 2 --warmup 1 --time-steps 3 --device cpu"
port=29611
for model in mlp gpt conv; do
  size=""
  [ "$model" = conv ] && size="--width 8 --batch 8"
  /usr/bin/python3 "$rec" --model $model $common $size \
    --et-out "$out/${model}_1r_et.json" --kineto-out "$out/${model}_1r_kineto.json"
  for n in 2 4; do
    for kind in ddp zero; do
      flag=""
      [ "$kind" = zero ] && flag="--zero"
      port=$((port + 1))
      /usr/bin/python3 "$rec" --model $model $common $size --spawn $n $flag --port $port \
        --et-out "$out/${model}_${kind}${n}_et_r{rank}.json" \
        --kineto-out "$out/${model}_${kind}${n}_kineto_r{rank}.json"
    done
  done
done
gzip -9 -n -f "$out"/*_et*.json "$out"/*_kineto*.json
