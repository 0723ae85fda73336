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
PyTorch 1.13 records no process-group table; --tp adds the `## process_group:init ##` node
that 2.1+ records (the groups this run created, with Megatron's descriptions) to the ET. Nor
does it record the group of each collective: every collective call here runs inside a
`## pg_name:<name> ##` annotation that et-convert reads (on_group below; the recipe for a
script of your own is in examples/README.md).

Then: et-convert mlp_et.json mlp.et   (see examples/README.md)
"""

import argparse
import contextlib
import ctypes
import gzip
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn


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


def group_name(group):
    """The name PyTorch gives `group` (what 2.x records as `pg_name`): "0" for the default
    group, then "1", "2", ... in creation order on 1.13 and 2.x alike."""
    import torch.distributed as dist
    c10d = dist.distributed_c10d
    if group is None or group is dist.GroupMember.WORLD:
        group = c10d._get_default_group()
    if hasattr(group, "group_name"):  # 2.x
        return group.group_name
    return c10d._pg_names[group]  # 1.13


def on_group(group):
    """A context around collective calls that marks them as run on `group` in the ET."""
    return torch.profiler.record_function("## pg_name:%s ##" % group_name(group))


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


class MoeBlock(nn.Module):
    """A mixture-of-experts layer over tokens: a linear router, softmax, top-2 of
    --experts expert MLPs per token; each expert gathers its tokens, runs them and adds
    them back weighted (topk, nonzero, index_select, index_add in the trace). Finding an
    expert's tokens waits for the GPU (nonzero), as data-dependent routing does."""

    def __init__(self, width, experts, top_k=2):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(width, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))
            for _ in range(experts))

    def forward(self, x):
        weights, chosen = self.router(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.nonzero(chosen == e, as_tuple=True)
            y = expert(x.index_select(0, token)) * weights[token, slot].unsqueeze(1)
            out = out.index_add(0, token, y)
        return x + out


def make_model_and_batch(args, device, tp_group=None):
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
        model = MoeBlock(args.width, args.experts)
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


def make_et_observer():
    """The execution-trace observer of this PyTorch: 2.x name first, then 1.13's."""
    profiler = torch.profiler
    if hasattr(profiler, "ExecutionTraceObserver"):
        return profiler.ExecutionTraceObserver()
    if hasattr(profiler, "ExecutionGraphObserver"):
        return profiler.ExecutionGraphObserver()
    sys.exit("record_trace.py: error: this PyTorch (%s) has no execution-trace observer "
             "(needs 1.13 or newer)" % torch.__version__)


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


def add_group_table(path, table):
    """Adds the `## process_group:init ##` node PyTorch 2.1+ records (its first input is
    the table as JSON) to an ET that has none (1.13's observer writes none)."""
    with open(path) as f:
        et = json.load(f)
    if any(n.get("name") == "## process_group:init ##" for n in et["nodes"]):
        return
    root = min(et["nodes"], key=lambda n: n["id"])
    et["nodes"].append({
        "name": "## process_group:init ##", "id": max(n["id"] for n in et["nodes"]) + 1,
        "rf_id": -1, "parent": root["id"], "fw_parent": 0, "seq_id": -1, "scope": 7,
        "tid": root.get("tid", 1), "fw_tid": 0, "op_schema": "",
        "inputs": [json.dumps(table)], "input_shapes": [[]], "input_types": ["String"],
        "outputs": [], "output_shapes": [], "output_types": []})
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(et, f)
    os.replace(tmp, path)


def rank_path(path, rank):
    return path.replace("{rank}", str(rank)).replace("%d", str(rank))


# ---- Recording -------------------------------------------------------------------------


def train_step(model, optimizer, inputs, targets, loss_fn, dp_group=None):
    optimizer.zero_grad()
    # DDP's forward broadcasts (buffers, the join check) run on its group; the
    # tensor-parallel all-reduces inside carry their own, nearer, marker.
    with on_group(dp_group) if dp_group is not None else contextlib.nullcontext():
        out = model(inputs)
    loss = loss_fn(out, targets)
    loss.backward()
    optimizer.step()
    return loss


def time_unprofiled_steps(args, model, optimizer, inputs, targets, loss_fn, device,
                          dp_group):
    """The truth the tools compare with: the step of the same program with no profiler
    attached. --time-blocks blocks of --time-steps steps, the GPU synchronised at each
    block's ends (steps pipeline inside a block as they do in training); the truth is the
    median of the blocks' mean steps, so one slow block (a neighbour's burst, a clock
    change) does not move it. Returns (median ms, fastest block ms, slowest block ms,
    minor page faults per step, every block's mean ms): the faults say whether the step
    pays for fresh pages (docs/step-model.md, "Two truths"); the blocks how far the
    truth itself moves (stored as `unprofiled_step_blocks_ms`)."""
    if args.time_steps <= 0:
        return None
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    blocks = []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(max(args.time_blocks, 1)):
        sync()
        start = time.perf_counter()
        for _ in range(args.time_steps):
            train_step(model, optimizer, inputs, targets, loss_fn, dp_group)
        sync()
        blocks.append((time.perf_counter() - start) * 1e3 / args.time_steps)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return (statistics.median(blocks), min(blocks), max(blocks),
            faults / (len(blocks) * args.time_steps), blocks)


def record_light_profile(args, model, optimizer, inputs, targets, loss_fn, device,
                         dp_group, path):
    """The light profile (et-sim --host-profile): the same steps under torch.profiler
    with no shapes and no ET observer, so that the host's ops cost what the lightest
    profiler adds, not what shape recording adds. Its steps' minor page faults are
    stored in it (`light_page_faults_per_step`). Returns the faults a step and the
    median step, ms."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    step = lambda: train_step(model, optimizer, inputs, targets, loss_fn, dp_group)
    steps_ms = []
    if args.profiler_warmup > 0 and _profiler_takes_observer():
        schedule = torch.profiler.schedule(wait=0, warmup=args.profiler_warmup,
                                           active=args.steps, repeat=1)
        with torch.profiler.profile(activities=_activities(device), record_shapes=False,
                                    schedule=schedule) as prof:
            for i in range(args.profiler_warmup + args.steps):
                if i == args.profiler_warmup:
                    faults = minor_faults()
                start = time.perf_counter()
                step()
                sync()
                if i >= args.profiler_warmup:
                    steps_ms.append((time.perf_counter() - start) * 1e3)
                prof.step()
            faults = minor_faults() - faults
    else:
        warm_unscheduled_profiler(args, device, step, record_shapes=False)
        with torch.profiler.profile(activities=_activities(device),
                                    record_shapes=False) as prof:
            faults = minor_faults()
            for n in range(args.steps):
                start = time.perf_counter()
                with torch.profiler.record_function("ProfilerStep#%d" % n):
                    step()
                sync()
                steps_ms.append((time.perf_counter() - start) * 1e3)
            faults = minor_faults() - faults
    prof.export_chrome_trace(path)
    add_to_trace(path, {"light_page_faults_per_step": faults / args.steps})
    return faults / args.steps, statistics.median(steps_ms)


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


def store_memory_truth(kineto_path, memory):
    """Puts `unprofiled_peak_bytes` and `unprofiled_start_bytes` at the top level of the
    Kineto trace, beside `unprofiled_step_ms`, where et-convert reads them (a Kineto
    build gets them through add_metadata_json before export, see record())."""
    if memory is None or (_has_kineto() and not _is_legacy_trace(kineto_path)):
        return
    add_to_trace(kineto_path, {"unprofiled_peak_bytes": memory[0],
                               "unprofiled_start_bytes": memory[1]})


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


def minor_faults():
    """This process's minor page faults so far (every thread)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


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


def host_cpu():
    """The host CPU's model name and clock (MHz, 0 unknown), stored as
    `host_cpu_model` / `host_cpu_mhz` in the Kineto trace: et-sim's host model
    says which host its costs were recorded on (docs/step-model.md)."""
    name, mhz = platform.processor() or platform.machine(), 0.0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and value.strip():
                    name = value.strip()
                elif key == "cpu MHz" and not mhz:
                    mhz = float(value)
    except (OSError, ValueError):
        pass
    return name, mhz


def store_unprofiled_step(prof, kineto_path, step_ms, rank, world_size, metadata):
    """Puts `unprofiled_step_ms` at the top level of the Kineto trace, where
    et-convert reads it: through add_metadata_json when the profiler has it (Kineto
    builds), else by rewriting the exported file (legacy profiler: a bare array).
    A legacy trace also gets what Kineto writes itself and et-convert checks to
    refuse a trace of another run: the recording process's `pid` and
    `distributedInfo.rank`."""
    legacy = _is_legacy_trace(kineto_path)
    if _has_kineto() and not legacy:
        return  # added before export, see record()
    keys = {}
    if step_ms is not None:
        keys["unprofiled_step_ms"] = step_ms
        keys["unprofiled_page_faults_per_step"] = float(
            metadata["unprofiled_page_faults_per_step"])
    keys["host_cpu_model"], keys["host_cpu_mhz"] = host_cpu()
    for key in ("host_threads", "profiler_warmup_steps", "profiler_calibration",
                "page_fault_calibration", "profiled_page_faults_per_step",
                "unprofiled_step_blocks_ms", "light_profiler_by_thread"):
        if key in metadata:
            keys[key] = json.loads(metadata[key])
    keys["pid"] = os.getpid()
    keys["distributedInfo"] = {"rank": rank, "world_size": world_size}
    add_to_trace(kineto_path, keys)


def add_to_trace(kineto_path, keys):
    """Adds top-level `keys` to an exported Kineto trace (a legacy trace, a bare
    array, becomes an object), through a temporary file so that a failure leaves
    the export whole. A path ending in .gz (torch.profiler then exports gzip) stays
    gzip."""
    opener = gzip.open if kineto_path.endswith(".gz") else open
    with opener(kineto_path, "rt") as f:
        doc = json.load(f)
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    doc.update(keys)
    tmp = kineto_path + ".tmp"
    with opener(tmp, "wt") as f:
        json.dump(doc, f)
    os.replace(tmp, kineto_path)


def _has_kineto():
    """Whether torch.profiler runs Kineto (add_metadata_json works) rather than the
    legacy profiler (Debian's python3-torch), which only warns on metadata."""
    return (hasattr(torch.profiler.profile, "add_metadata_json") and
            torch.autograd.kineto_available())


def _is_legacy_trace(path):
    with open(path) as f:
        return f.read(1) == "["


def spawned_rank(local_rank, args):
    """Entry point of a rank started by --spawn: sets what torchrun would set."""
    os.environ.update({"RANK": str(local_rank), "LOCAL_RANK": str(local_rank),
                       "WORLD_SIZE": str(args.spawn)})
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    record(args)


def _profiler_takes_observer():
    """Whether torch.profiler.profile starts and stops an ET observer with its own
    schedule (PyTorch 2.x on Kineto); Debian's torch 1.13 records unscheduled."""
    import inspect
    return (_has_kineto() and "execution_trace_observer" in
            inspect.signature(torch.profiler.profile.__init__).parameters)


def _activities(device):
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return activities


def record_scheduled(args, device, step, observer, metadata):
    """--steps recorded steps after --profiler-warmup steps under the profiler whose
    events are dropped: a session's first step pays one-time costs (Kineto's set-up,
    first calls into the observer) that the program does not. The profiler names the
    steps ProfilerStep#N (N from --profiler-warmup) and runs the observer over the
    recorded ones only."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    schedule = torch.profiler.schedule(wait=0, warmup=args.profiler_warmup,
                                       active=args.steps, repeat=1)
    total = args.profiler_warmup + args.steps
    with torch.profiler.profile(activities=_activities(device), record_shapes=True,
                                schedule=schedule,
                                execution_trace_observer=observer) as prof:
        for i in range(total):
            if i == args.profiler_warmup:
                faults = minor_faults()
            step()
            sync()
            if i + 1 < total:  # the last step stays open for the metadata below
                prof.step()
        metadata["profiled_page_faults_per_step"] = "%.1f" % (
            (minor_faults() - faults) / args.steps)
        for key, value in metadata.items():
            prof.add_metadata_json(key, value)
    return prof


def warm_unscheduled_profiler(args, device, step, record_shapes):
    """The legacy profiler has no schedule to drop warm-up steps from, so
    --profiler-warmup steps run under a profiler session of their own, thrown away: a
    session's one-time costs (a DDP recording's first profiled step on the 2-core VM:
    169 ms, then 18 and 21) fall there, not in the recorded steps. Without the ET
    observer: it is one per process, already registered for the recording."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    with torch.profiler.profile(activities=_activities(device),
                                record_shapes=record_shapes):
        for _ in range(args.profiler_warmup):
            step()
            sync()


