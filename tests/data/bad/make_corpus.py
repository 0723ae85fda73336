#!/usr/bin/env python3
"""Makes the hostile-input corpus in tests/data/bad/inputs from the shared real traces.

Every file is a small, deliberate damage to a real trace (or to a config the tools read):
truncations, gzip cut before its trailer, trailing garbage, values out of range, wrong
types, repeated ids, impossible enum values, gzip bombs that expand to 80 MiB from
80 KB. tests/bad_inputs/run_bad_inputs.py runs every tool that reads each file and
checks the exact error in tests/data/bad/expected.tsv.

The file name's prefix says which tools read it:
  et_*      PyTorch ET JSON       (et-convert)
  kineto_*  Kineto / Chrome JSON  (et-convert --kineto, with a good ET)
  graph_*   Chakra .et            (et-sim, et-viz, et-replay)
  cal_*     calibration JSON      (et-sim --compute calibrated)
  dev_*     device presets JSON   (et-sim --device-file)
  topo_*    topology YAML         (et-sim --topology)
  sys_*     ASTRA system JSON     (et-sim --comm astra --astra-system)
  groups_*  process-group JSON    (et-sim --groups)

Usage: make_corpus.py [TRACES] [OUT_DIR]   (defaults: tests/data, the repo's copies of
the shared traces, and ./inputs)
Deterministic: running it twice gives the same bytes (gzip mtime 0).
"""

import gzip
import io
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def gz(data, level=9):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=level, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def gunzip(path):
    with gzip.open(path, "rb") as f:
        return f.read()


# --- protobuf wire format, enough to damage .et files by hand -----------------------

def varint(n):
    n &= (1 << 64) - 1  # negative int64 values are 10-byte two's complement varints
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, value):
    return varint(num << 3) + varint(value)


def field_bytes(num, data):
    return varint((num << 3) | 2) + varint(len(data)) + data


def int_attr(name, value):  # AttributeProto{name=1, int64_val=9}
    return field_bytes(1, name.encode()) + field_varint(9, value)


def node(node_id, name, node_type, attrs=(), duration_micros=None, data_deps=()):
    msg = field_varint(1, node_id) + field_bytes(2, name.encode()) + field_varint(3, node_type)
    for d in data_deps:
        msg += field_varint(5, d)
    if duration_micros is not None:
        msg += field_varint(7, duration_micros)
    for a in attrs:
        msg += field_bytes(10, a)
    return msg


def delimited(msg):
    return varint(len(msg)) + msg


def split_messages(data):
    msgs, pos = [], 0
    while pos < len(data):
        n, shift = 0, 0
        while True:
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        msgs.append(data[pos:pos + n])
        pos += n
    return msgs


