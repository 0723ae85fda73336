#!/usr/bin/env python3
"""Where a training step's host time goes, without a profiler and under the
light one: per model of examples/record_trace.py, the host time of each phase
of train_step (zero_grad, forward and loss, backward, optimizer step), timed
with perf_counter around each call (the GPU synchronised only at the ends of
each block of steps, as in training), median over the steps of 5 blocks.
Beside a light profile, it says which phases the profiler inflates, and how
long the handoffs between the Python thread and the autograd engine's take
unprofiled (docs/step-model.md, "GPU models kept aside").

  python3 tests/gpu/step_phases.py > phases.json
"""
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import profiler_in_model  # noqa: E402
import record_trace  # noqa: E402

PHASES = ("zero_grad", "forward", "backward", "step")


def phased_step(model, optimizer, inputs, targets, loss_fn, times):
    t0 = time.perf_counter()
    optimizer.zero_grad()
    t1 = time.perf_counter()
    loss = loss_fn(model(inputs), targets)
    t2 = time.perf_counter()
    loss.backward()
    t3 = time.perf_counter()
    optimizer.step()
    t4 = time.perf_counter()
    for name, a, b in zip(PHASES, (t0, t1, t2, t3), (t1, t2, t3, t4)):
        times[name].append((b - a) * 1e3)


def blocks(step, n_blocks, steps):
    times = {p: [] for p in PHASES}
    for _ in range(n_blocks):
        profiler_in_model.sync()
        for _ in range(steps):
            step(times)
        profiler_in_model.sync()
    return {p: round(statistics.median(v), 4) for p, v in times.items()}


def measure(spec, device):
    args = record_trace.parse_args(spec.split() + ["--device", device.type])
    torch.manual_seed(0)
    model, inputs, targets, loss_fn = record_trace.make_model_and_batch(args, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = lambda times: phased_step(model, optimizer, inputs, targets, loss_fn, times)
    for _ in range(10):
        step({p: [] for p in PHASES})
    none = blocks(step, 5, 20)
    with torch.profiler.profile(activities=record_trace._activities(device),
                                record_shapes=False):
        step({p: [] for p in PHASES})
        light = blocks(step, 5, 20)
    return {"model": spec, "none_ms": none, "light_ms": light}


def main():
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    out = {"torch": torch.__version__, "host_cpu": record_trace.host_cpu(), "results": []}
    for spec in profiler_in_model.MODELS:
        r = measure(spec, device)
        print(json.dumps(r), file=sys.stderr, flush=True)
        out["results"].append(r)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
