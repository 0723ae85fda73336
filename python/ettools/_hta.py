"""Holistic Trace Analysis (HTA)'s GPU analyses over a recorded trace's nodes
(Trace.nodes) or a simulated run's timeline (Result.timeline): the kernel
breakdown by name and by kind, and the share of communication that
computation overlaps. docs/python.md says where they follow HTA's
definitions and where they differ.

HTA sorts a GPU event into a type by its name alone: communication (NCCL,
HCCL, RCCL kernels), memory (memcpy, memset, DMA), other (synchronisation
and launch events HTA counts as neither) and computation (the rest). Here
an event is also communication when the node model says it communicates
(a collective, send or receive node; a simulated comm op), and the kinds
split HTA's computation into GEMMs and the rest.
"""
import re

import numpy as np
import pandas as pd

# HTA's name rules (docs/python.md has the source), in the order it tests.
_COMMUNICATION = re.compile(r"^(nccl|hip|hccl)|ncclKernel")
_MEMORY = re.compile(r"^(hip)?Mem(cpy|set)|^dma")
_NOT_COMPUTATION = re.compile(
    r"^(nccl|hip|hccl)|Memcpy|Memset|dma|Sync|^Stream Wait Event"
    r"|^cuda.*LaunchKernel|^runFunction|^job_exe|^packet|^pe_exe"
    r"|^cpum_exe_subgraph|^collective_subgraph_execution")

_GEMM = re.compile(r"gemm", re.IGNORECASE)

HTA_TYPES = ("COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER")
KINDS = ("gemm", "communication", "memory", "other")


def hta_type(name):
    """HTA's kernel type of a GPU event's name."""
    if _COMMUNICATION.search(name):
        return "COMMUNICATION"
    if _MEMORY.search(name):
        return "MEMORY"
    if _NOT_COMPUTATION.search(name):
        return "OTHER"
    return "COMPUTATION"


def device_ops(events):
    """The GPU ops of a Trace's nodes (those with recorded times) or of a
    Result's timeline (ops on GPU streams and communication channels):
    rank, queue (the stream or resource), name, start_us, end_us,
    duration_us, hta_type and kind (gemm, communication, memory, other)."""
    if "on_host" in events.columns:            # recorded nodes
        d = events[~events["on_host"] & events["start_us"].notna()]
        start = d["start_us"].to_numpy(dtype=float)
        end = start + d["duration_us"].to_numpy(dtype=float)
        queue = d["queue"].astype(str) + " " + d["queue_number"].astype(str)
        comm = d["kind"].isin(["collective", "send", "recv"]).to_numpy()
    else:                                      # simulated timeline
        d = events[~events["host"]]
        start = d["start_us"].to_numpy(dtype=float)
        end = d["end_us"].to_numpy(dtype=float)
        queue = d["resource"].astype(str)
        comm = (d["category"].astype(str) == "comm").to_numpy()
    names = d["name"].astype(str)
    # One regex pass per distinct name, not per event.
    types = names.map({n: hta_type(n) for n in names.unique()}).to_numpy(
        dtype=object)
    types[comm] = "COMMUNICATION"
    # A GEMM by name, or by the node model where one of the name's ops is
    # the GEMM of its launcher (the converter marks the longest kernel an
    # aten::mm launches; its split-K reduction or epilogue keeps 'kernel').
    node_kind = d["kind"].astype(str).to_numpy()
    gemm_names = set(names[node_kind == "gemm"]) | {
        n for n in names.unique() if _GEMM.search(n)}
    gemm = names.isin(gemm_names).to_numpy()
    kind = np.where(types == "COMMUNICATION", "communication",
                    np.where((types == "MEMORY") | (node_kind == "memory"),
                             "memory", np.where(gemm, "gemm", "other")))
    return pd.DataFrame({
        "rank": d["rank"].to_numpy(), "queue": queue.to_numpy(),
        "name": names.to_numpy(), "start_us": start, "end_us": end,
        "duration_us": end - start, "hta_type": types, "kind": kind})


