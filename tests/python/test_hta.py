"""ettools' HTA analyses (kernel breakdown, kernel type breakdown,
communication/computation overlap) against HTA's definitions computed by
hand, straight from the Kineto events of the public traces HTA ships in its
tests (HTA itself is not installable here: no package index), on the
converted trace's nodes; and on a simulated timeline."""
import bisect
import collections
import gzip
import json
import os
import statistics

import pytest

import ettools
from conftest import SHARED

TRACES = [
    ("hta/simple_add_et.json.gz", "hta/simple_add_kineto.json.gz"),
    (None, "hta/sampled_rank-0_kineto.json.gz"),
    (None, "hta/sampled_rank-1_kineto.json.gz"),
    (None, "kineto-only/hta_alexnet_trace.json.gz"),
]


def hta_type_by_hand(name):
    """HTA's kernel types (hta/common/types.py at f4d0062), spelled out."""
    if name.startswith(("nccl", "hip", "hccl")) or "ncclKernel" in name:
        return "COMMUNICATION"
    if name.startswith(("Memcpy", "Memset", "hipMemcpy", "hipMemset", "dma")):
        return "MEMORY"
    if any(w in name for w in ("Memcpy", "Memset", "dma", "Sync")) or \
            name.startswith(("Stream Wait Event", "runFunction", "job_exe",
                             "packet", "pe_exe", "cpum_exe_subgraph",
                             "collective_subgraph_execution")) or \
            (name.startswith("cuda") and "LaunchKernel" in name):
        return "OTHER"
    return "COMPUTATION"


def gpu_events(kineto):
    events = json.load(gzip.open(kineto))["traceEvents"]
    return [(e["ts"], e["ts"] + e["dur"], e["name"],
             hta_type_by_hand(e["name"])) for e in events
            if e.get("ph") == "X" and e.get("cat") in
            ("kernel", "gpu_memcpy", "gpu_memset")]


def union(intervals):
    merged = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def covers(merged, t):
    i = bisect.bisect_right([s for s, _ in merged], t) - 1
    return i >= 0 and merged[i][0] <= t < merged[i][1]


def segments(merged_by_type):
    """Each elementary stretch between boundaries: (length, types running)."""
    cuts = sorted({x for m in merged_by_type.values() for iv in m
                   for x in iv})
    for lo, hi in zip(cuts, cuts[1:]):
        mid = (lo + hi) / 2
        yield hi - lo, [t for t, m in merged_by_type.items() if covers(m, mid)]


@pytest.fixture(scope="module")
def converted(workdir):
    out = {}
    for et, kineto in TRACES:
        path = workdir / ("hta_" + os.path.basename(kineto) + ".et")
        if et:
            ettools.convert(SHARED / et, path, kineto=SHARED / kineto)
        else:
            ettools.convert(SHARED / kineto, path)
        out[kineto] = ettools.load(path).nodes
    return out


@pytest.mark.parametrize("kineto", [k for _, k in TRACES])
def test_kernel_breakdown_is_hta_definition(converted, kineto):
    """Per kernel name: calls, total, min, max, mean and standard deviation
    of the GPU events of that name, and HTA's type."""
    want = collections.defaultdict(list)
    types = {}
    for s, e, name, t in gpu_events(SHARED / kineto):
        want[name].append(e - s)
        types[name] = t
    got = ettools.kernel_breakdown(converted[kineto])
    assert set(got["rank"]) == {0} or len(set(got["rank"])) == 1
    assert set(got["name"]) == set(want)
    total = sum(sum(d) for d in want.values())
    for _, row in got.iterrows():
        d = want[row["name"]]
        assert row["calls"] == len(d)
        assert row["total_us"] == pytest.approx(sum(d), abs=1e-3)
        assert row["min_us"] == pytest.approx(min(d), abs=1e-3)
        assert row["max_us"] == pytest.approx(max(d), abs=1e-3)
        assert row["mean_us"] == pytest.approx(statistics.mean(d), abs=1e-3)
        std = statistics.stdev(d) if len(d) > 1 else 0.0
        assert row["std_us"] == pytest.approx(std, abs=1e-3)
        assert row["share_pct"] == pytest.approx(100 * sum(d) / total)
        assert row["hta_type"] == types[row["name"]]
    # Largest first, and the kinds split HTA's types without mixing them.
    assert list(got["total_us"]) == sorted(got["total_us"], reverse=True)
    pairs = set(zip(got["kind"], got["hta_type"]))
    assert pairs <= {("gemm", "COMPUTATION"), ("other", "COMPUTATION"),
                     ("other", "OTHER"), ("communication", "COMMUNICATION"),
                     ("memory", "MEMORY")}


