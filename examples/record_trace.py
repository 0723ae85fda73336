#!/usr/bin/env python3
"""Records a PyTorch execution trace (ET) and its Kineto/profiler trace for a small model.

The ET comes from the execution-trace observer: torch.profiler.ExecutionTraceObserver in
PyTorch 2.x, ExecutionGraphObserver in PyTorch 1.13. The Kineto trace comes from
torch.profiler (export_chrome_trace); on builds without Kineto (e.g. Debian's python3-torch)
it is the legacy profiler's Chrome trace. Both cover the same steps, so et-convert can link
them.

Single process:
    python3 record_trace.py --model mlp --steps 3 --et-out mlp_et.json --kineto-out mlp_kineto.json
Several ranks (one ET and one Kineto trace per rank; {rank} in a path is replaced):
    torchrun --nproc_per_node=2 record_trace.py --model gpt --steps 2 \
        --et-out gpt_et_rank{rank}.json --kineto-out gpt_kineto_rank{rank}.json

Without torchrun (or where it is broken, as in Debian's torch 1.13 on Python 3.11), --spawn N
starts N local ranks itself (gloo on CPU, NCCL on GPUs):
    python3 record_trace.py --spawn 4 --et-out mlp_et_r{rank}.json --kineto-out mlp_kineto_r{rank}.json

Tensor parallelism (--tp T, Megatron-style; the world is T x dp, tp innermost): the MLP's
layers become --tp-layers pairs of a column-parallel and a row-parallel linear layer, with
one all-reduce in the tensor-parallel group per pair in the forward pass and one in the
backward; dp > 1 wraps the model in DDP over the data-parallel group. An 8-rank TP8 run:
    python3 record_trace.py --spawn 8 --tp 8 --et-out tp8_et_r{rank}.json \
        --kineto-out tp8_kineto_r{rank}.json
Expert parallelism (--ep E, --model moe; the world is E ranks): each rank holds
--experts / E experts; the routed tokens go to their expert's rank with all_to_all_single
(dispatch) and come back with a second one (combine), after the tokens per expert are
exchanged with a first; the backward pass sends the gradients the same way, and the router's
gradients are averaged with one all-reduce. Every rank draws the one-rank run's tokens, so
the routing (and every split) is the one-rank run's (tests/data/ep-synth):
    python3 record_trace.py --spawn 2 --ep 2 --model moe --et-out moe2_et_r{rank}.json \
        --kineto-out moe2_kineto_r{rank}.json
PyTorch 1.13 records no process-group table; --tp (and --ep) adds the `## process_group:init ##` node
that 2.1+ records (the groups this run created, with Megatron's descriptions) to the ET. Nor
does it record the group of each collective: every collective call here runs inside a
`## pg_name:<name> ##` annotation that et-convert reads (on_group below; the recipe for a
script of your own is in examples/README.md).

Then: et-convert mlp_et.json mlp.et   (see examples/README.md)
"""

import argparse
import contextlib
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import et_record  # noqa: E402  the recipe every recording here runs through
from et_record import (activities as _activities, host_cpu, make_et_observer,  # noqa: E402,F401 (host_cpu: tests/gpu)
                       minor_faults, on_group)


# ---- Models --------------------------------------------------------------------------


class Mlp(nn.Module):
    """Three linear layers with ReLU: addmm / relu / mse_loss in the trace."""

    def __init__(self, width):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(width, 4 * width), nn.ReLU(),
            nn.Linear(4 * width, 4 * width), nn.ReLU(),
            nn.Linear(4 * width, width))

    def forward(self, x):
        return self.layers(x)


class GptBlock(nn.Module):
    """One pre-norm decoder block (causal self-attention + MLP), written out with
    matmul/softmax so that it records the same ops on PyTorch 1.13 and 2.x."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (c // self.heads) ** 0.5
        causal = torch.ones(t, t, device=x.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        y = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.norm2(x))


class TinyGpt(nn.Module):
    def __init__(self, vocab, width, heads, context):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.block = GptBlock(width, heads)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        return self.head(self.norm(self.block(self.tokens(idx) + self.positions(pos))))


class RnnLm(nn.Module):
    """An embedding / recurrent language model: token embedding, a one-layer LSTM over
    --seq steps and a linear head (embedding, lstm, embedding_dense_backward in the
    trace). On the CPU the LSTM is one op with many nested ones per time step."""

    def __init__(self, vocab, width):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        return self.head(self.lstm(self.tokens(idx))[0])


# ---- Process-group markers -------------------------------------------------------------
#
# PyTorch 1.13 records no process group per collective (its c10d calls take the group as an
# opaque `<Object>`), and 2.x names one only in `record_param_comms`, which 2.11 over gloo does
# not record (tests/data/torch2-cpu). et-convert then
# puts every collective on the whole world. A record_function named `## pg_name:<name> ##`
# around a collective call says which group it ran on: the ET records the annotation as the
# collective's parent, and et-convert gives each collective the group of its nearest such
# ancestor (a group PyTorch records itself wins). <name> is the group's name in the
# `## process_group:init ##` table: PyTorch's own name for the group (below).


def marked_allreduce_hook(process_group, bucket):
    """DDP's default gradient all-reduce (divide by the group's size, all-reduce the
    bucket), marked with its group: DDP's built-in hook runs in C++, where no Python
    annotation reaches."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    with on_group(process_group):
        return default_hooks.allreduce_hook(process_group, bucket)


