#!/usr/bin/env python3
"""What each profiler adds per host op on this machine (issue 36).

Times a loop of 2,000 ops (best of 5) without a profiler, under torch.profiler over CPU
and CUDA activities (the "light" profile et-sim --host-profile reads), and under it with
record_shapes and the execution-trace observer (the "full" recording et-convert reads):
`x.view(-1)` (dispatch only) and `x.add_(1)` (one kernel launch). The light profiler's
cost per op is view's light less its unprofiled time; CUPTI's per launch call is add_'s
added cost less view's (step/host_cost.h: kLightProfilerNsPerOp, kCuptiNsPerLaunch;
docs/step-model.md). Then the host time of examples/record_trace.py's conv net: its step
(wall and process CPU time per step, 5 blocks of 20) and the host time of its forward pass
and optimizer step, to tell whether the unprofiled step is host-bound.

  python3 tests/gpu/profiler_overhead.py        (on a machine with a CUDA GPU)
"""
import os
import statistics
import sys
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
import record_trace  # noqa: E402


def best_us_per_op(loop, n=2000, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        loop(n)
        end = time.perf_counter()
        torch.cuda.synchronize()
        best = min(best, (end - start) / n * 1e6)
    return best


def per_op_costs():
    x = torch.randn(16, device="cuda")

    def views(n):
        for _ in range(n):
            x.view(-1)

    def adds(n):
        for _ in range(n):
            x.add_(1)

    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    for name, loop in [("view", views), ("add_", adds)]:
        bare = best_us_per_op(loop)
        with profile(activities=activities):
            light = best_us_per_op(loop)
        with tempfile.TemporaryDirectory() as tmp:
            observer = torch.profiler.ExecutionTraceObserver()
            observer.register_callback(os.path.join(tmp, "et.json"))
            observer.start()
            with profile(activities=activities, record_shapes=True):
                full = best_us_per_op(loop)
            observer.stop()
            observer.unregister_callback()
        print("%s: us per op: no profiler %.2f, light %.2f, full %.2f"
              % (name, bare, light, full), flush=True)


def conv_host_time(batch):
    args = record_trace.parse_args(["--model", "conv", "--width", "64", "--batch",
                                    str(batch), "--device", "cuda"])
    model, inputs, targets, loss_fn = record_trace.make_model_and_batch(
        args, torch.device("cuda"))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(5):
        record_trace.train_step(model, optimizer, inputs, targets, loss_fn)
    wall, cpu, forward, step = [], [], [], []
    for _ in range(5):
        torch.cuda.synchronize()
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(20):
            record_trace.train_step(model, optimizer, inputs, targets, loss_fn)
        cpu.append((time.process_time() - cpu_start) / 20 * 1e3)
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - start) / 20 * 1e3)
    for _ in range(20):
        torch.cuda.synchronize()
        start = time.perf_counter()
        out = model(inputs)
        forward.append((time.perf_counter() - start) * 1e3)
        loss_fn(out, targets).backward()
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.step()
        step.append((time.perf_counter() - start) * 1e3)
    med = statistics.median
    print("conv net, batch %d: step %.3f ms wall, %.3f ms host CPU; host time of the "
          "forward pass %.3f ms, of optimizer.step() %.3f ms"
          % (batch, med(wall), med(cpu), med(forward), med(step)), flush=True)


def main():
    if not torch.cuda.is_available():
        sys.exit("profiler_overhead.py: needs a CUDA GPU")
    print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
    per_op_costs()
    for batch in (256, 2):
        conv_host_time(batch)


if __name__ == "__main__":
    main()
