"""Times torch.distributed all_reduce over gloo on one host (TCP loopback).

The figures of et-sim's HOST-GLOO platform (docs/collective-model.md) come
from this run: for 2 and 4 processes, float32 tensors of 4 KiB to 64 MiB, the
median of 20 timed calls after 5 warm-up calls, each call timed on every rank
and the slowest rank taken (a collective ends when its last member does).

Usage: /usr/bin/python3 examples/gloo_allreduce_bench.py [--ranks 2 4]
Prints one CSV row per (ranks, bytes): ranks,bytes,median_us,min_us.
"""
import argparse
import os
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES_BYTES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
WARMUP, ITERS = 5, 20


def worker(rank, world, init_file, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + init_file,
                            rank=rank, world_size=world)
    for size in SIZES_BYTES:
        t = torch.ones(size // 4, dtype=torch.float32)
        times = []
        for i in range(WARMUP + ITERS):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            elapsed = time.perf_counter() - start
            if i >= WARMUP:
                times.append(elapsed * 1e6)
        gathered = [None] * world
        dist.all_gather_object(gathered, times)
        if rank == 0:
            slowest = [max(col) for col in zip(*gathered)]
            out.put((world, size, statistics.median(slowest), min(slowest)))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args()
    print("ranks,bytes,median_us,min_us")
    ctx = mp.get_context("spawn")
    for world in args.ranks:
        with tempfile.TemporaryDirectory() as d:
            out = ctx.Queue()
            init = os.path.join(d, "init")
            procs = [ctx.Process(target=worker, args=(r, world, init, out))
                     for r in range(world)]
            for p in procs:
                p.start()
            for _ in SIZES_BYTES:
                w, size, med, low = out.get()
                print(f"{w},{size},{med:.1f},{low:.1f}", flush=True)
            for p in procs:
                p.join()


if __name__ == "__main__":
    main()