class _CopyToTp(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the input gradient backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        with on_group(ctx.group):
            torch.distributed.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTp(torch.autograd.Function):
    """Megatron's g: all-reduce of the partial sums forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        with on_group(group):
            torch.distributed.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class TpMlp(nn.Module):
    """Megatron's parallel MLP, `layers` times: a column-parallel linear layer (width ->
    4 x width / tp), ReLU, a row-parallel one (4 x width / tp -> width, its bias added
    after the all-reduce), one all-reduce in the tensor-parallel group each way."""

    def __init__(self, width, layers, tp, group):
        super().__init__()
        self.group = group
        self.column = nn.ModuleList(nn.Linear(width, 4 * width // tp) for _ in range(layers))
        self.row = nn.ModuleList(nn.Linear(4 * width // tp, width, bias=False)
                                 for _ in range(layers))
        self.row_bias = nn.ParameterList(nn.Parameter(torch.zeros(width))
                                         for _ in range(layers))

    def forward(self, x):
        for column, row, bias in zip(self.column, self.row, self.row_bias):
            if self.group is None:  # tp=1 (--model tpmlp): f and g are identities
                x = row(torch.relu(column(x))) + bias
                continue
            h = torch.relu(column(_CopyToTp.apply(x, self.group)))
            x = _ReduceFromTp.apply(row(h), self.group) + bias
        return x


class ConvNet(nn.Module):
    """A small CNN: two conv / batch-norm / ReLU / max-pool stages and a linear
    classifier (conv2d, batch_norm, max_pool2d, cross_entropy in the trace)."""

    def __init__(self, width, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width),
            nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(2 * width * 8 * 8, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class _AllToAll(torch.autograd.Function):
    """all_to_all_single of rows: `in_splits[r]` rows of x go to rank r, `out_splits[r]`
    come from it; the backward pass sends the gradients back the same way (GShard's
    dispatch / combine, and their gradients)."""

    @staticmethod
    def forward(ctx, x, out_splits, in_splits, group):
        ctx.group, ctx.out_splits, ctx.in_splits = group, out_splits, in_splits
        out = x.new_empty((sum(out_splits), x.shape[1]))
        with on_group(group):
            torch.distributed.all_to_all_single(out, x.contiguous(), out_splits, in_splits,
                                                group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_empty((sum(ctx.in_splits), grad.shape[1]))
        with on_group(ctx.group):
            torch.distributed.all_to_all_single(out, grad.contiguous(), ctx.in_splits,
                                                ctx.out_splits, group=ctx.group)
        return out, None, None, None


class MoeBlock(nn.Module):
    """A mixture-of-experts layer over tokens: a linear router, softmax, top-2 of
    --experts expert MLPs per token; each expert gathers its tokens, runs them and adds
    them back weighted (topk, nonzero, index_select, index_add in the trace). Finding an
    expert's tokens waits for the GPU (nonzero), as data-dependent routing does.

    With an expert-parallel group of ep ranks (--ep), this rank holds experts
    [rank x experts/ep, (rank + 1) x experts/ep); every expert's tokens are gathered
    here as at one rank, sent to their expert's rank with one all_to_all_single
    (dispatch), run there, and sent back with a second (combine), after the counts per
    expert are exchanged with a first all_to_all_single; the backward pass runs the
    two the other way. The router (the dense parameters) is replicated: its gradients
    are all-reduced over the group after the backward pass (sync_dense_grads)."""

    def __init__(self, width, experts, top_k=2, ep=1, group=None, rank=0):
        super().__init__()
        self.top_k, self.num_experts, self.ep, self.group = top_k, experts, ep, group
        self.router = nn.Linear(width, experts)
        # Every rank draws every expert's weights (the one-rank run's), then keeps its own.
        every = [nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                               nn.Linear(4 * width, width)) for _ in range(experts)]
        self.local = experts // ep
        self.first = rank * self.local if group is not None else 0
        self.experts = nn.ModuleList(every[self.first:self.first + self.local])

    def forward(self, x):
        weights, chosen = self.router(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        if self.group is None:
            out = torch.zeros_like(x)
            for e, expert in enumerate(self.experts):
                token, slot = torch.nonzero(chosen == e, as_tuple=True)
                y = expert(x.index_select(0, token)) * weights[token, slot].unsqueeze(1)
                out = out.index_add(0, token, y)
            return x + out
        return x + self.expert_parallel(x, weights, chosen)

    def expert_parallel(self, x, weights, chosen):
        routed = [torch.nonzero(chosen == e, as_tuple=True) for e in range(self.num_experts)]
        counts = [int(token.numel()) for token, _ in routed]
        send = torch.cat([x.index_select(0, token) for token, _ in routed])
        # Tokens per expert from each rank (for this rank's experts): [ep, local].
        got = torch.empty(self.num_experts, dtype=torch.int64)
        with on_group(self.group):
            torch.distributed.all_to_all_single(got, torch.tensor(counts), group=self.group)
        got = got.view(self.ep, self.local).tolist()
        in_splits = [sum(counts[r * self.local:(r + 1) * self.local]) for r in range(self.ep)]
        out_splits = [sum(row) for row in got]
        received = _AllToAll.apply(send, out_splits, in_splits, self.group)
        # Rows of local expert j: in each source rank's block, after experts < j.
        results = torch.zeros_like(received)
        starts = [sum(out_splits[:r]) for r in range(self.ep)]
        for j, expert in enumerate(self.experts):
            rows = torch.cat([torch.arange(starts[r] + sum(got[r][:j]),
                                           starts[r] + sum(got[r][:j + 1]))
                              for r in range(self.ep)])
            results = results.index_add(0, rows, expert(received.index_select(0, rows)))
        back = _AllToAll.apply(results, in_splits, out_splits, self.group)
        out = torch.zeros_like(x)
        for (token, slot), y in zip(routed, back.split(counts)):
            out = out.index_add(0, token, y * weights[token, slot].unsqueeze(1))
        return out

    def sync_dense_grads(self):
        """The replicated router's gradients, averaged over the expert-parallel group
        (one flat all-reduce, as DDP's one bucket would)."""
        if self.group is None:
            return
        grads = [p.grad for p in self.router.parameters()]
        flat = torch.cat([g.reshape(-1) for g in grads])
        with on_group(self.group):
            torch.distributed.all_reduce(flat, group=self.group)
        flat /= self.ep
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()


def make_model_and_batch(args, device, tp_group=None, ep_group=None, rank=0):
    """Returns (model, inputs, targets, loss_fn)."""
    if tp_group is not None or args.model == "tpmlp":
        model = TpMlp(args.width, args.tp_layers, args.tp, tp_group)
        x = torch.randn(args.batch, args.width)
        y = torch.randn(args.batch, args.width)
        return model.to(device), x.to(device), y.to(device), nn.MSELoss()
    if args.model == "mlp":
        model = Mlp(args.width)
        x = torch.randn(args.batch, args.width)
        y = torch.randn(args.batch, args.width)
        return model.to(device), x.to(device), y.to(device), nn.MSELoss()
    if args.model == "moe":
        model = MoeBlock(args.width, args.experts, ep=args.ep, group=ep_group,
                         rank=rank % args.ep)
        x = torch.randn(args.batch * args.seq, args.width)
        y = torch.randn(args.batch * args.seq, args.width)
        return model.to(device), x.to(device), y.to(device), nn.MSELoss()
    if args.model == "conv":
        model = ConvNet(args.width)
        x = torch.randn(args.batch, 3, 32, 32)
        y = torch.randint(0, 10, (args.batch,))
        return model.to(device), x.to(device), y.to(device), nn.CrossEntropyLoss()
    vocab, context = 512, args.seq
    if args.model == "rnn":
        model = RnnLm(vocab, args.width)
    else:
        model = TinyGpt(vocab, args.width, args.heads, context)
    idx = torch.randint(0, vocab, (args.batch, context))
    targets = torch.randint(0, vocab, (args.batch, context))

    def loss_fn(logits, tgt):
        return nn.functional.cross_entropy(logits.reshape(-1, vocab), tgt.reshape(-1))

    return model.to(device), idx.to(device), targets.to(device), loss_fn


# ---- Observer and distributed set-up ---------------------------------------------------


def init_distributed(device):
    """Initialises torch.distributed when run under torchrun; returns (rank, world_size)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return 0, 1
    import torch.distributed as dist
    backend = "nccl" if device.type == "cuda" else "gloo"
    dist.init_process_group(backend=backend)
    return dist.get_rank(), world_size


def make_tp_dp_groups(rank, world_size, tp, backend):
    """Megatron's groups (tp innermost: tp groups of consecutive ranks, dp groups strided
    by tp), created by every rank in one order as PyTorch requires. Returns (tp_group,
    dp_group, table): table is the `## process_group:init ##` rows of this rank's groups,
    named as PyTorch numbers them."""
    import torch.distributed as dist
    table = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": backend,
              "ranks": [], "group_size": world_size}]
    specs = [("TENSOR_MODEL_PARALLEL_GROUP", list(range(b, b + tp)))
             for b in range(0, world_size, tp)]
    specs += [("DATA_PARALLEL_GROUP", list(range(t, world_size, tp))) for t in range(tp)]
    groups = {}
    for number, (desc, ranks) in enumerate(specs, start=1):
        group = dist.new_group(ranks)
        if rank in ranks:
            table.append({"pg_name": str(number), "pg_desc": desc, "backend_config": backend,
                          "ranks": ranks, "group_size": len(ranks)})
            groups[desc] = group
    return groups["TENSOR_MODEL_PARALLEL_GROUP"], groups["DATA_PARALLEL_GROUP"], table


def make_ep_group(rank, world_size, ep, backend):
    """The expert-parallel groups (consecutive ranks, as Megatron places ep inside dp;
    this recorder runs dp = 1, so the one group is the world). Returns (ep_group,
    table), table as make_tp_dp_groups's."""
    import torch.distributed as dist
    table = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": backend,
              "ranks": [], "group_size": world_size}]
    group = None
    for number, base in enumerate(range(0, world_size, ep), start=1):
        ranks = list(range(base, base + ep))
        made = dist.new_group(ranks)
        if rank in ranks:
            table.append({"pg_name": str(number), "pg_desc": "EXPERT_MODEL_PARALLEL_GROUP",
                          "backend_config": backend, "ranks": ranks, "group_size": ep})
            group = made
    return group, table


