"""ettools: Chakra execution traces, the et-sim simulator and its answers as
pandas DataFrames, from the same C++ code as the command-line tools.

    import ettools
    trace = ettools.load("out.%d.et", ranks=4)      # trace.nodes: a DataFrame
    result = ettools.simulate(trace, host_time="recorded")
    result.to_dict()   # equal to `et-sim 'out.%d.et' --ranks 4 --host-time recorded --json`
    result.ranks, result.ops, result.collectives, result.timeline
    ettools.sweep("rank0.et", dp=[1, 8, 64])
    ettools.search("rank0.et", world=1024, device="H100")  # ranked layouts

Every et-sim flag is a keyword of simulate() (--host-time is host_time=),
checked and refused as et-sim checks and refuses it; a mistake raises
ettools.Error (ettools.UsageError for one in the options) with et-sim's own
line. docs/python.md has the details.
"""
import json as _json
import os as _os

import numpy as _np
import pandas as _pd

from . import _ettools
from . import _progress
from ._tables import frame as _frame, rows as _rows
from ._hta import (comm_comp_overlap, critical_path, idle_time_breakdown,
                   kernel_breakdown, kernel_type_breakdown)

Error = _ettools.Error
UsageError = _ettools.UsageError

__all__ = ["Error", "UsageError", "Trace", "Result", "load", "convert",
           "simulate", "sweep", "search", "nccl_tests", "temporal_breakdown",
           "kernel_breakdown", "kernel_type_breakdown", "comm_comp_overlap",
           "idle_time_breakdown", "critical_path",
           "OPTIONS"]

# The progress line on stderr while C++ works (docs/python.md): False turns
# it off.
progress = True


def _progress_line(what):
    return _progress.progress(what, enabled=progress)


# The et-sim flags simulate() takes, by their keyword names.
OPTIONS = tuple(_ettools.option_names())


class Trace:
    """A recorded trace: one .et, a rank pattern ('out.%d.et' with ranks=N)
    or a folder of per-rank files, as et-sim reads them."""

    def __init__(self, path, ranks, data):
        self.path = path
        self.pattern_ranks = ranks
        self._data = data
        self._cache = {}

    def _table(self, name):
        if name not in self._cache:
            self._cache[name] = _frame(getattr(self._data, name)())
        return self._cache[name]

    @property
    def files(self):
        """The .et files, in rank order."""
        return list(self._data.files)

    @property
    def ranks(self):
        """Each file's rank (recorded, else its place)."""
        return list(self._data.ranks)

    @property
    def nodes(self):
        """One row per node: id, name, kind, type, rank, on_host, queue
        (thread, stream or group) and queue_number, start_us (NaN: not
        recorded), duration_us, inclusive_duration_us, flops, bytes, step
        (-1: none), parent_id, comm_type, comm_bytes, comm_group, comm_peer."""
        return self._table("nodes")

    @property
    def deps(self):
        """One row per dependency: rank, dst (the waiting node), src, kind
        (data or ctrl)."""
        return self._table("deps")

    @property
    def groups(self):
        """The process groups each rank records."""
        return self._table("groups")

    @property
    def metadata(self):
        """Per file: schema, rank, world, device, the global metadata and
        what loading noted."""
        if "metadata" not in self._cache:
            self._cache["metadata"] = _json.loads(self._data.metadata())
        return self._cache["metadata"]

    @property
    def steps(self):
        """The recorded steps: per rank and step, the first start and last
        end of its timed nodes (us) and its node count."""
        n = self.nodes
        timed = n[(n["step"] >= 0) & n["start_us"].notna()]
        end = timed["start_us"] + timed["duration_us"]
        g = timed.assign(end_us=end).groupby(["rank", "step"])
        out = g.agg(start_us=("start_us", "min"), end_us=("end_us", "max"),
                    nodes=("id", "size")).reset_index()
        out["duration_us"] = out["end_us"] - out["start_us"]
        return out

    def simulate(self, **options):
        """ettools.simulate(self, **options)."""
        return simulate(self, **options)

    def __repr__(self):
        return "<ettools.Trace %r: %d file(s)>" % (self.path, len(self.files))


def load(path, ranks=None):
    """Loads a trace (.et, a pattern 'out.%d.et' with ranks=N, or a folder
    of per-rank .et files). Raises ettools.Error naming the file at fault."""
    with _progress_line("loading " + _os.path.basename(str(path))):
        data = _ettools.load(str(path), int(ranks or 0))
    return Trace(str(path), ranks, data)