@pytest.mark.parametrize("kineto", [k for _, k in TRACES])
def test_kernel_type_breakdown_is_hta_definition(converted, kineto):
    """HTA's kernel type table: the time computation, communication (and
    memory) run, alone or overlapping, each a union."""
    events = gpu_events(SHARED / kineto)
    for include_memory in (False, True):
        types = ["COMPUTATION", "COMMUNICATION"] + (
            ["MEMORY"] if include_memory else [])
        merged = {t: union([(s, e) for s, e, _, k in events if k == t])
                  for t in types}
        want = collections.Counter()
        for length, running in segments(merged):
            if running:
                want[" overlapping ".join(running)] += length
        got = ettools.kernel_type_breakdown(converted[kineto],
                                            include_memory=include_memory)
        assert dict(zip(got["hta_type"], got["total_us"])) == \
            pytest.approx(dict(want), abs=1e-3)
        assert got["share_pct"].sum() == pytest.approx(100.0)


@pytest.mark.parametrize("kineto", [k for _, k in TRACES])
def test_comm_comp_overlap_is_hta_definition(converted, kineto):
    """HTA's overlap: of the time NCCL kernels run (their union), the share
    during which a computation kernel runs too."""
    events = gpu_events(SHARED / kineto)
    merged = {t: union([(s, e) for s, e, _, k in events if k == t])
              for t in ("COMPUTATION", "COMMUNICATION")}
    comm = sum(e - s for s, e in merged["COMMUNICATION"])
    overlap = sum(length for length, running in segments(merged)
                  if len(running) == 2)
    got = ettools.comm_comp_overlap(converted[kineto])
    assert len(got) == 1
    assert got["comm_us"][0] == pytest.approx(comm, abs=1e-3)
    assert got["overlap_us"][0] == pytest.approx(overlap, abs=1e-3)
    if comm:
        assert got["overlap_pct"][0] == pytest.approx(100 * overlap / comm)


def test_sampled_ranks_communicate_and_overlap(converted):
    """What the test above must not pass vacuously on: the sampled 128-rank
    job's ranks run NCCL kernels, partly under computation."""
    for kineto in ("hta/sampled_rank-0_kineto.json.gz",
                   "hta/sampled_rank-1_kineto.json.gz"):
        o = ettools.comm_comp_overlap(converted[kineto])
        assert o["comm_us"][0] > 0
        assert 0 < o["overlap_pct"][0] < 100


def test_analyses_of_the_simulated_run(converted, workdir):
    """The same functions read a simulated timeline: its GPU ops by stream
    and channel, with the node model's kinds."""
    path = workdir / "hta_sampled_rank-0_kineto.json.gz.et"
    tl = ettools.simulate(str(path)).timeline
    kb = ettools.kernel_breakdown(tl)
    device = tl[~tl["host"]]
    assert kb["calls"].sum() == len(device)
    assert kb["total_us"].sum() == pytest.approx(device["duration_us"].sum())
    assert set(kb["kind"]) >= {"gemm", "communication", "other"}
    o = ettools.comm_comp_overlap(tl)
    comm = device[device["category"] == "comm"]
    assert o["comm_us"][0] <= comm["duration_us"].sum() + 1e-6
    assert 0 <= o["overlap_pct"][0] <= 100


def hta_idle_by_hand(kineto, kernel_wait_us=30):
    """HTA's idle time breakdown per stream, from the Kineto events: gaps
    between consecutive GPU events of a stream; host wait where the runtime
    call that launched the event (by correlation id) started after the one
    before ended, else kernel wait below the threshold, else other."""
    events = json.load(gzip.open(kineto))["traceEvents"]
    runtime = {e["args"]["correlation"]: e["ts"] for e in events
               if e.get("ph") == "X" and e.get("cat") in
               ("cuda_runtime", "cuda_driver")
               and "correlation" in e.get("args", {})}
    by_stream = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy",
                                                    "gpu_memset"):
            by_stream[e["args"]["stream"]].append(
                (e["ts"], e["ts"] + e["dur"],
                 runtime.get(e["args"].get("correlation"))))
    out = {}
    for stream, ops in by_stream.items():
        ops.sort(key=lambda o: o[0])
        idle = collections.Counter({"host_wait": 0, "kernel_wait": 0,
                                    "other": 0})
        for (_, prev_end, _), (start, _, launch) in zip(ops, ops[1:]):
            gap = start - prev_end
            if launch is not None and launch > prev_end:
                idle["host_wait"] += gap
            elif gap < kernel_wait_us:
                idle["kernel_wait"] += gap
            else:
                idle["other"] += gap
        out["stream %d" % stream] = idle
    return out


@pytest.mark.parametrize("kineto", [k for _, k in TRACES])
def test_idle_time_breakdown_is_hta_definition(converted, kineto):
    """Each stream's idle time by cause is HTA's: the converter keeps each
    GPU op's launch (its runtime call's start) as launch_us."""
    got = ettools.idle_time_breakdown(converted[kineto])
    want = hta_idle_by_hand(SHARED / kineto)
    assert set(got["queue"]) == set(want)
    for stream, idle in want.items():
        mine = got[got["queue"] == stream].set_index("idle_category")
        for category, us in idle.items():
            assert mine["idle_us"][category] == pytest.approx(us, abs=1e-3)


