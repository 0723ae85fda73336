"""Records your own training step for et-convert and et-sim: one context manager.

    import et_record                      # examples/et_record.py, beside your script

    def train_step():                     # one step of your loop, as you run it
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()

    with et_record.Recorder("run_et.json", "run_kineto.json",
                            light_out="run_light.json") as rec:
        rec.run(train_step)

Recorder.run does what a recording needs, in this order: `warmup` steps with nothing
attached (allocator, autotuning, DDP buckets settle); the truth, the step with no profiler
(`time_blocks` blocks of `time_steps` steps, the median block's mean step); the recorded
steps, each named `ProfilerStep#N`, under torch.profiler with the execution-trace observer,
after `profiler_warmup` profiled steps whose one-time costs are dropped; the export, with
the truth, the process id, the rank and the host written into the profiler trace where
et-convert reads them; the light profile (the same steps, no shapes, no observer:
et-sim --host-profile); the truth timed again. `{rank}` or `%d` in a path becomes the rank
(torch.distributed's, when it is initialised). A collective run on a group other than the
default one is marked with `with et_record.on_group(group):` (PyTorch 1.13 records no
group per collective). On an error, the files written so far are removed.

Then: et-convert run_et.json run.et --kineto run_kineto.json; et-sim run.et
(examples/README.md). record_trace.py records its models with this module.
"""

import gzip
import json
import os
import platform
import resource
import statistics
import sys
import time

import torch


# ---- Process groups ---------------------------------------------------------------------


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


# ---- The profiler and the observer of this PyTorch --------------------------------------


def make_et_observer():
    """The execution-trace observer of this PyTorch: 2.x name first, then 1.13's."""
    profiler = torch.profiler
    if hasattr(profiler, "ExecutionTraceObserver"):
        return profiler.ExecutionTraceObserver()
    if hasattr(profiler, "ExecutionGraphObserver"):
        return profiler.ExecutionGraphObserver()
    sys.exit("et_record: error: this PyTorch (%s) has no execution-trace observer "
             "(needs 1.13 or newer)" % torch.__version__)


def has_kineto():
    """Whether torch.profiler runs Kineto (add_metadata_json works) rather than the
    legacy profiler (Debian's python3-torch), which only warns on metadata."""
    return (hasattr(torch.profiler.profile, "add_metadata_json") and
            torch.autograd.kineto_available())


def is_legacy_trace(path):
    with open(path) as f:
        return f.read(1) == "["


def profiler_takes_observer():
    """Whether torch.profiler.profile starts and stops an ET observer with its own
    schedule (PyTorch 2.x on Kineto); Debian's torch 1.13 records unscheduled."""
    import inspect
    return (has_kineto() and "execution_trace_observer" in
            inspect.signature(torch.profiler.profile.__init__).parameters)


def activities(device):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


def synchronizer(device):
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


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


def minor_faults():
    """This process's minor page faults so far (every thread)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


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


def check_et(path):
    """Loads the written ET and checks what every consumer relies on; returns its nodes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    et = json.loads(data)
    for key in ("schema", "nodes"):
        if key not in et:
            raise RuntimeError("%s: no '%s' in the execution trace" % (path, key))
    if not et["nodes"]:
        raise RuntimeError("%s: the execution trace has no nodes" % path)
    return len(et["nodes"])


# ---- The steps ----------------------------------------------------------------------------


def time_unprofiled_steps(step, device, time_steps, time_blocks):
    """The truth the tools compare with: the step of the same program with no profiler
    attached. `time_blocks` blocks of `time_steps` steps, the GPU synchronised at each
    block's ends (steps pipeline inside a block as they do in training); the truth is the
    median of the blocks' mean steps, so one slow block (a neighbour's burst, a clock
    change) does not move it. Returns (median ms, fastest block ms, slowest block ms,
    minor page faults per step, every block's mean ms), or None for time_steps 0."""
    if time_steps <= 0:
        return None
    sync = synchronizer(device)
    blocks = []
    faults = minor_faults()
    for _ in range(max(time_blocks, 1)):
        sync()
        start = time.perf_counter()
        for _ in range(time_steps):
            step()
        sync()
        blocks.append((time.perf_counter() - start) * 1e3 / time_steps)
    faults = minor_faults() - faults
    return (statistics.median(blocks), min(blocks), max(blocks),
            faults / (len(blocks) * time_steps), blocks)


