#!/usr/bin/env python3
"""Rewrites a PyTorch ET of schema 1.0.1 into the 1.1.0-chakra.0.0.4 layout.

Benchmark input preparation: MLCommons Chakra's reference converter rejects
1.0.1 traces, so to time it and et-convert on the same recorded workload we
rewrite a 1.0.1 trace (flat `parent`, `inputs`/`input_shapes`/`input_types`,
per-node scalar fields) into the nested layout that real 1.1.0 files use:

  {"id", "name", "ctrl_deps": parent,
   "inputs":  {"values", "shapes", "types"},
   "outputs": {"values", "shapes", "types"},
   "attrs": [{"name": "rf_id", "type": "uint64", "value": ...}, ...]}

with the attribute names, order and types of
tests/data/param/resnet_2gpu_et.1.1.0.json.gz. The thread/process root nodes
are renamed from `execution_graph` to `execution_trace`, as PyTorch did when
it introduced the newer schemas. Values are copied, never invented.

Usage: et_upgrade_schema.py in_1.0.1.json[.gz] out_1.1.0.json
The output is written to a temporary file and renamed into place.
"""

import gzip
import json
import os
import sys

TARGET_SCHEMA = "1.1.0-chakra.0.0.4"

# (name, type) of each attribute, in the order real 1.1.0 traces write them.
ATTR_LAYOUT = [
    ("rf_id", "uint64"),
    ("fw_parent", "uint64"),
    ("seq_id", "int64"),
    ("scope", "uint64"),
    ("tid", "uint64"),
    ("fw_tid", "uint64"),
    ("op_schema", "string"),
]

ROOT_NAME_OLD = "[pytorch|profiler|execution_graph|"
ROOT_NAME_NEW = "[pytorch|profiler|execution_trace|"


def load_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def upgrade_name(name):
    if name.startswith(ROOT_NAME_OLD):
        return ROOT_NAME_NEW + name[len(ROOT_NAME_OLD):]
    return name


def io_block(node, prefix):
    return {
        "values": node.get(prefix + "s", []),
        "shapes": node.get(prefix + "_shapes", []),
        "types": node.get(prefix + "_types", []),
    }


def upgrade_node(node):
    attrs = [
        {"name": name, "type": kind, "value": node[name]}
        for name, kind in ATTR_LAYOUT
        if name in node
    ]
    return {
        "id": node["id"],
        "name": upgrade_name(node["name"]),
        "ctrl_deps": node["parent"],
        "inputs": io_block(node, "input"),
        "outputs": io_block(node, "output"),
        "attrs": attrs,
    }


def dump(value):
    return json.dumps(value)


def write_node(out, node, last):
    out.write("    {\n")
    out.write('      "id": %s, "name": %s, "ctrl_deps": %s,\n' %
              (dump(node["id"]), dump(node["name"]), dump(node["ctrl_deps"])))
    out.write('      "inputs": %s,\n' % dump(node["inputs"]))
    out.write('      "outputs": %s,\n' % dump(node["outputs"]))
    out.write('      "attrs": %s\n' % dump(node["attrs"]))
    out.write("    }\n" if last else "    },\n")


def write_trace(out, trace, nodes):
    out.write("{\n")
    out.write('  "schema": %s, "pid": %s, "time": %s, "start_ts": %s,\n' %
              (dump(TARGET_SCHEMA), dump(trace.get("pid", 0)),
               dump(trace.get("time", "")), dump(trace.get("start_ts", 0))))
    out.write('  "nodes": [\n')
    for i, node in enumerate(nodes):
        write_node(out, upgrade_node(node), i + 1 == len(nodes))
    out.write("  ],\n")
    out.write('  "finish_ts": %s\n' % dump(trace.get("finish_ts", 0)))
    out.write("}\n")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: et_upgrade_schema.py in.json[.gz] out.json\n")
        return 2
    in_path, out_path = argv[1], argv[2]
    trace = load_trace(in_path)
    schema = trace.get("schema")
    if schema != "1.0.1":
        sys.stderr.write("et_upgrade_schema: error: %s: schema %r, expected "
                         "1.0.1\n" % (in_path, schema))
        return 1
    nodes = trace["nodes"]
    tmp_path = out_path + ".tmp.%d" % os.getpid()
    try:
        with open(tmp_path, "w", encoding="utf-8") as out:
            write_trace(out, trace, nodes)
        os.replace(tmp_path, out_path)
    finally:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
    sys.stderr.write("et_upgrade_schema: %s: %d nodes -> %s (%s)\n" %
                     (in_path, len(nodes), out_path, TARGET_SCHEMA))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