def test_idle_time_breakdown_finds_each_cause(converted):
    """Not vacuous: on the sampled rank most idle time is the host's, and
    there are kernel waits and other waits too."""
    got = ettools.idle_time_breakdown(
        converted["hta/sampled_rank-0_kineto.json.gz"])
    by_cause = got.groupby("idle_category")["idle_us"].sum()
    assert by_cause["host_wait"] > 0.5 * by_cause.sum()
    assert by_cause["kernel_wait"] > 0 and by_cause["other"] > 0


def test_idle_time_breakdown_of_the_simulated_run(workdir):
    """On a simulated timeline the launch is the op's issue time: each
    stream's idle time is the gaps between its ops."""
    path = workdir / "hta_sampled_rank-0_kineto.json.gz.et"
    tl = ettools.simulate(str(path)).timeline
    got = ettools.idle_time_breakdown(tl)
    for queue, mine in got.groupby("queue"):
        ops = tl[tl["resource"].astype(str) == queue].sort_values("start_us")
        gaps = ops["start_us"].to_numpy()[1:] - ops["end_us"].to_numpy()[:-1]
        assert mine["idle_us"].sum() == pytest.approx(gaps.sum(), abs=1e-3)
    assert got["idle_us"].sum() > 0


@pytest.mark.parametrize("kineto", [k for _, k in TRACES])
def test_launch_is_the_runtime_call(converted, kineto):
    """launch_us: the start of the runtime call of the same correlation id,
    for every GPU op that has one, and before the op starts."""
    events = json.load(gzip.open(SHARED / kineto))["traceEvents"]
    runtime = {e["args"]["correlation"]: e["ts"] for e in events
               if e.get("ph") == "X" and e.get("cat") in
               ("cuda_runtime", "cuda_driver")
               and "correlation" in e.get("args", {})}
    want = sorted(runtime[e["args"]["correlation"]] for e in events
                  if e.get("ph") == "X" and e.get("cat") in
                  ("kernel", "gpu_memcpy", "gpu_memset")
                  and e["args"].get("correlation") in runtime)
    nodes = converted[kineto]
    gpu = nodes[~nodes["on_host"]]
    got = sorted(gpu["launch_us"].dropna())
    assert got == pytest.approx(want, abs=1e-3)
    launched = gpu[gpu["launch_us"].notna()]
    assert (launched["launch_us"] <= launched["start_us"]).all()
    assert nodes[nodes["on_host"]]["launch_us"].isna().all()


@pytest.fixture(scope="module")
def gpt2_trace(workdir):
    """The H100 GPT-2 step of ../shared/traces, ET with its Kineto trace."""
    et = workdir / "hta_gpt2.et"
    ettools.convert(SHARED / "h100/gpt2_et.json.gz", et,
                    kineto=SHARED / "h100/gpt2_kineto.json.gz")
    return ettools.load(et)


@pytest.mark.parametrize("which", ["demo", "gpt2", "sampled"])
def test_critical_path_is_a_chain_of_dependencies(which, demo, gpt2_trace,
                                                  converted, workdir):
    """The recorded critical path: each node on it depends on the one before
    (trace.deps), it ends at the rank's last end, its stretches and waits
    tile the span, it starts at a node that depends on nothing timed, and
    each wait is for the dependency that ended last by then."""
    if which == "demo":
        trace = ettools.load(demo, ranks=4)
    elif which == "gpt2":
        trace = gpt2_trace
    else:
        trace = ettools.load(workdir /
                             "hta_sampled_rank-0_kineto.json.gz.et")
    cp = ettools.critical_path(trace)
    nodes = trace.nodes[trace.nodes["start_us"].notna()]
    end = dict(zip(zip(nodes["rank"], nodes["id"]),
                   nodes["start_us"] + nodes["duration_us"]))
    preds = collections.defaultdict(set)
    for r, dst, src in trace.deps[["rank", "dst", "src"]].itertuples(
            index=False):
        if (r, src) in end:
            preds[(r, dst)].add(src)
    assert set(cp["rank"]) == set(nodes["rank"])
    for rank, path in cp.groupby("rank"):
        path = path.reset_index(drop=True)
        mine = nodes[nodes["rank"] == rank]
        last_end = (mine["start_us"] + mine["duration_us"]).max()
        assert path["path_end_us"].iloc[-1] == pytest.approx(last_end)
        assert path["end_us"].iloc[-1] == pytest.approx(last_end)
        span = last_end - path["path_start_us"].iloc[0]
        assert (path["path_us"].sum() + path["wait_us"].sum()) == \
            pytest.approx(span)
        assert (path["path_us"] >= -1e-9).all()
        assert (path["wait_us"] >= 0).all()
        assert not preds[(rank, path["id"].iloc[0])]
        for k in range(1, len(path)):
            here, before = path.iloc[k], path.iloc[k - 1]
            assert before["id"] in preds[(rank, here["id"])]
            assert before["path_end_us"] + here["wait_us"] == \
                pytest.approx(here["path_start_us"])
            if here["wait_us"] > 0:
                # It waited for what ended last among its dependencies.
                latest = max(end[(rank, p)] for p in preds[(rank, here["id"])]
                             if end[(rank, p)] <= here["start_us"])
                assert end[(rank, before["id"])] == latest
    assert len(cp) > 10