def warm_unscheduled_profiler(step, device, profiler_warmup, record_shapes):
    """The legacy profiler has no schedule to drop warm-up steps from, so the warm-up
    steps run under a profiler session of their own, thrown away: a session's one-time
    costs (a DDP recording's first profiled step on a 2-core VM: 169 ms, then 18 and 21)
    fall there, not in the recorded steps. Without the ET observer: it is one per
    process, already registered for the recording."""
    sync = synchronizer(device)
    with torch.profiler.profile(activities=activities(device),
                                record_shapes=record_shapes):
        for _ in range(profiler_warmup):
            step()
            sync()


def record_scheduled(step, device, steps, profiler_warmup, observer, metadata):
    """`steps` recorded steps after `profiler_warmup` steps under the profiler whose
    events are dropped. The profiler names the steps ProfilerStep#N and runs the
    observer over the recorded ones only."""
    sync = synchronizer(device)
    schedule = torch.profiler.schedule(wait=0, warmup=profiler_warmup, active=steps,
                                       repeat=1)
    total = profiler_warmup + steps
    with torch.profiler.profile(activities=activities(device), record_shapes=True,
                                schedule=schedule,
                                execution_trace_observer=observer) as prof:
        for i in range(total):
            if i == profiler_warmup:
                faults = minor_faults()
            step()
            sync()
            if i + 1 < total:  # the last step stays open for the metadata below
                prof.step()
        metadata["profiled_page_faults_per_step"] = "%.1f" % (
            (minor_faults() - faults) / steps)
        for key, value in metadata.items():
            prof.add_metadata_json(key, value)
    return prof


def record_unscheduled(step, device, steps, profiler_warmup, observer, metadata):
    """`steps` steps, each in a ProfilerStep#N annotation, with the profiler and the
    observer started together, after the warm-up steps under a profiler session of their
    own (the legacy profiler has no schedule)."""
    sync = synchronizer(device)
    warm_unscheduled_profiler(step, device, profiler_warmup, record_shapes=True)
    with torch.profiler.profile(activities=activities(device), record_shapes=True) as prof:
        observer.start()
        faults = minor_faults()
        for n in range(steps):
            # The name torch.profiler's schedule uses: consumers read step times from it.
            with torch.profiler.record_function("ProfilerStep#%d" % n):
                step()
            sync()
        metadata["profiled_page_faults_per_step"] = "%.1f" % (
            (minor_faults() - faults) / steps)
        observer.stop()
        if has_kineto():
            for key, value in metadata.items():
                prof.add_metadata_json(key, value)
    return prof


def record_light_profile(step, device, steps, profiler_warmup, path):
    """The light profile (et-sim --host-profile): the same steps under torch.profiler
    with no shapes and no ET observer, so that the host's ops cost what the lightest
    profiler adds, not what shape recording adds. Its steps' minor page faults are
    stored in it (`light_page_faults_per_step`). Returns the faults a step and the
    median step, ms."""
    sync = synchronizer(device)
    steps_ms = []
    if profiler_warmup > 0 and profiler_takes_observer():
        schedule = torch.profiler.schedule(wait=0, warmup=profiler_warmup, active=steps,
                                           repeat=1)
        with torch.profiler.profile(activities=activities(device), record_shapes=False,
                                    schedule=schedule) as prof:
            for i in range(profiler_warmup + steps):
                if i == profiler_warmup:
                    faults = minor_faults()
                start = time.perf_counter()
                step()
                sync()
                if i >= profiler_warmup:
                    steps_ms.append((time.perf_counter() - start) * 1e3)
                prof.step()
            faults = minor_faults() - faults
    else:
        warm_unscheduled_profiler(step, device, profiler_warmup, record_shapes=False)
        with torch.profiler.profile(activities=activities(device),
                                    record_shapes=False) as prof:
            faults = minor_faults()
            for n in range(steps):
                start = time.perf_counter()
                with torch.profiler.record_function("ProfilerStep#%d" % n):
                    step()
                sync()
                steps_ms.append((time.perf_counter() - start) * 1e3)
            faults = minor_faults() - faults
    prof.export_chrome_trace(path)
    add_to_trace(path, {"light_page_faults_per_step": faults / steps})
    return faults / steps, statistics.median(steps_ms)