# ---- Recording -------------------------------------------------------------------------


def train_step(model, optimizer, inputs, targets, loss_fn, dp_group=None):
    optimizer.zero_grad()
    # DDP's forward broadcasts (buffers, the join check) run on its group; the
    # tensor-parallel all-reduces inside carry their own, nearer, marker.
    with on_group(dp_group) if dp_group is not None else contextlib.nullcontext():
        out = model(inputs)
    loss = loss_fn(out, targets)
    loss.backward()
    if isinstance(model, MoeBlock):
        model.sync_dense_grads()
    optimizer.step()
    return loss


# ---- Memory truth (docs/memory-model.md) ----------------------------------------------

COUNTER_ENV = "RECORD_TRACE_ALLOC_COUNTER"


def cpu_alloc_counter():
    """This process's preloaded cpu_alloc_counter library (the bytes c10's CPU
    allocator holds), or None when the run was not started with it."""
    path = os.environ.get(COUNTER_ENV)
    if not path or path not in os.environ.get("LD_PRELOAD", ""):
        return None
    lib = ctypes.CDLL(path)
    for name in ("alloc_counter_live_bytes", "alloc_counter_peak_bytes"):
        getattr(lib, name).restype = ctypes.c_uint64
    return lib


def preload_alloc_counter():
    """Re-executes this script with cpu_alloc_counter.so (built here from
    cpu_alloc_counter.c with the system C compiler) in LD_PRELOAD, so that a CPU run
    can measure the bytes its training step allocates. Returns, and the recording
    goes on without a memory truth, when there is no C compiler or the build fails."""
    if COUNTER_ENV in os.environ:
        return  # already tried: no loop
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_alloc_counter.c")
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None or not os.path.exists(source):
        print("record_trace.py: note: no C compiler: the CPU memory truth is not measured",
              file=sys.stderr)
        return
    lib = os.path.join(tempfile.gettempdir(), "record_trace_alloc_counter_%d.so" % os.getuid())
    tmp = "%s.%d.tmp" % (lib, os.getpid())
    built = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", tmp, source, "-ldl",
                            "-lpthread"], capture_output=True, text=True)
    if built.returncode != 0:
        print("record_trace.py: note: building cpu_alloc_counter.so failed, the CPU memory "
              "truth is not measured:\n" + built.stderr, file=sys.stderr)
        return
    os.replace(tmp, lib)
    env = dict(os.environ)
    env[COUNTER_ENV] = lib
    env["LD_PRELOAD"] = (lib + " " + env.get("LD_PRELOAD", "")).strip()
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def measure_step_memory(model, optimizer, inputs, targets, loss_fn, device,
                        dp_group=None):
    """The memory truth: one training step run without a profiler, as (peak bytes the
    allocator held during it, bytes it held when the step began), or None when this run
    cannot measure it. On a GPU, torch.cuda's allocated-bytes counters (block sizes, as the
    caching allocator rounds them); on a CPU, the requested bytes of c10's live
    allocations, counted by the preloaded cpu_alloc_counter."""
    if device.type == "cuda":
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        train_step(model, optimizer, inputs, targets, loss_fn, dp_group)
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated(device), start
    counter = cpu_alloc_counter()
    if counter is None:
        return None
    start = counter.alloc_counter_live_bytes()
    counter.alloc_counter_reset_peak()
    train_step(model, optimizer, inputs, targets, loss_fn, dp_group)
    return counter.alloc_counter_peak_bytes(), start


