#!/usr/bin/env python3
"""What the light profiler (torch.profiler over CPU and CUDA, no shapes, no ET
observer) adds to a whole training step of each model examples/record_trace.py
builds, measured in one process: blocks of unprofiled steps and of steps under
the light profiler, interleaved (none, light, none, light, ...), so a machine's
drift falls on both. Per model: the unprofiled and light steps (median of the
blocks), the host ops and CUDA API calls per step, and the difference per op.
Answers whether a per-op cost of the light profiler transfers from one model to
another (docs/step-model.md, "GPU models kept aside").

  python3 tests/gpu/profiler_in_model.py [--blocks 5] [--steps 20] > out.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import record_trace  # noqa: E402

MODELS = [
    "--model rnn --width 512 --batch 32 --seq 64",
    "--model gpt --width 256 --heads 4 --seq 128 --batch 8",
    "--model mlp --width 64 --batch 16",
    "--model conv --width 32 --batch 64",
    "--model moe --width 512 --batch 4 --seq 256 --experts 4",
    "--model rnn --width 1024 --batch 16 --seq 128",
    "--model mlp --width 2048 --batch 256",
    "--model gpt --width 768 --heads 12 --seq 256 --batch 8",
    "--model conv --width 64 --batch 256",
    "--model mlp --width 1024 --batch 64",
]


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed_block(step, steps):
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return (time.perf_counter() - start) * 1e3 / steps


def measure(spec, blocks, steps, device):
    args = record_trace.parse_args(spec.split() + ["--device", device.type])
    torch.manual_seed(0)
    model, inputs, targets, loss_fn = record_trace.make_model_and_batch(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = lambda: record_trace.train_step(model, optimizer, inputs, targets, loss_fn)
    for _ in range(10):
        step()
    activities = record_trace._activities(device)
    none, light = [], []
    for _ in range(blocks):
        none.append(timed_block(step, steps))
        with torch.profiler.profile(activities=activities, record_shapes=False):
            step()  # the session's first step pays one-time costs
            light.append(timed_block(step, steps))
    none.append(timed_block(step, steps))
    with torch.profiler.profile(activities=activities, record_shapes=False) as prof:
        step()
    ops = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU
              and not e.name.startswith("cuda") and not e.name.startswith("cu"))
    api = sum(1 for e in prof.events() if e.name.startswith("cuda") or e.name.startswith("cu"))
    n, lt = statistics.median(none), statistics.median(light)
    return {"model": spec, "none_ms": round(n, 4), "light_ms": round(lt, 4),
            "none_blocks": [round(x, 3) for x in none],
            "light_blocks": [round(x, 3) for x in light],
            "ops_per_step": ops, "api_calls_per_step": api,
            "light_us_per_op": round((lt - n) * 1e3 / max(ops, 1), 3)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--models", type=int, default=len(MODELS), help="the first N models")
    a = p.parse_args()
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else ""
    out = {"torch": torch.__version__, "gpu": gpu,
           "host_cpu": record_trace.host_cpu(), "results": []}
    for spec in MODELS[:a.models]:
        r = measure(spec, a.blocks, a.steps, device)
        print(json.dumps(r), file=sys.stderr, flush=True)
        out["results"].append(r)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