def convert(input, output, kineto=None, ranks=None, measured_step_ms=None,
            host_profile=None, keep=None, force_schema=False, rank=None):
    """Converts a PyTorch execution trace (with its Kineto trace), a Kineto
    trace alone or an nsys export to .et, as et-convert does; with ranks=N,
    'in.%d.json' to 'out.%d.et' (kineto with %d too), all ranks or none; an
    nsys export (.sqlite, .sqlite.gz) to 'out.%d.et', one graph per GPU and
    process. Returns the summary (et-convert --json-summary's), a list of
    them, one per rank, when the output is a %d pattern."""
    call = _ettools.ConvertCall()
    call.input, call.output = str(input), str(output)
    call.kineto = "" if kineto is None else str(kineto)
    call.host_profile = "" if host_profile is None else str(host_profile)
    call.measured_step_ms = ("" if measured_step_ms is None
                             else str(measured_step_ms))
    call.keep = keep or "simulation"
    call.force_schema = bool(force_schema)
    call.rank = -1 if rank is None else int(rank)
    call.ranks = int(ranks or 0)
    with _progress_line("converting " + _os.path.basename(str(input))):
        error, usage, texts = _ettools.convert(call)
    if error:
        raise (UsageError if usage else Error)(error)
    summaries = [_json.loads(s) for s in texts]
    return summaries if ranks or "%d" in str(output) else summaries[0]