def store_run_keys(kineto_path, truth, rank, world_size, metadata):
    """Puts the truth and the run's identity at the top level of the Kineto trace, where
    et-convert reads them: a Kineto build got them through add_metadata_json before the
    export; a legacy trace (a bare array) is rewritten, with what Kineto writes itself
    and et-convert checks to refuse a trace of another run: the recording process's
    `pid` and `distributedInfo`."""
    if has_kineto() and not is_legacy_trace(kineto_path):
        return
    keys = {}
    if truth is not None:
        keys["unprofiled_step_ms"] = truth[0]
        keys["unprofiled_page_faults_per_step"] = float(
            metadata["unprofiled_page_faults_per_step"])
    keys["host_cpu_model"], keys["host_cpu_mhz"] = host_cpu()
    for key in ("host_threads", "profiler_warmup_steps", "profiler_calibration",
                "page_fault_calibration", "profiled_page_faults_per_step",
                "unprofiled_step_blocks_ms", "light_profiler_by_thread",
                "unprofiled_peak_bytes", "unprofiled_start_bytes"):
        if key in metadata:
            keys[key] = json.loads(metadata[key])
    keys["pid"] = os.getpid()
    keys["distributedInfo"] = {"rank": rank, "world_size": world_size}
    add_to_trace(kineto_path, keys)


# ---- The recipe ---------------------------------------------------------------------------


