#!/usr/bin/env python3
"""Writes a small ET + Kineto pair where sibling ops start in the same microsecond.

Made for this project (not recorded): it reproduces, at a small size, what an 8-rank
DLRM pair (V100, PyTorch 2.x) showed. Each of 61 sparse-feature blocks runs
`aten::lift_fresh` (0 us) then `aten::detach_` (2 us); in some blocks both start in the
same microsecond. Kineto's `Ev Idx` and `External id` give their true order, but a
linker that orders equal starts "longer first" swaps them, and a greedy aligner then
resynchronises at the next block's `aten::lift_fresh`, one block off. Blocks differ
(an `aten::cat` every third, an `aten::relu` every fifth) so an off-by-one-block
alignment loses matches and gives ops the times of the wrong block.

Like a PyTorch 2.x trace before 2.3, the ET has `rf_id`s but Kineto has no
`Record function id`, so the two are matched by name and order. Ground truth for
tests: each Kineto op's `External id` equals the id of its ET twin. Kineto also
records one op the ET lacks (`aten::detach` in each block), as real traces do.

Usage: make_equal_start_pair.py OUT_DIR  (writes equal_start_et.json.gz,
equal_start_kineto.json.gz and equal_start_noorder_kineto.json.gz, the same events
without `Ev Idx`; the output is byte-for-byte reproducible).
"""
import gzip
import json
import os
import sys

BLOCKS = 61
SAME_START_BLOCKS = {3, 17, 30, 44, 58}  # lift_fresh and detach_ start together


def block_ops(i):
    """(name, duration us, children) of block i, in start order."""
    ops = [("aten::lift_fresh", 0, []), ("aten::detach_", 2, [])]
    ops.append(("aten::to", 9, [("aten::_to_copy", 7, [("aten::empty_strided", 1, []),
                                                        ("aten::copy_", 4, [])])]))
    if i % 3 == 0:
        ops.append(("aten::cat", 5, []))
    if i % 5 == 0:
        ops.append(("aten::relu", 3, [("aten::clamp_min", 2, [])]))
    ops.append(("aten::embedding_bag", 12, [("aten::_embedding_bag", 10, [])]))
    return ops


def main():
    out_dir = sys.argv[1]
    nodes = [
        {"name": "[pytorch|profiler|execution_graph|process]", "id": 1, "parent": 1},
        {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "parent": 1},
    ]
    events = []
    state = {"id": 3, "rf": 1, "ev": 1, "ts": 1700000000000}  # Ev Idx 0: the step

    def emit(name, dur, children, parent, ts):
        node_id = state["id"]
        state["id"] += 1
        nodes.append({"name": name, "id": node_id, "parent": parent, "rf_id": state["rf"]})
        state["rf"] += 1
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": 100,
                       "ts": ts, "dur": dur,
                       "args": {"External id": node_id, "Ev Idx": state["ev"]}})
        state["ev"] += 1
        child_ts = ts + (1 if children else 0)
        for c_name, c_dur, c_children in children:
            emit(c_name, c_dur, c_children, node_id, child_ts)
            child_ts += c_dur
        return node_id

    step_start = state["ts"]
    ts = step_start + 1
    for i in range(BLOCKS):
        for k, (name, dur, children) in enumerate(block_ops(i)):
            emit(name, dur, children, 2, ts)
            # lift_fresh takes 0 us; in the same-start blocks detach_ starts with it.
            if not (k == 0 and i in SAME_START_BLOCKS):
                ts += max(dur, 1)
            if name == "aten::detach_":  # Kineto-only: the ET does not record it
                events.append({"ph": "X", "cat": "cpu_op", "name": "aten::detach",
                               "pid": 100, "tid": 100, "ts": ts, "dur": 1,
                               "args": {"External id": 100000 + state["ev"],
                                        "Ev Idx": state["ev"]}})
                state["ev"] += 1
                ts += 1
    events.insert(0, {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2",
                      "pid": 100, "tid": 100, "ts": step_start, "dur": ts - step_start + 1,
                      "args": {"External id": 2, "Ev Idx": 0}})
    for n in nodes:
        n.update({"tid": 1, "fw_parent": 0, "seq_id": -1, "scope": 0, "fw_tid": 0,
                  "op_schema": "", "inputs": [], "input_shapes": [], "input_types": [],
                  "outputs": [], "output_shapes": [], "output_types": []})
        n.setdefault("rf_id", 0)
    et = {"schema": "1.0.1", "pid": 100, "time": "generated", "start_ts": 0,
          "finish_ts": 0, "nodes": nodes}
    kineto = {"schemaVersion": 1, "traceEvents": events}
    # The same events as a profiler that records no issue order would write them
    # (no `Ev Idx`, no `External id` on the step annotation): only a global
    # alignment then keeps every block in its place.
    bare = {"schemaVersion": 1, "traceEvents": []}
    for e in events:
        e = json.loads(json.dumps(e))
        del e["args"]["Ev Idx"]
        if e["cat"] == "user_annotation":
            del e["args"]["External id"]
        bare["traceEvents"].append(e)
    for name, doc in (("equal_start_et.json.gz", et), ("equal_start_kineto.json.gz", kineto),
                      ("equal_start_noorder_kineto.json.gz", bare)):
        with open(os.path.join(out_dir, name), "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
                f.write(json.dumps(doc, separators=(",", ":")).encode())


if __name__ == "__main__":
    main()