def kernel_breakdown(events):
    """Per rank, kind and kernel name: calls, total_us, mean_us, min_us,
    max_us, std_us (sample standard deviation, 0 for one call) and share_pct
    (of the rank's summed GPU op time), largest first; hta_type is HTA's
    type of the name. HTA's per-kernel table, without its folding of the
    smallest kernels into 'others' (a groupby away)."""
    ops = device_ops(events)
    g = ops.groupby(["rank", "kind", "hta_type", "name"], observed=True,
                    sort=False)["duration_us"]
    out = g.agg(calls="size", total_us="sum", mean_us="mean", min_us="min",
                max_us="max", std_us="std").reset_index()
    out["std_us"] = out["std_us"].fillna(0.0)
    rank_total = out.groupby("rank")["total_us"].transform("sum")
    out["share_pct"] = 100.0 * out["total_us"] / rank_total.where(
        rank_total > 0)
    out = out.sort_values(["rank", "total_us", "name"],
                          ascending=[True, False, True], kind="stable")
    return out[["rank", "kind", "name", "calls", "total_us", "mean_us",
                "min_us", "max_us", "std_us", "share_pct",
                "hta_type"]].reset_index(drop=True)


def kernel_type_breakdown(events, by="hta_type", include_memory=False):
    """Per rank, the time the GPU runs each type of op, as HTA's kernel type
    breakdown counts it: each type's ops merged into a union, and the time
    split by which types run at once ('COMPUTATION overlapping
    COMMUNICATION' is its own row); total_us and share_pct of the rank's
    busy time. by='hta_type' (HTA's COMPUTATION and COMMUNICATION, and
    MEMORY with include_memory=True, as HTA) or by='kind' (gemm,
    communication, memory, other: every op)."""
    ops = device_ops(events)
    if by == "hta_type":
        types = ["COMPUTATION", "COMMUNICATION"] + (
            ["MEMORY"] if include_memory else [])
    elif by == "kind":
        types = list(KINDS)
    else:
        raise ValueError("by= is 'hta_type' or 'kind', not %r" % (by,))
    rows = []
    for rank, mine in ops.groupby("rank", sort=True):
        times, steps = [], []
        for bit, t in enumerate(types):
            sel = mine[mine[by] == t]
            s, e = merge_intervals(sel["start_us"].to_numpy(),
                                   sel["end_us"].to_numpy())
            times += [s, e]
            steps += [np.full(len(s), 1 << bit), np.full(len(e), -(1 << bit))]
        time = np.concatenate(times)
        step = np.concatenate(steps)
        order = np.argsort(time, kind="stable")
        time, running = time[order], np.cumsum(step[order])
        length = np.diff(time, append=time[-1] if len(time) else 0.0)
        by_label = {}
        for value, dur in zip(running, length):
            if value <= 0 or dur <= 0:
                continue
            label = " overlapping ".join(
                t for bit, t in enumerate(types) if value & (1 << bit))
            by_label[label] = by_label.get(label, 0.0) + dur
        busy = sum(by_label.values())
        for label, us in sorted(by_label.items(), key=lambda kv: -kv[1]):
            rows.append({"rank": int(rank), by: label, "total_us": us,
                         "share_pct": 100.0 * us / busy})
    return pd.DataFrame(rows, columns=["rank", by, "total_us", "share_pct"])