def record_unscheduled(args, device, step, observer, metadata):
    """--steps steps, each in a ProfilerStep#N annotation, with the profiler and the
    observer started together, after --profiler-warmup steps under a profiler session of
    their own (the legacy profiler has no schedule)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    warm_unscheduled_profiler(args, device, step, record_shapes=True)
    with torch.profiler.profile(activities=_activities(device), record_shapes=True) as prof:
        observer.start()
        faults = minor_faults()
        for n in range(args.steps):
            # The name torch.profiler's schedule uses: consumers read step times from it.
            with torch.profiler.record_function("ProfilerStep#%d" % n):
                step()
            sync()
        metadata["profiled_page_faults_per_step"] = "%.1f" % (
            (minor_faults() - faults) / args.steps)
        observer.stop()
        if _has_kineto():
            for key, value in metadata.items():
                prof.add_metadata_json(key, value)
    return prof


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
    # A tensor-parallel group sees the same batch; its shards' weights differ.
    torch.manual_seed(args.seed + rank // max(args.tp, 1))

    model, inputs, targets, loss_fn = make_model_and_batch(args, device, tp_group)
    dp_marker = None  # the group DDP's forward broadcasts run on, when DDP wraps the model
    if world_size > args.tp:
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

    for _ in range(args.warmup):  # allocator, autotuning and DDP buckets settle here
        train_step(model, optimizer, inputs, targets, loss_fn, dp_marker)
    truth = time_unprofiled_steps(args, model, optimizer, inputs, targets, loss_fn,
                                  device, dp_marker)
    step_ms = truth[0] if truth else None
    memory = measure_step_memory(model, optimizer, inputs, targets, loss_fn, device,
                                 dp_marker)

    calibration = measure_profiler_cost() if args.calibrate else None
    by_thread = measure_profiler_by_thread(device) if args.calibrate else None
    fault_cost = measure_page_fault_cost() if args.calibrate else None

    et_path = rank_path(args.et_out, rank)
    kineto_path = rank_path(args.kineto_out, rank)
    step = lambda: train_step(model, optimizer, inputs, targets, loss_fn, dp_marker)
    scheduled = args.profiler_warmup > 0 and _profiler_takes_observer()
    metadata = {"host_threads": "%d" % torch.get_num_threads(),
                "profiler_warmup_steps": "%d" % args.profiler_warmup}
    if step_ms is not None:
        metadata["unprofiled_step_ms"] = "%.6f" % step_ms
        metadata["unprofiled_page_faults_per_step"] = "%.1f" % truth[3]
        metadata["unprofiled_step_blocks_ms"] = json.dumps([round(b, 6) for b in truth[4]])
    if memory is not None:
        metadata["unprofiled_peak_bytes"] = "%d" % memory[0]
        metadata["unprofiled_start_bytes"] = "%d" % memory[1]
    if calibration is not None:
        metadata["profiler_calibration"] = json.dumps(calibration, sort_keys=True)
    if fault_cost is not None:
        metadata["page_fault_calibration"] = json.dumps(fault_cost, sort_keys=True)
    if by_thread is not None:
        metadata["light_profiler_by_thread"] = json.dumps(by_thread, sort_keys=True)
    cpu_name, cpu_mhz = host_cpu()
    metadata["host_cpu_model"] = json.dumps(cpu_name)
    metadata["host_cpu_mhz"] = "%.1f" % cpu_mhz
    start = time.time()
    observer = make_et_observer()
    observer.register_callback(et_path)
    if scheduled:
        prof = record_scheduled(args, device, step, observer, metadata)
    else:
        prof = record_unscheduled(args, device, step, observer, metadata)
    observer.unregister_callback()
    prof.export_chrome_trace(kineto_path)
    store_unprofiled_step(prof, kineto_path, step_ms, rank, world_size, metadata)
    store_memory_truth(kineto_path, memory)
    if group_table is not None:
        add_group_table(et_path, group_table)
    elapsed = time.time() - start

    nodes = check_et(et_path)
    what = args.model if args.tp <= 1 else "a tp=%d MLP (%d layer pairs)" % (args.tp,
                                                                              args.tp_layers)
    print("rank %d/%d: recorded %d steps of %s on %s in %.2f s (wall time with the "
          "profiler and the ET observer attached, export included; torch %s)" %
          (rank, world_size, args.steps, what, device, elapsed, torch.__version__))
    print("  execution trace: %s (%d nodes)" % (et_path, nodes))
    print("  kineto trace:    %s" % kineto_path)
    if args.kineto_light_out:
        light_path = rank_path(args.kineto_light_out, rank)
        light_faults, light_ms = record_light_profile(args, model, optimizer, inputs,
                                                      targets, loss_fn, device,
                                                      dp_marker, light_path)
        print("  light profile:   %s (no shapes, no ET observer; %.3f ms a step, %.0f "
              "page faults a step)" % (light_path, light_ms, light_faults))
        if truth is not None and light_ms < truth[0]:
            # A profiler only adds time; et-sim notes the same (step/step_report.cc).
            print("record_trace.py: warning: rank %d: the light profile's steps (%.3f ms) "
                  "are faster than the unprofiled truth (%.3f ms), though a profiler only "
                  "adds time: the truth's run was slower than the program (a busy "
                  "machine, or page faults: %.0f a step there, %.0f here); record with "
                  "nothing else running" % (rank, light_ms, truth[0], truth[3],
                                             light_faults), file=sys.stderr)
    if fault_cost is not None:
        print("  page faults:     %s a step under the profiler; one costs %.2f us here "
              "(stored as page_fault_calibration)" %
              (metadata["profiled_page_faults_per_step"],
               fault_cost["ns_per_fault"] / 1e3))
    if truth is not None:
        print("  unprofiled step: %.3f ms (median of %d blocks of %d steps, %.3f-%.3f ms, "
              "%.0f page faults a step; stored as unprofiled_step_ms, each block in "
              "unprofiled_step_blocks_ms)" %
              (truth[0], args.time_blocks, args.time_steps, truth[1], truth[2], truth[3]))
        spread = (truth[2] - truth[1]) / truth[0] * 100
        if spread > 5:  # et-sim notes the same threshold (step/step_report.cc)
            print("record_trace.py: warning: rank %d: the unprofiled step's timing blocks "
                  "are %.0f%% of the truth apart (%.3f-%.3f ms): a prediction cannot be "
                  "judged closer than that; record with nothing else running"
                  % (rank, spread, truth[1], truth[2]),
                  file=sys.stderr)
        # The truth again, after the profiling session: it can leave the process
        # faster or slower (allocator state), or the machine may have got busy.
        after = time_unprofiled_steps(args, model, optimizer, inputs, targets, loss_fn,
                                      device, dp_marker)
        add_to_trace(kineto_path, {"unprofiled_step_after_ms": after[0],
                                   "unprofiled_page_faults_per_step_after": after[3]})
        drift = (after[0] / truth[0] - 1) * 100
        print("  unprofiled step after the recording: %.3f ms (%.3f-%.3f ms, %.0f page "
              "faults a step; %+.1f%% against before; stored as "
              "unprofiled_step_after_ms)" % (after[0], after[1], after[2], after[3], drift))
        if abs(drift) > 5:
            faster_by_faults = drift < 0 and after[3] < truth[3] / 2
            why = ("the profiler's allocations kept the heap from shrinking between "
                   "steps, so the steps after it stop faulting (docs/step-model.md, "
                   "\"Two truths\")" if faster_by_faults else
                   "the machine was not quiet: record with nothing else running")
            print("record_trace.py: warning: rank %d: the unprofiled step moved %+.1f%% "
                  "during the recording (%.3f -> %.3f ms; page faults a step %.0f -> "
                  "%.0f): the truth is uncertain by that much; likely %s" %
                  (rank, drift, truth[0], after[0], truth[3], after[3], why),
                  file=sys.stderr)
    if memory is not None:
        print("  step memory:     peak %d bytes, %d at its start (stored as "
              "unprofiled_peak_bytes)" % memory)
    if world_size > 1:
        torch.distributed.destroy_process_group()


def check_et(path):
    """Loads the written ET and checks what every consumer relies on; returns its nodes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    et = json.loads(data)
    for key in ("schema", "nodes"):
        if key not in et:
            sys.exit("record_trace.py: error: %s: no '%s' in the execution trace" % (path, key))
    if not et["nodes"]:
        sys.exit("record_trace.py: error: %s: the execution trace has no nodes" % path)
    return len(et["nodes"])


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