# ---- What the profiler costs per op (docs/step-model.md) --------------------------------

# Probe ops: a leaf that computes nothing (one tensor input), a leaf with tiny compute (two),
# a leaf with a list of 8 tensors (what the observer serialises grows), and an op with
# nested ops (linear: t, transpose, as_strided, addmm). Tiny tensors: the time is the op's
# dispatch and what the instruments add, not compute.
CALIBRATION_CALLS = 400
CALIBRATION_REPEATS = 3


def calibration_probes():
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    parts = [torch.randn(4) for _ in range(8)]
    return [("view", lambda: x.view(-1)), ("add", lambda: torch.add(x, x)),
            ("cat8", lambda: torch.cat(parts)),
            ("linear", lambda: nn.functional.linear(x, w))]


def _time_probes(probes):
    """Best of CALIBRATION_REPEATS loops of CALIBRATION_CALLS calls, in us per call."""
    times = {}
    for name, call in probes:
        best = float("inf")
        for _ in range(CALIBRATION_REPEATS):
            start = time.perf_counter()
            for _ in range(CALIBRATION_CALLS):
                call()
            best = min(best, time.perf_counter() - start)
        times[name] = best * 1e6 / CALIBRATION_CALLS
    return times


def measure_profiler_cost():
    """Per probe op, the time of one call with no instrument, under the light profiler
    (CPU, no shapes), under the ET observer alone and under both with shapes (what a
    recording pays), on this host and thread count: stored as `profiler_calibration` in
    the Kineto trace. Also the ops the profiler saw per call (nesting)."""
    probes = calibration_probes()
    _time_probes(probes)  # warm the dispatcher and allocator
    result = {"calls": CALIBRATION_CALLS, "repeats": CALIBRATION_REPEATS,
              "threads": torch.get_num_threads(), "torch": torch.__version__,
              "none_us": _time_probes(probes)}
    cpu = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=cpu, record_shapes=False):
        result["light_us"] = _time_probes(probes)
    with tempfile.TemporaryDirectory() as tmp:
        observer = make_et_observer()
        observer.register_callback(os.path.join(tmp, "observer.json"))
        observer.start()
        result["observer_us"] = _time_probes(probes)
        observer.stop()
        observer.unregister_callback()
        observer = make_et_observer()
        observer.register_callback(os.path.join(tmp, "full.json"))
        with torch.profiler.profile(activities=cpu, record_shapes=True):
            observer.start()
            result["full_us"] = _time_probes(probes)
            observer.stop()
        observer.unregister_callback()
    per_probe_ops = {}
    for name, call in probes:
        with torch.profiler.profile(activities=cpu, record_shapes=False) as prof:
            call()
        per_probe_ops[name] = len(prof.events())
    result["ops_per_call"] = per_probe_ops
    for key in ("none_us", "light_us", "observer_us", "full_us"):
        result[key] = {k: round(v, 3) for k, v in result[key].items()}
    return result