class Result:
    """One et-sim run. to_dict() is et-sim --json's report, parsed from the
    very text et-sim prints (formatted when first asked for); the small
    parts (step, ranks, memory) are read off the report less its long
    tables, and the long tables (ops, collectives, critical path) and the
    simulated events come as columns built in C++."""

    def __init__(self, run):
        self._run = run
        self._summary = None
        self._tables = {}
        self._timeline = None

    @property
    def _dict(self):
        if self._summary is None:
            self._summary = _json.loads(self._run.summary_json())
        return self._summary

    def to_dict(self):
        """et-sim --json, parsed (a fresh copy)."""
        return _json.loads(self._run.json())

    @property
    def json(self):
        """et-sim --json's text, byte for byte."""
        return self._run.json()

    @property
    def text(self):
        """et-sim's text report (top= rows per table)."""
        return self._run.text()

    @property
    def notes(self):
        """The notes et-sim prints on stderr, without 'et-sim: note: '."""
        return [line.rstrip("\n").replace("et-sim: note: ", "", 1)
                for line in self._run.notes]

    @property
    def step(self):
        """The step against its truth: --json's 'step' object."""
        return self._dict.get("step")

    @property
    def steps(self):
        """Per rank and step: predicted step_us (and what bounds it)."""
        out = []
        for row in (self.step or {}).get("ranks", []):
            bounds = row.get("bounds") or []
            for k, us in enumerate(row.get("step_us", [])):
                for r in row["ranks"]:
                    rec = {"rank": r, "step": k, "step_us": us}
                    if k < len(bounds):
                        rec.update({"bound_" + key: v
                                    for key, v in bounds[k].items()
                                    if key != "step_us"})
                    out.append(rec)
        return _rows(out)

    @property
    def ranks(self):
        """One row per simulated rank: step, compute, communication, exposed
        communication and idle time (ns), and the memory model's peak."""
        out = []
        for row in self._dict.get("ranks", []):
            for r in row["ranks"]:
                rec = {k: v for k, v in row.items()
                       if k not in ("ranks", "memory_parts")}
                rec["rank"] = r
                rec["class_ranks"] = len(row["ranks"])
                for part, b in (row.get("memory_parts") or {}).items():
                    rec["memory_" + part + "_bytes"] = b
                out.append(rec)
        df = _rows(out)
        if len(df):
            df = df[["rank"] + [c for c in df.columns if c != "rank"]]
        return df

    def _report_table(self, name):
        if name not in self._tables:
            t = self._run.report_table(name)
            self._tables[name] = _frame(t) if t is not None else \
                _rows(self._dict.get(name, []))
        return self._tables[name]

    @property
    def ops(self):
        """The slowest rank's ops by total time: name, calls, total_ns,
        share (of its compute time)."""
        return self._report_table("ops")

    @property
    def gpu_kernels(self):
        """The slowest rank's GPU kernels (--json's 'gpu_kernels'): calls,
        total_ns, share of kernel time, tensor_cores, and the recorded time
        of the calls the trace timed (recorded_calls, recorded_ns,
        predicted_of_recorded_ns)."""
        return _rows(self._dict.get("gpu_kernels", []))

    @property
    def compare(self):
        """With compare=: the comparison (--json's 'compare': the steps,
        bounds, parts, ops and collectives before and after), else None."""
        return self.to_dict().get("compare")

    @property
    def compare_ops(self):
        """With compare=: the op groups by how far their simulated time
        moved (before_ns, after_ns, change), largest first."""
        return _rows((self.compare or {}).get("ops", []))

    @property
    def collectives(self):
        """The collectives by total time: type, group, group_size, bytes,
        calls, total_ns, wait_ns (for the slowest member), share (of all
        communication time), synthesized (by --dp-sync or --layout)."""
        return self._report_table("collectives")

    @property
    def critical_path(self):
        """The slowest rank's critical path in time order: node, name,
        start_ns, duration_ns."""
        return self._report_table("critical_path")

    @property
    def memory(self):
        """The memory model's verdict (--json's 'memory'), or None."""
        return self._dict.get("memory")

    @property
    def breakdown(self):
        """Per rank, the step's time by what it was spent on, as et-sim
        reports it: compute, exposed communication and idle (the rest), in
        us, and their shares of the step."""
        r = self.ranks
        if not len(r):
            return r
        out = _pd.DataFrame({"rank": r["rank"]})
        step = r["step_ns"] / 1e3
        out["step_us"] = step
        out["compute_us"] = r["compute_ns"] / 1e3
        out["communication_us"] = r["comm_ns"] / 1e3
        out["exposed_communication_us"] = r["exposed_comm_ns"] / 1e3
        out["idle_us"] = r["idle_ns"] / 1e3
        for c in ("compute", "exposed_communication", "idle"):
            out[c + "_pct"] = 100.0 * out[c + "_us"] / step.where(step > 0)
        return out

    @property
    def timeline(self):
        """Every simulated op of each rank class (its first rank stands for
        the others): the events et-sim --timeline writes."""
        if self._timeline is None:
            t = self._run.timeline()
            self._timeline = _frame(t) if t is not None else _pd.DataFrame()
        return self._timeline

    @property
    def memory_timeline(self):
        """The memory model's curve of each rank class (its first rank
        stands for the others), on the device its peak is about: one row
        per node in node order (the order the model walks it) with the
        node's simulated start_us and end_us (NaN where it did not run),
        allocated_bytes during it (its largest is the reported peak,
        ranks' peak_allocated_bytes) and those bytes by kind
        (parameters_bytes, gradients_bytes, ..., workspaces_bytes). Empty
        when no peak was predicted (no_memory=True, no tensor sizes)."""
        if "memory_timeline" not in self._tables:
            t = self._run.memory_timeline()
            self._tables["memory_timeline"] = \
                _frame(t) if t is not None else _pd.DataFrame()
        return self._tables["memory_timeline"]

    @property
    def sweep(self):
        """With sweep=: one row per point (None otherwise)."""
        s = self._dict.get("sweep")
        if s is None:
            return None
        out = []
        for p in s["points"]:
            rec = {k: v for k, v in p.items() if k != "groups"}
            for g in p.get("groups", []):
                rec["comm_%s_us" % g["name"]] = g["time_us"]
            out.append(rec)
        df = _rows(out)
        df.attrs.update({k: v for k, v in s.items() if k != "points"})
        return df

    @property
    def search(self):
        """With search=: one row per layout, ranked by predicted step
        (rank, layout, tp, pp, dp, ep, step_us, ..., peak_allocated_bytes,
        fits, over_bytes); attrs hold the world, the limits and the best
        layout that fits (None otherwise)."""
        s = self._dict.get("search")
        if s is None:
            return None
        out = []
        for p in s["layouts"]:
            rec = {k: v for k, v in p.items() if k != "groups"}
            for g in p.get("groups", []):
                rec["comm_%s_us" % g["name"]] = g["time_us"]
            out.append(rec)
        df = _rows(out)
        df.attrs.update({k: v for k, v in s.items() if k != "layouts"})
        return df

    def __repr__(self):
        step = (self.step or {}).get("predicted_us")
        return "<ettools.Result step %s us>" % step


def _positional(trace):
    return ["et-sim"] if trace is None else ["et-sim", str(
        trace.path if isinstance(trace, Trace) else trace)]