def comm_comp_overlap(events):
    """Per rank, HTA's communication/computation overlap: the time some
    communication op and some computation op (HTA's COMPUTATION: not
    communication, memory or sync) run at once, over the time
    communication runs (each a union of intervals): comm_us, overlap_us,
    overlap_pct (NaN without communication)."""
    ops = device_ops(events)
    rows = []
    for rank, mine in ops.groupby("rank", sort=True):
        comm = mine[mine["hta_type"] == "COMMUNICATION"]
        comp = mine[mine["hta_type"] == "COMPUTATION"]
        cs, ce = merge_intervals(comm["start_us"].to_numpy(),
                                 comm["end_us"].to_numpy())
        ps, pe = merge_intervals(comp["start_us"].to_numpy(),
                                 comp["end_us"].to_numpy())
        comm_us = float((ce - cs).sum())
        overlap_us = intersection_length(cs, ce, ps, pe)
        rows.append({"rank": int(rank), "comm_us": comm_us,
                     "overlap_us": overlap_us,
                     "overlap_pct": 100.0 * overlap_us / comm_us
                     if comm_us > 0 else np.nan})
    return pd.DataFrame(rows, columns=["rank", "comm_us", "overlap_us",
                                       "overlap_pct"])


def merge_intervals(start, end):
    """The union of intervals [start, end) as sorted disjoint intervals."""
    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    s, e = np.asarray(start, float)[order], np.asarray(end, float)[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first)


def intersection_length(a_start, a_end, b_start, b_end):
    """The length of the intersection of two unions of disjoint intervals."""
    total, i, j = 0.0, 0, 0
    while i < len(a_start) and j < len(b_start):
        lo = max(a_start[i], b_start[j])
        hi = min(a_end[i], b_end[j])
        if hi > lo:
            total += hi - lo
        if a_end[i] < b_end[j]:
            i += 1
        else:
            j += 1
    return float(total)


IDLE_CATEGORIES = ("host_wait", "kernel_wait", "other")


def idle_time_breakdown(source, kernel_wait_us=30.0):
    """HTA's idle time by cause, per rank and GPU stream (not the channels
    a CPU run's collectives take): each gap between
    an op and the one before it on its stream is host_wait when the op was
    launched after the one before ended (the host was late), else
    kernel_wait when shorter than kernel_wait_us (HTA's
    consecutive_kernel_delay, 30 in the trace's microseconds), else other.
    idle_us per category and idle_ratio of the stream's idle time.

    `source` is a Trace or its nodes (the launch is launch_us, the start of
    the runtime call that launched the op, as HTA reads it; NaN where the
    trace has none, such as an nsys export's or an ET+ file's, and then no
    gap is host_wait) or a Result's timeline (the launch is the op's
    simulated issue time)."""
    if isinstance(source, pd.DataFrame) and "issue_us" in source.columns:
        d = source[~source["host"] &           # a simulated timeline
                   source["resource"].astype(str).str.contains("stream")]
        ops = pd.DataFrame({
            "rank": d["rank"].to_numpy(),
            "queue": d["resource"].astype(str).to_numpy(),
            "start_us": d["start_us"].to_numpy(dtype=float),
            "end_us": d["end_us"].to_numpy(dtype=float),
            "launch_us": d["issue_us"].to_numpy(dtype=float)})
    else:                                      # a Trace, or its nodes
        nodes = source.nodes if hasattr(source, "nodes") else source
        d = nodes[~nodes["on_host"] & nodes["start_us"].notna() &
                  (nodes["queue"].astype(str) == "stream")]
        ops = pd.DataFrame({
            "rank": d["rank"].to_numpy(),
            "queue": (d["queue"].astype(str) + " " +
                      d["queue_number"].astype(str)).to_numpy(),
            "start_us": d["start_us"].to_numpy(dtype=float),
            "end_us": (d["start_us"] + d["duration_us"]).to_numpy(
                dtype=float),
            "launch_us": d["launch_us"].to_numpy(dtype=float)})
    rows = []
    for (rank, queue), mine in ops.groupby(["rank", "queue"], sort=True):
        mine = mine.sort_values("start_us", kind="stable")
        prev_end = mine["end_us"].shift(1).to_numpy()
        gap = mine["start_us"].to_numpy() - prev_end
        host = mine["launch_us"].to_numpy() > prev_end
        kernel = ~host & (gap < kernel_wait_us)
        other = ~host & ~kernel & ~np.isnan(gap)
        idle = {"host_wait": gap[host].sum(), "kernel_wait": gap[kernel].sum(),
                "other": gap[other].sum()}
        total = sum(idle.values())
        for category in IDLE_CATEGORIES:
            rows.append({"rank": int(rank), "queue": queue,
                         "idle_category": category,
                         "idle_us": float(idle[category]),
                         "idle_ratio": idle[category] / total
                         if total > 0 else np.nan})
    return pd.DataFrame(rows, columns=["rank", "queue", "idle_category",
                                       "idle_us", "idle_ratio"])


