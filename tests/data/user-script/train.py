"""A user's own training script (not record_trace.py): a conv stem and a
TransformerEncoderLayer over the resulting tokens, SGD, cross-entropy, recorded
with examples/et_record.py as examples/README.md shows. One rank:
    python3 train.py out/one
Two DDP ranks over gloo, started with mp.spawn:
    python3 train.py out/ddp 2
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../examples"))
import et_record  # noqa: E402


class Net(nn.Module):
    def __init__(self, width=32, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, width, kernel_size=4, stride=4)
        self.encoder = nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=64,
                                                  batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        tokens = self.stem(x).flatten(2).transpose(1, 2)  # (batch, 64, width)
        return self.head(self.encoder(tokens).mean(dim=1))


def main(rank, world, out):
    if world > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29561")
        dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = Net()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))

    def train_step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    with et_record.Recorder(out + "_et_r{rank}.json", out + "_kineto_r{rank}.json",
                            light_out=out + "_light_r{rank}.json", steps=3) as rec:
        rec.run(train_step)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    if ranks > 1:
        mp.spawn(main, args=(ranks, sys.argv[1]), nprocs=ranks)
    else:
        main(0, 1, sys.argv[1])
