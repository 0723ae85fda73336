# Records the pairs in this folder: one model once on 1 rank without DDP and
# once under DistributedDataParallel (gloo, CPU) on N ranks, same steps, batch
# and seed. Based on ../pytorch-1.13-cpu/ddp.py (the shared ddp_mlp run).
#   /usr/bin/python3 record_dp.py mlp 1      -> mlp_1r_et.json
#   /usr/bin/python3 record_dp.py wide 1     -> wide_1r_et.json
#   /usr/bin/python3 record_dp.py wide 2     -> wide_ddp2_et_r{0,1}.json
# then gzip -9 -n. torch 1.13 CPU (Debian python3-torch).
import os, sys, torch, torch.nn as nn, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def mlp():  # ddp.py's model: 82,689 float32 parameters, 330,756 bytes
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256),
                         nn.ReLU(), nn.Linear(256, 1))

def wide():  # ~36 MiB of float32 parameters: several 25 MiB DDP buckets
    layers = [nn.Linear(64, 1024), nn.ReLU()]
    for _ in range(8):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(1024, 1))

def run(rank, world, tag, model_fn, steps=3, bs=32, dim=64):
    if world > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = model_fn()
    if world > 1:
        model = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01); crit = nn.MSELoss()
    x = torch.randn(bs, dim); y = torch.randn(bs, 1)
    name = f"{tag}_et_r{rank}.json" if world > 1 else f"{tag}_et.json"
    eg = torch.profiler.ExecutionGraphObserver(); eg.register_callback(name)
    eg.start()
    for s in range(steps):
        with torch.profiler.record_function(f"## step_{s} ##"):
            out = model(x); loss = crit(out, y); opt.zero_grad(); loss.backward(); opt.step()
    eg.stop()
    eg.unregister_callback()
    if world > 1:
        dist.destroy_process_group()

if __name__ == "__main__":
    kind, world = sys.argv[1], int(sys.argv[2])
    fn = {"mlp": mlp, "wide": wide}[kind]
    tag = f"{kind}_1r" if world == 1 else f"{kind}_ddp{world}"
    if world == 1:
        run(0, 1, tag, fn)
    else:
        torch.multiprocessing.spawn(run, args=(world, tag, fn), nprocs=world)
