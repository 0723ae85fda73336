#!/usr/bin/python3
"""Records tp_dp_4r: 4 CPU ranks (gloo) as tp=2 x dp=2, ET + profiler trace per rank.

A two-layer MLP split Megatron-style over the tensor-parallel pair (column-
parallel first layer, row-parallel second, their all-reduces on the tp group
made by dist.new_group), wrapped in DDP over the data-parallel pair. Ranks are
placed as Megatron places them: tp innermost (tp groups [0,1] [2,3], dp groups
[0,2] [1,3]).

PyTorch 1.13's execution-trace observer writes no process-group table (2.1+
writes a `## process_group:init ##` node); this script adds that node to each
rank's ET after the run, filled from the groups this process created (names
as PyTorch numbers them, Megatron's descriptions, member ranks), and writes
`distributedInfo` into the profiler trace as record_trace.py does. Nothing
else is changed. Run: /usr/bin/python3 record_tp_dp.py OUT_DIR
"""
import gzip, json, os, sys
import torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
# The group table node, added the way examples/record_trace.py adds it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples"))
from record_trace import add_group_table  # noqa: E402

WORLD, TP, STEPS, BATCH, DIM, HIDDEN = 4, 2, 3, 16, 64, 256


class _ReduceFromTp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        x = x.clone(); dist.all_reduce(x, group=group); return x

    @staticmethod
    def backward(ctx, g):
        return g, None


class _CopyToTp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group; return x

    @staticmethod
    def backward(ctx, g):
        g = g.clone(); dist.all_reduce(g, group=ctx.group); return g, None


class TpMlp(nn.Module):
    def __init__(self, tp_group):
        super().__init__()
        self.group = tp_group
        self.fc1 = nn.Linear(DIM, HIDDEN // TP)               # column-parallel
        self.fc2 = nn.Linear(HIDDEN // TP, DIM, bias=False)   # row-parallel
        self.head = nn.Linear(DIM, 1)

    def forward(self, x):
        h = torch.relu(self.fc1(_CopyToTp.apply(x, self.group)))
        return self.head(_ReduceFromTp.apply(self.fc2(h), self.group))


def run(rank, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29537"
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    table = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cpu:gloo",
              "ranks": [], "group_size": WORLD}]
    tp_group = dp_group = None
    # Every rank creates every group, in one order (PyTorch's rule); names
    # are PyTorch's counter.
    specs = [("TENSOR_MODEL_PARALLEL_GROUP", [b, b + 1]) for b in range(0, WORLD, TP)]
    specs += [("DATA_PARALLEL_GROUP", list(range(t, WORLD, TP))) for t in range(TP)]
    for desc, ranks in specs:
        g = dist.new_group(ranks)
        if rank in ranks:
            table.append({"pg_name": str(len(table)), "pg_desc": desc,
                          "backend_config": "cpu:gloo", "ranks": ranks,
                          "group_size": len(ranks)})
            if desc.startswith("TENSOR"): tp_group = g
            else: dp_group = g
    torch.manual_seed(rank // TP)  # tp shards differ, dp replicas agree
    model = DDP(TpMlp(tp_group), process_group=dp_group)
    opt = torch.optim.SGD(model.parameters(), lr=0.01); crit = nn.MSELoss()
    x = torch.randn(BATCH, DIM); y = torch.randn(BATCH, 1)
    tag = os.path.join(out, "tp_dp_4r")
    eg = torch.profiler.ExecutionGraphObserver(); eg.register_callback(f"{tag}_et_r{rank}.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                record_shapes=True) as prof:
        eg.start()
        for s in range(STEPS):
            with torch.profiler.record_function(f"ProfilerStep#{s}"):
                out_ = model(x); loss = crit(out_, y)
                opt.zero_grad(); loss.backward(); opt.step()
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