def critical_path(trace):
    """The recorded trace's critical path, per rank: the chain of dependent
    nodes (trace.deps) that ends last, walked back in time from the end of
    the node that ends last, in the spirit of HTA's critical path (a node's
    start and end as events, its dependencies as edges):

    - at a node's end: a host node that a device node it depends on ended
      during (a sync: aten::item waiting for a kernel) ended because of the
      last such one, else because it ran since its start;
    - at a node's start: it waited for the node it depends on that ended
      last by then (the gap is wait_us); if every one still ran (a kernel
      its launcher was launching), it began inside the one that started
      last, whose time up to here is on the path.

    Rows in time order, one per stretch of a node on the path: rank, id,
    name, kind, queue, start_us, end_us (the node's), path_start_us,
    path_end_us, path_us (the stretch), wait_us (the gap before it); per
    rank, path_us and wait_us sum to the span from the path's start to the
    last end."""
    nodes = trace.nodes
    timed = nodes[nodes["start_us"].notna()]
    deps = trace.deps[["rank", "dst", "src"]].drop_duplicates()
    rows = []
    for rank, mine in timed.groupby("rank", sort=True):
        rows += _rank_critical_path(int(rank), mine,
                                    deps[deps["rank"] == rank])
    return pd.DataFrame(rows, columns=[
        "rank", "id", "name", "kind", "queue", "start_us", "end_us",
        "path_start_us", "path_end_us", "path_us", "wait_us"])


def _rank_critical_path(rank, mine, deps):
    ids = mine["id"].to_numpy()
    start = dict(zip(ids, mine["start_us"].to_numpy(dtype=float)))
    end = dict(zip(ids, (mine["start_us"] + mine["duration_us"]).to_numpy(
        dtype=float)))
    host = dict(zip(ids, mine["on_host"].to_numpy()))
    preds = {}
    for dst, src in deps[["dst", "src"]].itertuples(index=False):
        if src in start and dst in start:
            preds.setdefault(dst, []).append(src)
    node = max(ids, key=lambda i: (end[i], i))
    t = end[node]
    stretches = []  # (node, from_us, to_us, wait_us before it), backwards
    for _ in range(3 * len(ids) + 1):
        cands = preds.get(node, [])
        synced = [p for p in cands if host[node] and not host[p]
                  and start[node] < end[p] <= t]
        if synced:
            p = max(synced, key=lambda q: (end[q], q))
            stretches.append((node, end[p], t, 0.0))
            node, t = p, end[p]
            continue
        done = [p for p in cands if end[p] <= start[node]]
        if done:
            p = max(done, key=lambda q: (end[q], q))
            stretches.append((node, start[node], t, start[node] - end[p]))
            node, t = p, end[p]
        elif cands:
            p = max(cands, key=lambda q: (start[q], q))
            stretches.append((node, start[node], t, 0.0))
            node, t = p, min(start[node], end[p])
        else:
            stretches.append((node, start[node], t, 0.0))
            break
    info = mine.set_index("id")
    rows = []
    for node, lo, hi, wait in reversed(stretches):
        row = info.loc[node]
        rows.append({
            "rank": rank, "id": int(node), "name": str(row["name"]),
            "kind": str(row["kind"]),
            "queue": "%s %d" % (row["queue"], row["queue_number"]),
            "start_us": start[node], "end_us": end[node],
            "path_start_us": lo, "path_end_us": hi, "path_us": hi - lo,
            "wait_us": wait})
    return rows
