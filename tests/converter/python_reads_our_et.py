#!/usr/bin/env python3
"""Interop check: an .et written by et-convert loads with the official protobuf Python
runtime and Chakra's framing (varint-delimited GlobalMetadata then Nodes), the way
Chakra's Python tools read it. Independent of our C++ reader.

usage: python_reads_our_et.py ET_CONVERT PROTO_DIR TRACE WORKDIR
"""
import gzip
import os
import subprocess
import sys


def main():
    et_convert, proto_dir, trace, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={work}",
                    os.path.join(proto_dir, "et_def.proto")], check=True)
    sys.path.insert(0, work)
    import et_def_pb2  # noqa: E402 (generated above)
    from google.protobuf.internal.decoder import _DecodeVarint32  # Chakra's protolib uses it

    out = os.path.join(work, "ddp_r0.et.gz")
    subprocess.run([et_convert, trace, out, "--quiet"], check=True)
    with open(out, "rb") as f:
        data = f.read()
    assert data[:2] == b"\x1f\x8b", "a .gz output must be gzip"
    data = gzip.decompress(data)

    def messages(buf):
        pos = 0
        while pos < len(buf):
            size, pos = _DecodeVarint32(buf, pos)
            yield buf[pos:pos + size]
            pos += size

    it = messages(data)
    meta = et_def_pb2.GlobalMetadata()
    meta.ParseFromString(next(it))
    nodes = []
    for raw in it:
        n = et_def_pb2.Node()
        n.ParseFromString(raw)
        nodes.append(n)
    ids = {n.id for n in nodes}
    assert len(ids) == len(nodes), "duplicate ids"
    assert [n.id for n in nodes] == sorted(ids), "nodes not in ascending id order"
    for n in nodes:
        for d in list(n.data_deps) + list(n.ctrl_deps):
            assert d in ids, f"node {n.id} depends on missing {d}"
    attrs = lambda n: {a.name: a for a in n.attr}
    colls = [n for n in nodes if n.type == et_def_pb2.COMM_COLL_NODE]
    sizes = sorted((attrs(n)["comm_type"].int64_val, attrs(n)["comm_size"].int64_val)
                   for n in colls)
    expected = sorted([(et_def_pb2.ALL_REDUCE, 330756)] * 3 +
                      [(et_def_pb2.BROADCAST, 28), (et_def_pb2.BROADCAST, 4)])
    assert sizes == expected, f"collectives {sizes} != {expected}"
    comp = [n for n in nodes if n.type == et_def_pb2.COMP_NODE]
    assert comp and all(attrs(n)["is_cpu_op"].bool_val for n in comp)
    assert meta.version == "0.0.4", meta.version
    print(f"python protobuf read {len(nodes)} nodes, {len(colls)} collectives: OK")


if __name__ == "__main__":
    main()