def thread_probes(device):
    """What the light profiler costs where a training step pays it, on the recording's
    device: a forward op that only dispatches, one that launches, a backward of 16 ops
    that the autograd engine's thread runs, and (on a GPU) a CUDA API call that is no
    op (an event record)."""
    x = torch.randn(64, device=device)
    w = torch.randn(64, device=device, requires_grad=True)

    def backward16():
        y = w
        for _ in range(16):
            y = y * 1.0001
        y.sum().backward()

    probes = [("view", lambda: x.view(-1)), ("add_", lambda: x.add_(1)),
              ("backward16", backward16)]
    if device.type == "cuda":
        event = torch.cuda.Event()
        probes.append(("event_record", lambda: event.record()))
    return probes


def _probe_counts(probes, device):
    """Per probe call: host ops on the calling thread, host ops on other threads (the
    autograd engine's), and CUDA API calls, as the light profiler sees them."""
    counts = {}
    for name, call in probes:
        with torch.profiler.profile(activities=_activities(device),
                                    record_shapes=False) as prof:
            call()
        ops = [e for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CPU]
        api = [e for e in ops if e.name.startswith("cu")]
        host = [e for e in ops if not e.name.startswith("cu")]
        # The calling thread runs the call's first op.
        main = min(host, key=lambda e: e.time_range.start).thread if host else None
        same = [e for e in host if e.thread == main]
        counts[name] = {"ops": len(same), "autograd_ops": len(host) - len(same),
                        "api_calls": len(api)}
    return counts


