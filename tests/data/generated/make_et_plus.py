#!/usr/bin/env python3
"""Writes a small "ET plus" file shaped like the output of Chakra's `chakra_trace_link`.

Made for this project (not recorded, no code taken from Chakra): a one-step MLP on
two host threads (forward and optimizer on thread 1, autograd on thread 2) with six
GPU kernels and one device-to-host copy, linked the way `chakra_trace_link` links a
host ET with its Kineto trace:

* the host ET numbers an op when it ends, so a parent's id is larger than its
  children's; the linker then renumbers every node from 0 in that id order and gives
  each GPU op the next id after its launcher, so ids follow neither nesting nor time;
* host ops get `ts` (Kineto's microseconds, fractional), `inclusive_dur`,
  `exclusive_dur` and `inter_thread_dep` (null when none);
* each GPU op is a copy of its launcher (its `inputs`, `outputs`, `attrs`,
  `inter_thread_dep`) with
  `cat`, `name`, `ph`, `ts`, durations and its stream: half of them as a top-level
  `stream`, half, like older linkers, as Kineto's `tid` and `args` object (`stream`,
  `device`, `correlation`, `grid`, `block`);
* the host op that waits for the GPU (`aten::_local_scalar_dense`, which starts once
  the mean kernel has ended) has a `sync_dep` on that kernel;
* the file is written with `indent=4`, so every list is spread over lines.

Usage: make_et_plus.py OUT_DIR  (writes et_plus_small.json; reproducible).
"""
import copy
import json
import os
import sys

T0 = 1700000000000.0  # Kineto clock, microseconds


def tensor(tid, numel):
    return [tid, tid, 0, numel, 4, "cuda:0"]