def _distributed():
    """(rank, world size) of torch.distributed, or (0, 1) when it is not initialised."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


class Recorder:
    """Records one program's training step: see the module's comment. Its paths and
    figures are attributes once run() returns: et_path, kineto_path, light_path, nodes,
    truth (median ms, fastest and slowest block ms, faults a step, blocks), truth_after,
    light_ms."""

    def __init__(self, et_out, kineto_out, *, light_out="", steps=3, warmup=1,
                 profiler_warmup=1, time_steps=20, time_blocks=5, device=None,
                 group_table=None, metadata=None, before_recording=None,
                 name="et_record", quiet=False):
        if steps < 1:
            raise ValueError("steps must be at least 1")
        if profiler_warmup < 0 or warmup < 0:
            raise ValueError("warmup and profiler_warmup must be at least 0")
        self.rank, self.world_size = _distributed()
        self.et_path = rank_path(et_out, self.rank)
        self.kineto_path = rank_path(kineto_out, self.rank)
        self.light_path = rank_path(light_out, self.rank) if light_out else ""
        self.steps, self.warmup, self.profiler_warmup = steps, warmup, profiler_warmup
        self.time_steps, self.time_blocks = time_steps, time_blocks
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device()) \
                if torch.cuda.is_available() else torch.device("cpu")
        self.device = torch.device(device)
        self.group_table = group_table
        self.metadata = dict(metadata or {})
        self.before_recording = before_recording
        self.name, self.quiet = name, quiet
        self.truth = self.truth_after = self.light_ms = self.nodes = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:  # no half-recorded run left behind
            for path in (self.et_path, self.kineto_path, self.light_path):
                if path and os.path.exists(path):
                    os.remove(path)
        return False

    def run(self, step):
        """Runs `step` (a function of no arguments: one training step) through the
        recipe and writes the files."""
        for _ in range(self.warmup):  # allocator, autotuning and DDP buckets settle
            step()
        self.truth = time_unprofiled_steps(step, self.device, self.time_steps,
                                           self.time_blocks)
        metadata = {"host_threads": "%d" % torch.get_num_threads(),
                    "profiler_warmup_steps": "%d" % self.profiler_warmup}
        if self.truth is not None:
            metadata["unprofiled_step_ms"] = "%.6f" % self.truth[0]
            metadata["unprofiled_page_faults_per_step"] = "%.1f" % self.truth[3]
            metadata["unprofiled_step_blocks_ms"] = json.dumps(
                [round(b, 6) for b in self.truth[4]])
        if self.before_recording is not None:
            self.before_recording(metadata)
        metadata.update(self.metadata)
        cpu_name, cpu_mhz = host_cpu()
        metadata["host_cpu_model"] = json.dumps(cpu_name)
        metadata["host_cpu_mhz"] = "%.1f" % cpu_mhz
        start = time.time()
        observer = make_et_observer()
        observer.register_callback(self.et_path)
        record = (record_scheduled
                  if self.profiler_warmup > 0 and profiler_takes_observer()
                  else record_unscheduled)
        prof = record(step, self.device, self.steps, self.profiler_warmup, observer,
                      metadata)
        observer.unregister_callback()
        prof.export_chrome_trace(self.kineto_path)
        store_run_keys(self.kineto_path, self.truth, self.rank, self.world_size,
                       metadata)
        if self.group_table is not None:
            add_group_table(self.et_path, self.group_table)
        self.elapsed_s = time.time() - start
        self.profiled_page_faults = metadata["profiled_page_faults_per_step"]
        self.nodes = check_et(self.et_path)
        if self.light_path:
            self.light_faults, self.light_ms = record_light_profile(
                step, self.device, self.steps, self.profiler_warmup, self.light_path)
        if self.truth is not None:
            # The truth again, after the profiling session: it can leave the process
            # faster or slower (allocator state), or the machine may have got busy.
            self.truth_after = time_unprofiled_steps(step, self.device, self.time_steps,
                                                     self.time_blocks)
            add_to_trace(self.kineto_path,
                         {"unprofiled_step_after_ms": self.truth_after[0],
                          "unprofiled_page_faults_per_step_after": self.truth_after[3]})
        if not self.quiet:
            self.print_summary()
        return self

    def warn(self, text):
        print("%s: warning: rank %d: %s" % (self.name, self.rank, text), file=sys.stderr)

    def print_summary(self, what="your step"):
        print("rank %d/%d: recorded %d steps of %s on %s in %.2f s (wall time with the "
              "profiler and the ET observer attached, export included; torch %s)" %
              (self.rank, self.world_size, self.steps, what, self.device, self.elapsed_s,
               torch.__version__))
        print("  execution trace: %s (%d nodes)" % (self.et_path, self.nodes))
        print("  kineto trace:    %s" % self.kineto_path)
        truth = self.truth
        if self.light_path:
            print("  light profile:   %s (no shapes, no ET observer; %.3f ms a step, %.0f "
                  "page faults a step)" % (self.light_path, self.light_ms,
                                           self.light_faults))
            if truth is not None and self.light_ms < truth[0]:
                # A profiler only adds time; et-sim notes the same (step/step_report.cc).
                self.warn("the light profile's steps (%.3f ms) are faster than the "
                          "unprofiled truth (%.3f ms), though a profiler only adds time: "
                          "the truth's run was slower than the program (a busy machine, "
                          "or page faults: %.0f a step there, %.0f here); record with "
                          "nothing else running" % (self.light_ms, truth[0], truth[3],
                                                     self.light_faults))
        if truth is None:
            return
        print("  unprofiled step: %.3f ms (median of %d blocks of %d steps, %.3f-%.3f ms, "
              "%.0f page faults a step; stored as unprofiled_step_ms, each block in "
              "unprofiled_step_blocks_ms)" % (truth[0], self.time_blocks, self.time_steps,
                                              truth[1], truth[2], truth[3]))
        spread = (truth[2] - truth[1]) / truth[0] * 100
        if spread > 5:  # et-sim notes the same threshold (step/step_report.cc)
            self.warn("the unprofiled step's timing blocks are %.0f%% of the truth apart "
                      "(%.3f-%.3f ms): a prediction cannot be judged closer than that; "
                      "record with nothing else running" % (spread, truth[1], truth[2]))
        after = self.truth_after
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
            self.warn("the unprofiled step moved %+.1f%% during the recording (%.3f -> "
                      "%.3f ms; page faults a step %.0f -> %.0f): the truth is uncertain "
                      "by that much; likely %s" % (drift, truth[0], after[0], truth[3],
                                                   after[3], why))