def measure_profiler_by_thread(device):
    """The light profiler (the recording's activities) on thread_probes: us per call
    without it and under it, and what each call holds (stored as
    `light_profiler_by_thread`; docs/step-model.md, "GPU models kept aside")."""
    probes = thread_probes(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    _time_probes(probes)
    sync()
    result = {"device": str(device), "calls": CALIBRATION_CALLS,
              "repeats": CALIBRATION_REPEATS, "none_us": _time_probes(probes)}
    sync()
    with torch.profiler.profile(activities=_activities(device), record_shapes=False):
        result["light_us"] = _time_probes(probes)
        sync()
    result["per_call"] = _probe_counts(probes, device)
    for key in ("none_us", "light_us"):
        result[key] = {k: round(v, 3) for k, v in result[key].items()}
    return result


PAGE_FAULT_BYTES = 64 << 20
PAGE_FAULT_REPEATS = 5


def measure_page_fault_cost():
    """What one minor page fault costs on this host: a fresh anonymous mapping of 4 KiB
    pages is written twice; the first pass pays a fault per page, the second does not,
    so their difference over the faults counted is the cost of one (median of
    PAGE_FAULT_REPEATS). et-sim adds the unprofiled run's extra faults at this cost
    (docs/step-model.md, "Page faults"). Huge pages are refused for the mapping: a
    program's heap faults 4 KiB pages unless the host forces huge pages, which is
    stored beside the cost."""
    import mmap
    costs, faults = [], 0
    for _ in range(PAGE_FAULT_REPEATS):
        region = mmap.mmap(-1, PAGE_FAULT_BYTES)
        if hasattr(mmap, "MADV_NOHUGEPAGE"):
            region.madvise(mmap.MADV_NOHUGEPAGE)
        view = torch.frombuffer(region, dtype=torch.uint8)
        before = minor_faults()
        start = time.perf_counter()
        view.fill_(1)
        first = time.perf_counter()
        faults = minor_faults() - before
        view.fill_(2)
        second = time.perf_counter()
        del view
        region.close()
        if faults > 0:
            costs.append(((first - start) - (second - first)) * 1e9 / faults)
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        thp = "unknown"
    return {"ns_per_fault": round(statistics.median(costs), 1) if costs else 0.0,
            "faults": faults, "bytes": PAGE_FAULT_BYTES, "repeats": PAGE_FAULT_REPEATS,
            "transparent_hugepage": thp}


def spawned_rank(local_rank, args):
    """Entry point of a rank started by --spawn: sets what torchrun would set."""
    os.environ.update({"RANK": str(local_rank), "LOCAL_RANK": str(local_rank),
                       "WORLD_SIZE": str(args.spawn)})
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    record(args)


def record(args):
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if device.type == "cuda":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    rank, world_size = init_distributed(device)
    tp_group, dp_group, group_table = None, None, None
    if args.tp > 1:
        if world_size % args.tp:
            sys.exit("record_trace.py: error: --tp %d does not divide the world of %d ranks" %
                     (args.tp, world_size))
        backend = "cuda:nccl" if device.type == "cuda" else "cpu:gloo"
        tp_group, dp_group, group_table = make_tp_dp_groups(rank, world_size, args.tp,
                                                            backend)
    ep_group = None
    if args.ep > 1:
        backend = "cuda:nccl" if device.type == "cuda" else "cpu:gloo"
        ep_group, group_table = make_ep_group(rank, world_size, args.ep, backend)
    # A tensor-parallel group sees the same batch; its shards' weights differ. An
    # expert-parallel group's ranks draw the same tokens too (the one-rank run's): the
    # routing, and with it every all-to-all's split, is then the one-rank run's.
    torch.manual_seed(args.seed + rank // max(args.tp, args.ep, 1))

    model, inputs, targets, loss_fn = make_model_and_batch(args, device, tp_group,
                                                           ep_group, rank)
    dp_marker = None  # the group DDP's forward broadcasts run on, when DDP wraps the model
    if world_size > max(args.tp, args.ep):
        ids = [device.index] if device.type == "cuda" else None
        model = nn.parallel.DistributedDataParallel(model, device_ids=ids,
                                                    process_group=dp_group)
        if dp_group is not None:  # not the whole world: mark its collectives
            model.register_comm_hook(dp_group, marked_allreduce_hook)
            dp_marker = dp_group
    if args.zero and world_size > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        optimizer = ZeroRedundancyOptimizer(model.parameters(),
                                            optimizer_class=torch.optim.AdamW, lr=1e-3)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    step = lambda: train_step(model, optimizer, inputs, targets, loss_fn, dp_marker)

    def measure_extras(metadata):
        """After the truth, before the recording: the memory truth and what the
        instruments cost, stored beside the truth in the profiler trace."""
        memory = measure_step_memory(model, optimizer, inputs, targets, loss_fn, device,
                                     dp_marker)
        if memory is not None:
            metadata["unprofiled_peak_bytes"] = "%d" % memory[0]
            metadata["unprofiled_start_bytes"] = "%d" % memory[1]
            extras["memory"] = memory
        if not args.calibrate:
            return
        metadata["profiler_calibration"] = json.dumps(measure_profiler_cost(),
                                                      sort_keys=True)
        metadata["light_profiler_by_thread"] = json.dumps(
            measure_profiler_by_thread(device), sort_keys=True)
        extras["fault_cost"] = measure_page_fault_cost()
        metadata["page_fault_calibration"] = json.dumps(extras["fault_cost"],
                                                        sort_keys=True)

    extras = {}
    with et_record.Recorder(args.et_out, args.kineto_out,
                            light_out=args.kineto_light_out, steps=args.steps,
                            warmup=args.warmup, profiler_warmup=args.profiler_warmup,
                            time_steps=args.time_steps, time_blocks=args.time_blocks,
                            device=device, group_table=group_table,
                            before_recording=measure_extras, name="record_trace.py",
                            quiet=True) as rec:
        rec.run(step)
    what = args.model if args.tp <= 1 else "a tp=%d MLP (%d layer pairs)" % (args.tp,
                                                                              args.tp_layers)
    if args.ep > 1:
        what = "an ep=%d mixture of %d experts" % (args.ep, args.experts)
    rec.print_summary(what)
    if "fault_cost" in extras:
        print("  page faults:     %s a step under the profiler; one costs %.2f us here "
              "(stored as page_fault_calibration)" %
              (rec.profiled_page_faults, extras["fault_cost"]["ns_per_fault"] / 1e3))
    if "memory" in extras:
        print("  step memory:     peak %d bytes, %d at its start (stored as "
              "unprofiled_peak_bytes)" % extras["memory"])
    if world_size > 1:
        torch.distributed.destroy_process_group()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", choices=["mlp", "tpmlp", "gpt", "conv", "moe", "rnn"],
                   default="mlp",
                   help="a 3-layer MLP, Megatron's MLP of --tp-layers column/row pairs at "
                        "any --tp (tpmlp: at --tp 1 the one-rank model that et-sim "
                        "--layout tp=T shards), a one-block GPT, a small CNN (32x32 "
                        "images), a top-2 mixture-of-experts layer over --batch x --seq "
                        "tokens, or an embedding + LSTM language model over --seq tokens")
    p.add_argument("--experts", type=int, default=8, help="experts (moe)")
    p.add_argument("--steps", type=int, default=2, help="recorded training steps")
    p.add_argument("--warmup", type=int, default=1, help="unrecorded steps before")
    p.add_argument("--profiler-warmup", type=int, default=1,
                   help="steps run under the profiler, not recorded, before the recorded "
                        "ones: a profiler session's first step pays one-time costs")
    p.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                   help="do not measure what the profiler and the ET observer add per op "
                        "(stored as profiler_calibration; measured by default)%(default).0s")
    p.add_argument("--time-steps", type=int, default=20,
                   help="unprofiled steps per timed block for the true step time (0: none)")
    p.add_argument("--time-blocks", type=int, default=5,
                   help="timed blocks; the truth is the median of their mean steps")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda")
    p.add_argument("--batch", type=int, default=16, help="samples per step")
    p.add_argument("--width", type=int, default=64, help="hidden size")
    p.add_argument("--heads", type=int, default=4, help="attention heads (gpt)")
    p.add_argument("--seq", type=int, default=32, help="context length (gpt)")
    p.add_argument("--seed", type=int, default=0, help="random seed (the data-parallel index rank / --tp added)")
    p.add_argument("--spawn", type=int, default=0,
                   help="start this many local ranks (instead of torchrun)")
    p.add_argument("--tp", type=int, default=1,
                   help="tensor-parallel ranks (Megatron-style column/row-parallel MLP of "
                        "--tp-layers pairs, tp innermost; dp = world / tp under DDP); "
                        "needs --model mlp and a world it divides")
    p.add_argument("--ep", type=int, default=1,
                   help="expert-parallel ranks (--model moe: each holds --experts / ep "
                        "experts; tokens dispatched and combined with all_to_all_single); "
                        "the world must be ep (no dp)")
    p.add_argument("--tp-layers", type=int, default=2,
                   help="column/row-parallel layer pairs with --tp")
    p.add_argument("--zero", action="store_true",
                   help="with several ranks: torch's ZeroRedundancyOptimizer (ZeRO stage 1: "
                        "each rank keeps the AdamW state of its share of the parameters)")
    # "%(default).0s" prints nothing: "(default: True)" on a flag that turns
    # the measurement off read as if it were off by default.
    p.add_argument("--no-memory-truth", dest="memory_truth", action="store_false",
                   help="do not measure the step's peak memory (measured by default; on a "
                        "CPU that re-executes the script with cpu_alloc_counter.so "
                        "preloaded)%(default).0s")
    p.add_argument("--port", type=int, default=29533, help="rendezvous port for --spawn")
    p.add_argument("--et-out", default="et_rank{rank}.json",
                   help="execution trace path; {rank} or %%d becomes the rank")
    p.add_argument("--kineto-out", default="kineto_rank{rank}.json",
                   help="profiler (Kineto) trace path; {rank} or %%d becomes the rank")
    p.add_argument("--kineto-light-out", default="",
                   help="also record the light profile (no shapes, no ET) here; {rank} "
                        "or %%d becomes the rank")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.profiler_warmup < 0:
        p.error("--profiler-warmup must be at least 0")
    if args.tp < 1 or args.tp_layers < 1:
        p.error("--tp and --tp-layers must be at least 1")
    if args.tp > 1 and args.model not in ("mlp", "tpmlp"):
        p.error("--tp %d: only --model mlp has a tensor-parallel form" % args.tp)
    if args.tp > 1 and (4 * args.width) % args.tp:
        p.error("--tp %d must divide 4 x --width (%d)" % (args.tp, 4 * args.width))
    world = max(args.spawn, int(os.environ.get("WORLD_SIZE", "1")))
    if args.tp > 1 and world < args.tp:
        p.error("--tp %d needs at least that many ranks (--spawn or torchrun)" % args.tp)
    # Checked here, once, before any rank starts (each rank checking it printed
    # the error once per rank, with a traceback from the spawner).
    if args.tp > 1 and world % args.tp:
        p.error("--tp %d does not divide the world of %d ranks" % (args.tp, world))
    if args.ep < 1:
        p.error("--ep must be at least 1")
    if args.ep > 1 and (args.model != "moe" or args.tp > 1):
        p.error("--ep %d: only --model moe (without --tp) has an expert-parallel form" %
                args.ep)
    if args.ep > 1 and args.experts % args.ep:
        p.error("--ep %d does not divide --experts %d" % (args.ep, args.experts))
    if args.ep > 1 and world != args.ep:
        p.error("--ep %d needs a world of exactly %d ranks (--spawn %d): ep x dp is not "
                "recorded" % (args.ep, args.ep, args.ep))
    if args.model == "moe" and args.experts < 2:
        p.error("--experts must be at least 2 (the router picks the top 2)")
    if args.model in ("gpt", "rnn") and args.seq < 1:
        p.error("--seq must be at least 1")
    if args.model == "gpt" and args.width % args.heads:
        p.error("--width must be a multiple of --heads")
    if args.device not in ("auto", "cpu") and not args.device.startswith("cuda"):
        p.error("--device %s: expected auto, cpu or cuda" % args.device)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        p.error("--device %s: this PyTorch (%s) sees no CUDA GPU (built without CUDA, "
                "or no driver); use --device cpu" % (args.device, torch.__version__))
    return args


if __name__ == "__main__":
    parsed = parse_args(sys.argv[1:])
    if parsed.memory_truth and (parsed.device == "cpu" or
                                (parsed.device == "auto" and not torch.cuda.is_available())):
        preload_alloc_counter()
    with contextlib.suppress(KeyboardInterrupt):
        if parsed.spawn > 1:
            torch.multiprocessing.spawn(spawned_rank, args=(parsed,), nprocs=parsed.spawn)
        else:
            record(parsed)