# (name, thread, start offset us, dur us, children, inputs, outputs, kernels)
# kernels: (name, cat, start offset us, dur us)
FORWARD = [
    ("aten::linear", 1, 10.0, 40.0, [
        ("aten::t", 1, 12.0, 3.0, [], [tensor(20, 4096)], [tensor(21, 4096)], []),
        ("aten::addmm", 1, 16.0, 30.0, [], [tensor(10, 8192), tensor(21, 4096)],
         [tensor(30, 128)], [("sm90_xmma_gemm_f32f32", "kernel", 30.0, 15.0)]),
    ], [tensor(10, 8192), tensor(20, 4096)], [tensor(30, 128)], []),
    ("aten::relu", 1, 52.0, 9.0, [], [tensor(30, 128)], [tensor(31, 128)],
     [("vectorized_elementwise_kernel<clamp_min>", "kernel", 56.0, 3.0)]),
    ("aten::mse_loss", 1, 63.0, 20.0, [
        ("aten::mean", 1, 70.0, 11.0, [], [tensor(31, 128)], [tensor(32, 1)],
         [("reduce_kernel<mean>", "kernel", 74.0, 4.0)]),
    ], [tensor(31, 128)], [tensor(32, 1)], []),
    ("aten::item", 1, 85.0, 30.0, [
        ("aten::_local_scalar_dense", 1, 86.0, 28.0, [], [tensor(32, 1)], [],
         [("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 95.0, 2.0)]),
    ], [tensor(32, 1)], [], []),
]
BACKWARD = [
    ("autograd::engine::evaluate_function: AddmmBackward0", 2, 120.0, 50.0, [
        ("aten::mm", 2, 125.0, 40.0, [], [tensor(32, 1), tensor(10, 8192)],
         [tensor(40, 4096)], [("sm90_xmma_gemm_f32f32_nt", "kernel", 140.0, 20.0)]),
    ], [tensor(32, 1)], [tensor(40, 4096)], []),
]
OPTIMIZER = [
    ("Optimizer.step#SGD.step", 1, 175.0, 30.0, [
        ("aten::add_", 1, 180.0, 20.0, [], [tensor(20, 4096), tensor(40, 4096)],
         [tensor(20, 4096)], [("vectorized_elementwise_kernel<add>", "kernel", 185.0, 6.0)]),
    ], [tensor(20, 4096)], [tensor(20, 4096)], []),
]


def host_node(orig_id, name, parent, tid, rf_id, inputs, outputs):
    io = lambda values: {"values": values, "shapes": [[v[3]] for v in values],
                         "types": ["Tensor(float)"] * len(values),
                         "strides": [[1] for _ in values]}
    return {"id": orig_id, "name": name, "ctrl_deps": parent, "inputs": io(inputs),
            "outputs": io(outputs),
            "attrs": [{"name": "rf_id", "type": "uint64", "value": rf_id},
                      {"name": "fw_parent", "type": "uint64", "value": 0},
                      {"name": "seq_id", "type": "int64", "value": -1},
                      {"name": "scope", "type": "uint64", "value": 0},
                      {"name": "tid", "type": "uint64", "value": tid},
                      {"name": "fw_tid", "type": "uint64", "value": 0},
                      {"name": "op_schema", "type": "string", "value": ""}]}


def main():
    nodes = []
    timing = {}   # orig id -> (ts, inclusive, exclusive)
    kernels = {}  # orig id -> [(name, cat, ts, dur)]
    counter = {"id": 1, "rf": 1, "corr": 700}

    def add(ops, parent):
        """Numbers each op when it ends (children first), as the host ET does here."""
        ids = []
        for name, tid, start, dur, children, inputs, outputs, ks in ops:
            rf_id = counter["rf"]
            counter["rf"] += 1
            child_ids = add(children, None)
            orig_id = counter["id"]
            counter["id"] += 1
            node = host_node(orig_id, name, parent, tid, rf_id, inputs, outputs)
            for c in child_ids:
                next(n for n in nodes if n["id"] == c)["ctrl_deps"] = orig_id
            nodes.append(node)
            child_dur = sum(c[3] for c in children)
            timing[orig_id] = (T0 + start + 0.125, dur, dur - child_dur)
            kernels[orig_id] = [(k[0], k[1], T0 + k[2] + 0.5, k[3]) for k in ks]
            ids.append(orig_id)
        return ids

    process = {"id": 0, "name": "[pytorch|profiler|execution_trace|process]",
               "ctrl_deps": 0}
    add(FORWARD, None)
    fwd_ids = [n["id"] for n in nodes if n["ctrl_deps"] is None]
    add(BACKWARD, None)
    bwd_ids = [n["id"] for n in nodes if n["ctrl_deps"] is None and n["id"] not in fwd_ids]
    add(OPTIMIZER, None)
    opt_ids = [n["id"] for n in nodes
               if n["ctrl_deps"] is None and n["id"] not in fwd_ids + bwd_ids]
    thread1 = counter["id"]
    thread2 = counter["id"] + 1
    process["id"] = counter["id"] + 2
    for n in nodes:
        if n["ctrl_deps"] is None:
            n["ctrl_deps"] = thread2 if n["id"] in bwd_ids else thread1
    for tid, root in ((1, thread1), (2, thread2)):
        nodes.append(host_node(root, "[pytorch|profiler|execution_trace|thread]",
                               process["id"], tid, 0, [], []))
    nodes.append(host_node(process["id"], process["name"], process["id"], 1, 0, [], []))
    # The autograd thread starts after the loss; Kineto shows the gap.
    inter_thread = {bwd_ids[0]: fwd_ids[-1]}
    by_name = {n["name"]: n["id"] for n in nodes}
    waits_for = {by_name["aten::_local_scalar_dense"]: by_name["aten::mean"]}

    # The linker's renumbering: ids from 0 in the old id order, each GPU op right
    # after its launcher.
    new_id = {}
    next_id = [0]

    def assign(orig):
        if orig not in new_id:
            new_id[orig] = next_id[0]
            next_id[0] += 1
        return new_id[orig]

    out = []
    gpu_new_ids = {}
    for node in sorted(nodes, key=lambda n: n["id"]):
        orig = node["id"]
        node = copy.deepcopy(node)
        node["id"] = assign(orig)
        if orig in timing:
            ts, inclusive, exclusive = timing[orig]
            node["inclusive_dur"] = inclusive
            node["exclusive_dur"] = exclusive
            node["ts"] = ts
            node["inter_thread_dep"] = (new_id.get(inter_thread[orig])
                                        if orig in inter_thread else None)
        out.append(node)
        for k, (name, cat, ts, dur) in enumerate(kernels.get(orig, [])):
            gpu = copy.deepcopy(node)
            gpu_id = next_id[0]
            next_id[0] += 1
            gpu_new_ids.setdefault(orig, []).append(gpu_id)
            gpu.update({"id": gpu_id, "ctrl_deps": orig, "cat": cat, "name": name,
                        "ph": "X", "inclusive_dur": dur, "exclusive_dur": dur, "ts": ts})
            counter["corr"] += 1
            if len(gpu_new_ids) % 2:
                gpu["stream"] = 7
            else:
                gpu["tid"] = 7
                gpu["args"] = {"device": 0, "stream": 7, "correlation": counter["corr"],
                               "grid": [132, 1, 1], "block": [256, 1, 1]}
            out.append(gpu)
    for node in out:
        node["ctrl_deps"] = assign(node["ctrl_deps"])
    for waiter, launcher in waits_for.items():
        next(n for n in out if n["id"] == new_id[waiter])["sync_dep"] = gpu_new_ids[launcher]
    doc = {"schema": "1.1.1-chakra.0.0.4", "pid": 4242, "time": "generated",
           "start_ts": 0, "finish_ts": 0, "nodes": sorted(out, key=lambda n: n["id"])}
    with open(os.path.join(sys.argv[1], "et_plus_small.json"), "w") as f:
        json.dump(doc, f, indent=4)
        f.write("\n")


if __name__ == "__main__":
    main()