def simulate(trace, **options):
    """Runs et-sim on a Trace or a path, every flag a keyword (host_time=
    for --host-time; a list for a list flag). The checks and refusals are
    et-sim's; the GIL is released while it runs."""
    if isinstance(trace, Trace) and trace.pattern_ranks and \
            options.get("ranks") is None:
        options["ranks"] = int(trace.pattern_ranks)
    args = _positional(trace)
    what = "simulating " + (_os.path.basename(args[1]) if len(args) > 1
                            else "")
    with _progress_line(what.rstrip()):
        return Result(_ettools.simulate(args, options))


def sweep(trace, dp=None, **options):
    """et-sim --sweep dp=...: one row per value (world, step, compute,
    exposed communication, per-group collective time, memory)."""
    if dp is not None:
        if "sweep" in options:
            raise UsageError("give dp= or sweep=, not both")
        options["sweep"] = "dp=" + ",".join(str(int(v)) for v in dp)
    return simulate(trace, **options).sweep


def search(trace, world=None, **options):
    """et-sim --search world=N: every layout of N ranks the trace allows,
    one row each ranked by predicted step, with its memory peak per rank and
    whether it fits (attrs: best, limits, refused)."""
    if world is not None:
        if "search" in options:
            raise UsageError("give world= or search=, not both")
        options["search"] = "world=%d" % int(world)
    return simulate(trace, **options).search


def nccl_tests(op, **options):
    """et-sim --nccl-tests OP: the NCCL model's nccl-tests table."""
    d = _json.loads(_ettools.simulate(["et-sim"], dict(
        options, nccl_tests=op)).json())
    rows = d.get("rows", d.get("results", []))
    df = _rows(rows)
    df.attrs.update({k: v for k, v in d.items() if not isinstance(v, list)})
    return df


def temporal_breakdown(events):
    """HTA's temporal breakdown of device time per rank: the span from the
    first device op's start to the last one's end, split into time some
    compute kernel runs, time only communication or memory ops run
    (non-compute), and time nothing runs (idle), in us and % of the span.

    `events` is a Trace's nodes (device nodes with recorded times) or a
    Result's timeline (ops on GPU streams and channels); each op is
    'communication' when it communicates (or is an NCCL kernel), 'memory'
    when it is a memory op (or a Memcpy/Memset kernel), else 'compute'."""
    if "on_host" in events.columns:            # recorded nodes
        d = events[~events["on_host"] & events["start_us"].notna()]
        start = d["start_us"].to_numpy()
        end = start + d["duration_us"].to_numpy()
        kind = d["kind"].astype(str).to_numpy()
        # HTA's rule by name too: NCCL kernels communicate, memcpy and
        # memset kernels (Kineto's "Memcpy HtoD ...") are memory.
        name = d["name"].astype(str).str
        comm = _np.isin(kind, ["collective", "send", "recv"]) | \
            name.contains("nccl", case=False).to_numpy()
        memory = (kind == "memory") | name.match("Mem(cpy|set)").to_numpy()
        cls = _np.where(comm, "communication",
                        _np.where(memory, "memory", "compute"))
    else:                                      # simulated timeline
        d = events[~events["host"]]
        start = d["start_us"].to_numpy()
        end = d["end_us"].to_numpy()
        cls = _np.where(d["category"].astype(str).to_numpy() == "comm",
                        "communication", "compute")
    ranks = d["rank"].to_numpy()
    out = []
    for r in _np.unique(ranks):
        m = ranks == r
        s, e, c = start[m], end[m], cls[m]
        span = e.max() - s.min() if len(s) else 0.0
        busy = _union(s, e)
        compute = _union(s[c == "compute"], e[c == "compute"])
        out.append({"rank": int(r), "span_us": span,
                    "compute_us": compute,
                    "non_compute_us": busy - compute,
                    "idle_us": span - busy})
    df = _pd.DataFrame(out, columns=["rank", "span_us", "compute_us",
                                     "non_compute_us", "idle_us"])
    for c in ("compute", "non_compute", "idle"):
        df[c + "_pct"] = 100.0 * df[c + "_us"] / df["span_us"].where(
            df["span_us"] > 0)
    return df


def _union(start, end):
    """The length of the union of intervals [start, end)."""
    if len(start) == 0:
        return 0.0
    order = _np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = _np.maximum.accumulate(e)
    # A new run begins where an interval starts after all before it ended.
    new = _np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    run_start = s[new]
    run_end = _np.maximum.reduceat(e, _np.flatnonzero(new))
    return float((run_end - run_start).sum())
