#!/usr/bin/python3
"""Records pp2_2r: 2 CPU ranks (gloo) as two pipeline stages, ET + profiler trace per rank.

A two-layer MLP split over two stages: stage 0 (rank 0) runs the first layer
and sends its activations to stage 1 (rank 1) with dist.send; stage 1 runs the
second layer and the loss, and sends the activations' gradient back; each
stage steps its own optimizer. One micro-batch per step, no data parallelism.

PyTorch 1.13's execution-trace observer writes no process-group table; this
script adds the `## process_group:init ##` node that PyTorch 2.1+ records,
filled from the groups this process created (names as PyTorch numbers them,
Megatron's descriptions, member ranks), and writes `pid` and
`distributedInfo` into the profiler trace as examples/record_trace.py does.
Nothing else is changed. Run: /usr/bin/python3 record_pp.py OUT_DIR
"""
import json, os, sys
import torch, torch.nn as nn, torch.distributed as dist
# The group table node, added the way examples/record_trace.py adds it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples"))
from record_trace import add_group_table  # noqa: E402

WORLD, STEPS, BATCH, DIM, HIDDEN = 2, 3, 16, 64, 256


def step(rank, layer, opt, x, y):
    opt.zero_grad()
    if rank == 0:
        h = torch.relu(layer(x))
        dist.send(h.detach(), 1)
        g = torch.empty_like(h); dist.recv(g, 1)
        h.backward(g)
    else:
        h = torch.empty(BATCH, HIDDEN); dist.recv(h, 0); h.requires_grad_()
        loss = nn.functional.mse_loss(layer(h), y)
        loss.backward()
        dist.send(h.grad, 0)
    opt.step()


def run(rank, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29541"
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    table = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo",
              "ranks": [], "group_size": WORLD}]
    # Every rank creates every group, in one order (PyTorch's rule).
    specs = [("PIPELINE_MODEL_PARALLEL_GROUP", [0, 1])]
    specs += [("DATA_PARALLEL_GROUP", [r]) for r in range(WORLD)]
    for number, (desc, ranks) in enumerate(specs, start=1):
        dist.new_group(ranks)
        if rank in ranks:
            table.append({"pg_name": str(number), "pg_desc": desc,
                          "backend_config": "cpu:gloo", "ranks": ranks,
                          "group_size": len(ranks)})
    torch.manual_seed(0)
    layer = nn.Linear(DIM, HIDDEN) if rank == 0 else nn.Linear(HIDDEN, DIM)
    opt = torch.optim.SGD(layer.parameters(), lr=0.01)
    x = torch.randn(BATCH, DIM); y = torch.randn(BATCH, DIM)
    step(rank, layer, opt, x, y)  # warm-up
    tag = os.path.join(out, "pp2_2r")
    eg = torch.profiler.ExecutionGraphObserver()
    eg.register_callback(f"{tag}_et_r{rank}.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True) as prof:
        eg.start()
        for s in range(STEPS):
            with torch.profiler.record_function(f"ProfilerStep#{s}"):
                step(rank, layer, opt, x, y)
        eg.stop()
    eg.unregister_callback()
    prof.export_chrome_trace(f"{tag}_kineto_r{rank}.json")
    dist.destroy_process_group()
    add_group_table(f"{tag}_et_r{rank}.json", table)
    with open(f"{tag}_kineto_r{rank}.json") as f: doc = json.load(f)
    if isinstance(doc, list): doc = {"traceEvents": doc}
    doc["pid"] = os.getpid(); doc["distributedInfo"] = {"rank": rank, "world_size": WORLD}
    with open(f"{tag}_kineto_r{rank}.json", "w") as f: json.dump(doc, f)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    torch.multiprocessing.spawn(run, args=(out,), nprocs=WORLD)
