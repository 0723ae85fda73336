#!/usr/bin/env python3
"""Writes golden_tiny_et.json, the smallest ET that exercises every decision of the
converter's graph stages, for the golden-file test (tests/converter/golden_test.cc).

Made for this project (not recorded): one training step of a one-layer model in the
ET 1.1.0 nested layout PyTorch 2.x writes (`ctrl_deps` = parent, `inputs`/`outputs`
objects, typed `attrs`):

* a process-group table (`## process_group:init ##`, two ranks) and profiler roots;
* `ProfilerStep#0`, a container whose time its children carry;
* `aten::linear` (a GEMM) with `aten::t` and `aten::addmm` folded into it;
* `aten::relu` and `aten::sum` reading the previous op's output (data deps);
* the autograd thread (tid 2): `autograd::engine::evaluate_function: MmBackward0`, a
  container, around `aten::mm`; its ids fall inside step 0's id range although it is
  not under the step's span;
* the optimizer (`Optimizer.step#SGD.step`, a container) updating the weight in place;
* an all-reduce of the weight's gradient as `record_param_comms` (sequence number 0,
  process group "0") with its `nccl:all_reduce` work record nested under it.

Usage: make_golden_tiny.py OUT_DIR  (writes golden_tiny_et.json; reproducible).
"""
import json
import os
import sys


def tensor(tid, numel):
    return [tid, tid, 0, numel, 4, "cuda:0"]


X, W, Y, R, S, WT, GW = 100, 101, 102, 103, 104, 106, 107
# Input x [8, 16], weight w [4, 16]: y = x w^T is [8, 4].
SHAPE = {X: [8, 16], W: [4, 16], Y: [8, 4], R: [8, 4], S: [], WT: [16, 4], GW: [4, 16]}


def numel(t):
    n = 1
    for d in SHAPE[t]:
        n *= d
    return n


def io(values, shapes, types):
    return {"values": values, "shapes": shapes, "types": types}


def tensors(ids):
    return io([tensor(t, numel(t)) for t in ids], [SHAPE[t] for t in ids],
              ["Tensor(float)"] * len(ids))


def node(nid, parent, name, tid=1, inputs=(), outputs=(), rf_id=None, extra_attrs=()):
    attrs = [
        {"name": "rf_id", "type": "uint64", "value": rf_id if rf_id is not None else nid},
        {"name": "fw_parent", "type": "uint64", "value": 0},
        {"name": "seq_id", "type": "int64", "value": -1},
        {"name": "scope", "type": "uint64", "value": 0},
        {"name": "tid", "type": "uint64", "value": tid},
        {"name": "fw_tid", "type": "uint64", "value": 0},
        {"name": "op_schema", "type": "string", "value": ""},
    ] + list(extra_attrs)
    return {
        "id": nid, "name": name, "ctrl_deps": parent,
        "inputs": inputs if isinstance(inputs, dict) else tensors(inputs),
        "outputs": outputs if isinstance(outputs, dict) else tensors(outputs),
        "attrs": attrs,
    }


PG_TABLE = json.dumps([{"pg_name": "0", "pg_desc": "default_pg",
                        "backend_config": "cuda:nccl", "ranks": [0, 1],
                        "group_size": 2, "group_count": 1}])

NODES = [
    node(1, 0, "[pytorch|profiler|execution_trace|process]"),
    node(2, 1, "[pytorch|profiler|execution_trace|thread]"),
    node(3, 2, "## process_group:init ##",
         inputs=io([PG_TABLE], [[]], ["String"])),
    node(4, 2, "ProfilerStep#0"),
    node(5, 4, "aten::linear", inputs=[X, W], outputs=[Y]),
    node(6, 5, "aten::t", inputs=[W], outputs=[WT]),
    node(7, 5, "aten::addmm", inputs=[X, WT], outputs=[Y]),
    node(8, 4, "aten::relu", inputs=[Y], outputs=[R]),
    node(9, 4, "aten::sum", inputs=[R], outputs=[S]),
    node(10, 1, "[pytorch|profiler|execution_trace|thread]", tid=2),
    node(11, 10, "autograd::engine::evaluate_function: MmBackward0", tid=2),
    node(12, 11, "aten::mm", tid=2, inputs=[WT, X], outputs=[GW]),
    node(13, 4, "Optimizer.step#SGD.step"),
    node(14, 13, "aten::add_", inputs=[W, GW], outputs=[W]),
    node(15, 4, "record_param_comms",
         inputs=io([[tensor(GW, 64)], 0, ["0", "default_pg"], 0, "allreduce", [], [],
                    0, 1, 2],
                   [[[64]], [], [[], []], [], [], [], [], [], [], []],
                   ["GenericList[Tensor(float)]", "Int", "Tuple[String,String]", "Int",
                    "String", "GenericList[]", "GenericList[]", "Int", "Int", "Int"]),
         extra_attrs=[
             {"name": "collective_name", "type": "string", "value": "allreduce"},
             {"name": "dtype", "type": "string", "value": "Float"},
             {"name": "in_msg_nelems", "type": "uint64", "value": 64},
             {"name": "pg_name", "type": "string", "value": "0"},
         ]),
    node(16, 15, "nccl:all_reduce",
         inputs=io([[tensor(GW, 64)]], [[[64]]], ["GenericList[Tensor(float)]"])),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_golden_tiny.py OUT_DIR")
    trace = {"schema": "1.1.0-chakra.0.0.4", "pid": 4242, "time": "2026-11-23 00:00:00",
             "start_ts": 1000, "nodes": NODES, "finish_ts": 2000}
    with open(os.path.join(sys.argv[1], "golden_tiny_et.json"), "w") as f:
        json.dump(trace, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