COMP, SEND, COLL = 4, 5, 7


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "inputs")
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        os.remove(os.path.join(out, old))

    def write(name, data):
        if isinstance(data, str):
            data = data.encode()
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    # ET JSON: hta/simple_add_et (38 nodes).
    et_gz = open(os.path.join(shared, "hta", "simple_add_et.json.gz"), "rb").read()
    et = gunzip(os.path.join(shared, "hta", "simple_add_et.json.gz"))
    doc = json.loads(et)
    nodes = doc["nodes"]
    mm = next(n for n in nodes if n["name"] == "aten::add")

    def with_node(change, d=None):
        d = json.loads(et) if d is None else d
        for n in d["nodes"]:
            if n["id"] == mm["id"]:
                change(n)
        return json.dumps(d).encode()

    write("et_truncated.json", et[: len(et) * 2 // 3])
    write("et_no_gzip_trailer.json.gz", et_gz[:-8])
    write("et_gzip_cut.json.gz", et_gz[: len(et_gz) // 2])
    corrupt = bytearray(et_gz)
    for k in range(200, 240):
        corrupt[k] ^= 0x5A
    write("et_gzip_corrupt.json.gz", bytes(corrupt))
    write("et_trailing_garbage.json", et + b'\n{"nodes": []}')
    write("et_empty.json", b"")
    write("et_not_object.json", b"[1, 2, 3]")
    write("et_schema_number.json", et.replace(b'"schema": "1.0.1"', b'"schema": 101'))
    write("et_schema_unknown.json", et.replace(b'"schema": "1.0.1"', b'"schema": "9.9.9"'))
    write("et_no_nodes.json", b'{"schema": "1.0.1", "pid": 1}')
    write("et_ts_1e300.json", with_node(lambda n: n.update(ts=1e300)))
    write("et_dur_negative.json", with_node(lambda n: n.update(dur=-5)))
    write("et_nan_in_inputs.json",
          with_node(lambda n: n.update(inputs=["__NAN__"])).replace(b'"__NAN__"', b"NaN"))
    write("et_shapes_string.json", with_node(lambda n: n.update(input_shapes="[[2, 2]]")))
    write("et_shapes_mixed.json", with_node(lambda n: n.update(output_shapes=[["a", 2]])))
    write("et_name_number.json", with_node(lambda n: n.update(name=12)))
    write("et_parent_string.json", with_node(lambda n: n.update(parent="seven")))
    write("et_id_negative.json", with_node(lambda n: n.update(id=-3)))
    dup = json.loads(et)
    dup["nodes"].append(dict(mm))
    write("et_duplicate_id.json", json.dumps(dup))
    miss = json.loads(et)
    miss["nodes"].append({"name": "x"})
    write("et_node_without_id.json", json.dumps(miss))
    write("et_deep_nesting.json",
          et.replace(b'"inputs": []', b'"inputs": ' + b"[" * 5000 + b"]" * 5000, 1))
    # Bombs: small files that expand far past the per-value limit.
    write("et_bomb_brackets.json.gz",
          gz(b'{"schema": "1.0.1", "nodes": [{"id": 1, "x": ' + b"[" * (80 << 20)))
    write("et_bomb_string.json.gz", gz(b'{"schema": "' + b"a" * (80 << 20)))

    # Kineto: hta/simple_add_kineto.
    kin = gunzip(os.path.join(shared, "hta", "simple_add_kineto.json.gz"))
    kdoc = json.loads(kin)
    first_x = next(i for i, e in enumerate(kdoc["traceEvents"]) if e.get("ph") == "X")

    def with_event(change):
        d = json.loads(kin)
        change(d["traceEvents"][first_x])
        return json.dumps(d).encode()

    write("kineto_truncated.json", kin[: len(kin) // 2])
    write("kineto_not_json.json", b"this is not json")
    write("kineto_no_events.json", b'{"schemaVersion": 1}')
    write("kineto_ts_1e30.json", with_event(lambda e: e.update(ts=1e30)))
    write("kineto_ts_string.json", with_event(lambda e: e.update(ts="soon")))
    write("kineto_ts_huge_int.json",
          with_event(lambda e: e.update(ts="__TS__")).replace(b'"__TS__"', b"9" * 30))
    write("kineto_events_not_array.json", b'{"traceEvents": 5}')
    # A device object holding an object without a key: found by fuzz_kineto
    # (UBSan: simdjson used after a failed field lookup).
    write("kineto_device_field_without_key.json",
          b'{"schemaVersion": 1, "deviceProperties": [{"id": {"name": "a", '
          b'"ph": "M"}, {"name": "b"}], "traceEvents": []}')
    write("kineto_no_gzip_trailer.json.gz", gz(kin)[:-8])
    write("kineto_bomb.json.gz", gz(b'{"traceEvents": [' + b" " * (80 << 20)))

    # Chakra .et: chakra/mlp_mp.0.et (metadata + 12 nodes), damaged at the wire level.
    et_bin = open(os.path.join(shared, "chakra", "mlp_mp.0.et"), "rb").read()
    msgs = split_messages(et_bin)
    meta, body = msgs[0], msgs[1:]

    def graph(extra_nodes=(), keep=None):
        kept = body if keep is None else keep
        return delimited(meta) + b"".join(delimited(m) for m in kept) + b"".join(
            delimited(m) for m in extra_nodes)

    write("graph_truncated.et", et_bin[: len(et_bin) - 7])
    write("graph_varint_10_bytes.et", graph() + b"\xff" * 9 + b"\x01" + b"xyz")
    write("graph_length_1gib.et", graph() + b"\x80\x80\x80\x80\x04xyz")
    write("graph_no_gzip_trailer.et.gz", gz(graph())[:-8])
    write("graph_duplicate_id.et", graph([node(2, "dup", COMP)]))
    write("graph_node_type_99.et", graph([node(1000, "odd", 99)]))
    write("graph_comm_type_99.et",
          graph([node(1000, "coll", COLL, [int_attr("comm_type", 99), int_attr("comm_size", 64)])]))
    write("graph_comm_size_negative.et",
          graph([node(1000, "coll", COLL, [int_attr("comm_type", 0), int_attr("comm_size", -1)])]))
    write("graph_send_peer_negative.et",
          graph([node(1000, "send", SEND, [int_attr("comm_dst", -3), int_attr("comm_size", 8)])]))
    write("graph_duration_int64_max.et",
          graph([node(1000, "slow", COMP, [int_attr("duration_ns", (1 << 63) - 1)])]))
    write("graph_duration_micros_max.et",
          graph([node(1000, "slow", COMP, duration_micros=(1 << 64) - 1)]))
    write("graph_empty.et", b"")
    write("graph_not_protobuf.et", b"this is not a protobuf stream at all\n")

    # Configs read by et-sim.
    write("cal_name_number.json",
          '{"format": "et-calibration", "entries": [{"name": 5, "mean_us": 1}]}')
    write("cal_format_number.json", '{"format": 7, "entries": []}')
    write("cal_root_array.json", '[{"format": "et-calibration"}]')
    write("cal_mean_negative.json",
          '{"format": "et-calibration", "entries": [{"name": "x", "mean_us": -1}]}')
    write("cal_not_json.json", "{format: et-calibration")
    write("dev_peak_string.json", '{"devices": {"x": {"peak_tflops": "fast", "mem_bw_gbps": 1}}}')
    write("dev_device_number.json", '{"devices": {"x": 3}}')
    write("dev_root_array.json", "[1, 2]")
    ring = open(os.path.join(shared, "astra-sim", "configs",
                             "examples__network__analytical__Ring_4npus.yml")).read()
    write("topo_npus_1e30.yml", ring.replace("npus_count: [ 4 ]", "npus_count: [ 1e30 ]")
          if "npus_count: [ 4 ]" in ring else "npus_count: [ 1e30 ]\ntopology: [ Ring ]\n"
          "bandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    write("topo_deep_nesting.yml", "dims: " + "[" * 2000 + "]" * 2000 + "\n")
    write("topo_not_map.yml", "- just\n- a list\n")
    write("topo_latency_nan.yml",
          "dims: [{kind: Ring, npus: 4, bandwidth_gbps: 50, latency_ns: .nan}]\n")
    write("topo_bad_yaml.yml", "dims: [{kind: Ring, npus: 4\n")
    write("sys_not_object.json", "[1]")
    write("sys_splits_zero.json",
          '{"preferred-dataset-splits": 0, "all-reduce-implementation": ["ring"]}')
    write("groups_not_array.json", '{"pg_name": "0"}')
    write("groups_rank_string.json", '[{"pg_name": "0", "ranks": ["a"]}]')


if __name__ == "__main__":
    main()
