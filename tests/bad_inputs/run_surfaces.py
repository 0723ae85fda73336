#!/usr/bin/env python3
"""Hostile inputs for the surfaces added after the ET/.et readers: Kineto traces given alone,
Nsight Systems exports, platform and topology files, nccl-tests logs, output paths and flag
values. Generates every case into WORK_DIR (nothing is committed but this script: the cases
are small edits of the real traces in tests/data), runs the tool on it and checks what the
case says, plus what every run must do:

- no signal (crash, abort, sanitizer report), no run past TIMEOUT_S, peak memory < 2 GB;
- a refusal exits 1 (2 only for flag mistakes) with exactly one stderr line
  `<tool>: error: ...` that names the input file (or the flag) and contains the problem;
- nothing left beside the inputs or outputs (`*.tmp.*`, `.partial-*`, `-wal`, `-shm`,
  a staged folder), an input never changed, an output that is a device, FIFO or symlink
  never replaced;
- a case expected to pass exits 0 within the time limit.

  run_surfaces.py BUILD_DIR REPO_DIR WORK_DIR [NAME_SUBSTRING]

Prints one line per failing case and a count by outcome.
"""

import concurrent.futures
import gzip
import hashlib
import json
import os
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
import time

TIMEOUT_S = 30
MAX_RSS_BYTES = 2 << 30
TOOL_DIRS = {"et-convert": "converter", "et-sim": "simulator", "et-viz": "visualizer",
             "et-replay": "replay"}


class Case:
    """One run: argv (tool first), what must come out, and files to make first."""

    def __init__(self, name, argv, code=1, expect="", names="{in}", make=None,
                 untouched=(), kept=()):
        self.name, self.argv, self.code, self.expect = name, argv, code, expect
        self.names = names  # what the message must name ("{in}", a flag, or "")
        self.make = make  # make(dir) -> {"in": path, ...}
        self.untouched = untouched  # keys of paths whose bytes must not change
        self.kept = kept  # keys of paths that must keep their kind (device, link)


# ---------------------------------------------------------------- Kineto alone

def kineto_trace(threads=1, events_per_thread=1, kernel=True):
    """A small Kineto trace: cpu_ops on `threads` threads, one launch and its kernel."""
    ev = []
    t = 1000
    for th in range(threads):
        for k in range(events_per_thread):
            ev.append({"ph": "X", "cat": "cpu_op", "name": f"aten::op{k}", "pid": 1,
                       "tid": 100 + th, "ts": t, "dur": 5, "args": {"External id": t}})
            t += 10
    if kernel:
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 100,
                   "ts": t, "dur": 20, "args": {"External id": 9}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 100, "ts": t + 2, "dur": 5, "args": {"correlation": 7}})
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                   "ts": t + 10, "dur": 30,
                   "args": {"correlation": 7, "device": 0, "stream": 7}})
    return {"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": ev}


def kineto_case(name, edit, expect, code=1, text=None):
    def make(d):
        path = os.path.join(d, "k.json")
        if text is not None:
            body = text()
        else:
            trace = kineto_trace()
            edit(trace)
            body = json.dumps(trace)
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(body)
        return {"in": path}
    return Case(name, ["et-convert", "{in}", "{dir}/out.et"], code, expect, make=make,
                untouched=("in",))


def last_kernel(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "kernel"][-1]


def first_op(trace):
    return trace["traceEvents"][0]


def comm_op(trace, nelems):
    trace["traceEvents"].append(
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 100,
         "ts": 900, "dur": 5, "args": {"Collective name": "allreduce",
                                       "In msg nelems": nelems, "dtype": "Float"}})


def kineto_cases():
    big = 2 ** 64
    cut = json.dumps(kineto_trace(threads=2, events_per_thread=50))
    return [
        kineto_case("kineto-ts-string", lambda t: first_op(t).update(ts="1000"),
                    "'ts' is not a number"),
        kineto_case("kineto-dur-string", lambda t: first_op(t).update(dur="5"),
                    "'dur' is not a number"),
        kineto_case("kineto-dur-negative", lambda t: first_op(t).update(dur=-5),
                    "negative 'dur'"),
        kineto_case("kineto-correlation-string",
                    lambda t: last_kernel(t)["args"].update(correlation="7"),
                    "'correlation' must be an integer"),
        kineto_case("kineto-rank-negative",
                    lambda t: t["distributedInfo"].update(rank=-3), "distributedInfo.rank"),
        kineto_case("kineto-rank-2p40",
                    lambda t: t["distributedInfo"].update(rank=2 ** 40), "distributedInfo.rank"),
        kineto_case("kineto-nelems-negative", lambda t: comm_op(t, -4), "'In msg nelems'"),
        kineto_case("kineto-nelems-2p64", lambda t: comm_op(t, big), "'In msg nelems'"),
        kineto_case("kineto-two-documents", None, "data after the end",
                    text=lambda: json.dumps(kineto_trace()) * 2),
        kineto_case("kineto-cut-near-end", None, "a file cut short",
                    text=lambda: cut[:len(cut) - 40]),
        kineto_case("kineto-name-escapes",
                    lambda t: (first_op(t).update(name="x\nkineto: wrote fine\x1b[31m"),
                               first_op(t).pop("ts")),
                    "x\\nkineto: wrote fine\\x1b[31m"),
        kineto_case("kineto-30000-threads", None, "over the limit of 4096 threads",
                    text=lambda: json.dumps(kineto_trace(threads=30000))),
        # Not refused, but must be quick: thread matching once took minutes here.
        kineto_case("kineto-3000-threads-fast", None, "", code=0,
                    text=lambda: json.dumps(kineto_trace(threads=3000))),
    ] + kineto_field_cases()


def kernel_args(trace):
    return last_kernel(trace)["args"]


def set_info(**fields):
    return lambda t: t["distributedInfo"].update(fields)


def kineto_field_cases():
    """Issue 51: each field of an event, of args and of the trace's header with a value
    of the wrong type or range; each refusal names the event (#N) and the field."""
    big = 2 ** 64
    refused = [
        ("name-array", lambda t: first_op(t).update(name=["aten::mm"]), "'name'"),
        ("name-number", lambda t: first_op(t).update(name=5), "'name'"),
        ("name-null", lambda t: first_op(t).update(name=None), "'name'"),
        ("name-missing", lambda t: first_op(t).pop("name"), "'name'"),
        ("pid-array", lambda t: first_op(t).update(pid=[1]), "'pid'"),
        ("pid-float", lambda t: first_op(t).update(pid=1.5), "'pid'"),
        ("tid-object", lambda t: first_op(t).update(tid={"id": 100}), "'tid'"),
        ("tid-2p63", lambda t: first_op(t).update(tid=2 ** 63), "'tid'"),
        ("cat-number", lambda t: first_op(t).update(cat=7), "'cat'"),
        ("args-string", lambda t: first_op(t).update(args="External id"), "'args'"),
        ("external-id-string", lambda t: first_op(t)["args"].update({"External id": "9"}),
         "'External id'"),
        ("external-id-2p64", lambda t: first_op(t)["args"].update({"External id": big}),
         "'External id'"),
        ("correlation-2p64", lambda t: kernel_args(t).update(correlation=big),
         "'correlation'"),
        ("grid-string", lambda t: kernel_args(t).update(grid="[1, 1, 1]"), "'grid'"),
        ("kernel-no-dur", lambda t: last_kernel(t).pop("dur"), "'dur'"),
        ("cpu-op-no-dur", lambda t: first_op(t).pop("dur"), "'dur'"),
        ("ts-dur-near-max-double",
         lambda t: first_op(t).update(ts=1.7976931348623157e308, dur=1.7976931348623157e308),
         "'ts'"),
        ("ts-plus-dur-past-range",
         lambda t: first_op(t).update(ts=2 ** 61 // 1000 - 1, dur=2 ** 61 // 1000 - 1),
         "'dur'"),
        ("world-size-zero", set_info(world_size=0), "distributedInfo.world_size"),
        ("world-size-huge", set_info(world_size=2 ** 40), "distributedInfo.world_size"),
        ("rank-not-below-world", set_info(rank=4, world_size=2), "distributedInfo.rank"),
        ("device-properties-object",
         lambda t: t.update(deviceProperties={"name": "NVIDIA H100"}), "deviceProperties"),
        ("device-properties-garbage",
         lambda t: t.update(deviceProperties=[17, "x"]), "deviceProperties[0]"),
        ("device-properties-name-number",
         lambda t: t.update(deviceProperties=[{"id": 0, "name": 5}]),
         "deviceProperties[0].name"),
        ("stream-string", lambda t: kernel_args(t).update(stream="7"), "'stream'"),
        ("device-negative", lambda t: kernel_args(t).update(device=-1), "'device'"),
    ]
    cases = [kineto_case("kineto-" + name, edit, expect) for name, edit, expect in refused]

    # What real traces carry is read, with a warning that counts it (docs/bad-input.md).
    def add_instant_and_flow(t):
        t["traceEvents"] += [
            {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
             "tid": 100, "ts": 1001, "s": "t", "args": {"Ev Idx": 1}},
            {"ph": "s", "id": 7, "cat": "ac2g", "name": "ac2g", "pid": 1, "tid": 100,
             "ts": 1032},
            {"ph": "f", "id": 7, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 7,
             "ts": 1040, "bp": "e"}]
    accepted = [
        ("instant-and-flow-without-dur", add_instant_and_flow),
        # Kineto of 2021 (tests/data/public/kineto_resnet50_*) writes CPU tids as strings.
        ("tid-numeric-string", lambda t: [e.update(tid=str(e["tid"]))
                                          for e in t["traceEvents"] if e["pid"] == 1]),
        # AMD's profiler (tests/data/kineto-only/tracelens_mi300_*) writes runtime
        # calls' byte counts as strings.
        ("bytes-numeric-string", lambda t: kernel_args(t).update(bytes="4096")),
    ]
    cases += [kineto_case("kineto-" + name, edit, "", code=0) for name, edit in accepted]
    return cases


def fifo_case(name, argv, expect, key="in"):
    def make(d):
        path = os.path.join(d, "fifo")
        os.mkfifo(path)
        return {key: path, "in": path}
    return Case(name, argv, 1, expect, make=make, kept=(key,))


def output_cases(good_json):
    def make_same(d):
        path = os.path.join(d, "k.json")
        with open(path, "w") as f:
            json.dump(kineto_trace(), f)
        return {"in": path}

    def make_link(d):
        ins = make_same(d)
        target = os.path.join(d, "target.et")
        with open(target, "w") as f:
            f.write("keep me")
        os.symlink(target, os.path.join(d, "out.et"))
        return dict(ins, out=os.path.join(d, "out.et"), target=target)

    def make_device_out(d):
        # Never the real /dev/null: a tool that replaces its output would replace it
        # for the whole machine (as root, an old et-convert did). Root makes a
        # private null device here; others cannot rename over /dev/null at all.
        ins = make_same(d)
        if os.geteuid() == 0:
            dev = os.path.join(d, "null")
            os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        else:
            dev = "/dev/null"
        return dict(ins, out=dev)

    def make_fifo_out(d):
        ins = make_same(d)
        os.mkfifo(os.path.join(d, "out.et"))
        return dict(ins, out=os.path.join(d, "out.et"))
    return [
        Case("output-is-input", ["et-convert", "{in}", "{in}"], 1, "the output is the input",
             make=make_same, untouched=("in",)),
        Case("output-is-symlink", ["et-convert", "{in}", "{out}"], 1, "a symbolic link",
             names="{out}", make=make_link, untouched=("target",), kept=("out",)),
        Case("output-is-fifo", ["et-convert", "{in}", "{out}"], 1, "a FIFO", names="{out}",
             make=make_fifo_out, kept=("out",)),
        Case("output-is-device", ["et-convert", "{in}", "{out}"], 1,
             "a character device", names="{out}", make=make_device_out, kept=("out",)),
        fifo_case("input-is-fifo", ["et-convert", "{in}", "{dir}/out.et"], "a FIFO"),
    ]


# ---------------------------------------------------------------- Nsight Systems

def nsys_case(name, source, edit, expect, code=1, graphs_pattern=True, pre=None,
              names="{in}"):
    def make(d):
        path = os.path.join(d, "e.sqlite")
        with gzip.open(source) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        con = sqlite3.connect(path)
        con.text_factory = bytes
        edit(con)
        con.commit()
        con.close()
        paths = {"in": path}
        if pre:
            paths.update(pre(d))
        return paths
    out = "{dir}/out.%d.et" if graphs_pattern else "{dir}/out.et"
    return Case(name, ["et-convert", "{in}", out], code, expect, names=names, make=make,
                untouched=("in",))


def set_version(con, value):
    con.execute("UPDATE META_DATA_EXPORT SET value = ? WHERE name = "
                "'EXPORT_PRODUCT_VERSION'", (value,))


def add_processes(con, n):
    row = con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone()
    cols = [r[1].decode() if isinstance(r[1], bytes) else r[1]
            for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    pid_col = cols.index("globalPid")
    rows = []
    for p in range(n):
        r = list(row)
        r[pid_col] = (1000 + p) << 24
        rows.append(r)
    con.executemany(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                    f"({', '.join('?' * len(cols))})", rows)


def add_generated_column(con):
    con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN burn INTEGER "
                "GENERATED ALWAYS AS (length(hex(zeroblob(100000000)))) VIRTUAL")


def set_wal(con):
    con.execute("PRAGMA journal_mode=WAL")


def set_schema(con, value):
    con.execute("UPDATE META_DATA_EXPORT SET value = ? WHERE name = "
                "'EXPORT_SCHEMA_VERSION'", (value,))


def update_first(table, assignment):
    """Sets `assignment` on the table's first row (by rowid), after copying the table
    without its NOT NULL constraints (a damaged or hand-made export need not keep them)."""
    def edit(c):
        c.execute(f"CREATE TABLE loose AS SELECT * FROM {table} ORDER BY rowid")
        c.execute(f"DROP TABLE {table}")
        c.execute(f"ALTER TABLE loose RENAME TO {table}")
        c.execute(f"UPDATE {table} SET {assignment} WHERE rowid = "
                  f"(SELECT min(rowid) FROM {table})")
    return edit


def nsys_field_cases(data):
    """Issue 51: each column read, NULL, text or out of its range; each refusal names the
    table, the row and the column."""
    one = os.path.join(data, "nsys", "nsysai_mock_rtx3080.sqlite.gz")
    two = os.path.join(data, "nsys", "nsysai_mfu_2gpu_before.sqlite.gz")
    kernel, memcpy = "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY"
    runtime, nvtx = "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"
    refused = [
        ("kernel-start-null", one, kernel, "start = NULL", "start"),
        ("kernel-start-text", one, kernel, "start = 'soon'", "start"),
        ("kernel-end-null", one, kernel, "end = NULL", "end"),
        ("kernel-end-text", one, kernel, "end = '12x'", "end"),
        ("kernel-stream-null", one, kernel, "streamId = NULL", "streamId"),
        ("kernel-stream-text", one, kernel, "streamId = 'seven'", "streamId"),
        ("kernel-device-null", one, kernel, "deviceId = NULL", "deviceId"),
        ("kernel-device-text", one, kernel, "deviceId = 'gpu0'", "deviceId"),
        ("kernel-name-null", one, kernel, "demangledName = NULL", "demangledName"),
        ("kernel-name-text", one, kernel, "demangledName = 'gemm'", "demangledName"),
        ("kernel-end-before-start", one, kernel, "end = start - 1000", "end"),
        ("kernel-start-real-1e300", one, kernel, "start = 1e300", "start"),
        ("kernel-grid-negative", one, kernel, "gridX = -4", "gridX"),
        ("kernel-grid-huge", one, kernel, "gridY = 1099511627776", "gridY"),
        ("kernel-device-negative", one, kernel, "deviceId = -1", "deviceId"),
        ("kernel-device-huge", one, kernel, "deviceId = 1099511627776", "deviceId"),
        ("memcpy-bytes-negative", one, memcpy, "bytes = -8", "bytes"),
        ("memcpy-bytes-huge", one, memcpy, "bytes = 9223372036854775807", "bytes"),
        ("runtime-end-before-start", one, runtime, "end = start - 5", "end"),
        ("runtime-correlation-null", one, runtime, "correlationId = NULL", "correlationId"),
        ("runtime-name-null", one, runtime, "nameId = NULL", "nameId"),
        ("nvtx-end-before-start", two, nvtx, "end = start - 5", "end"),
        ("stringids-value-null", one, "StringIds", "value = NULL", "value"),
    ]
    cases = [nsys_case("nsys-" + name, src, update_first(table, sql), f"{table} row 0: {col}")
             for name, src, table, sql, col in refused]
    cases.append(nsys_case("nsys-nvtx-tid-null", two, update_first(nvtx, "globalTid = NULL"),
                           f"{nvtx} row 0 has no globalTid"))
    cases += [
        nsys_case("nsys-schema-version-plus", one, lambda c: set_schema(c, "3.+24.14"),
                  "EXPORT_SCHEMA_VERSION"),
        nsys_case("nsys-schema-version-spaces", one, lambda c: set_schema(c, " 3.24 .14"),
                  "EXPORT_SCHEMA_VERSION"),
    ]
    return cases


def nsys_cases(data):
    one = os.path.join(data, "nsys", "nsysai_mock_rtx3080.sqlite.gz")
    two = os.path.join(data, "nsys", "nsysai_mfu_2gpu_before.sqlite.gz")
    return [
        nsys_case("nsys-stringids-utf8", one,
                  lambda c: c.execute("UPDATE StringIds SET value = CAST(X'41FF42' AS TEXT) WHERE id = "
                                      "(SELECT min(id) FROM StringIds)"),
                  "is not valid UTF-8"),
        nsys_case("nsys-version-utf8", one, lambda c: set_version(c, b"\xff\xfe2026"),
                  "is not valid UTF-8"),
        nsys_case("nsys-version-forged-line", one,
                  lambda c: set_version(c, "1\net-convert: wrote everything fine"),
                  "", code=0),
        nsys_case("nsys-int64-max-start", one,
                  lambda c: c.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = "
                                      "9223372036854775807"),
                  "beyond +-2^61 ns"),
        nsys_case("nsys-generated-column", one, add_generated_column, "a generated column"),
        nsys_case("nsys-wal-flagged", one, set_wal, "", code=0),
        nsys_case("nsys-30000-processes", one, lambda c: add_processes(c, 30000),
                  "over the limit of 1024 graphs"),
        # Two graphs; the second's output is a directory: neither is published.
        nsys_case("nsys-second-output-fails", two, lambda c: None, "is a directory",
                  pre=lambda d: os.makedirs(os.path.join(d, "out.1.et")) or {},
                  names="{dir}/out.1.et"),
    ] + nsys_field_cases(data)


# ---------------------------------------------------------------- et-sim inputs

def text_case(name, argv, body, expect, code=1, filename="f.yaml"):
    def make(d):
        path = os.path.join(d, filename)
        with open(path, "w") as f:
            f.write(body)
        return {"in": path}
    return Case(name, argv, code, expect, make=make)


def sim_cases(good_et):
    topo = ["et-sim", good_et, "--topology", "{in}", "--world", "16"]
    log_head = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor)\n"
                "#  Rank  0 Group  0 Pid 1 on host device  0 [0x07] NVIDIA H100 80GB HBM3\n"
                "#  Rank  1 Group  0 Pid 1 on host device  1 [0x08] NVIDIA H100 80GB HBM3\n"
                "#       size   count  type  redop  root  time  algbw  busbw #wrong  time  "
                "algbw  busbw #wrong\n")
    log = ["et-sim", "--nccl-tests", "all_reduce", "--world", "2", "--comm-from", "{in}"]
    return [
        text_case("platform-typo-key", topo, "gpu: H100\ngpus_per_nod: 2\n",
                  "unknown key 'gpus_per_nod'"),
        text_case("platform-nic-1e-308", topo, "gpu: H100\nnic_gbits: 1e-308\n",
                  "nic_gbits must be a number in"),
        text_case("platform-one-rule", topo, "gpu: H100\nnet_efficiency: 2\n",
                  "net_efficiency must be a number in (0, 1]"),
        text_case("topology-npus-zero", topo,
                  "topology: [Ring]\nnpus_count: [0]\nbandwidth: [50]\nlatency: [500]\n",
                  "npus_count[0] must be at least 1"),
        Case("topology-dev-zero", ["et-sim", good_et, "--topology", "/dev/zero"], 1,
             "a character device", names="/dev/zero"),
        Case("device-file-dev-zero", ["et-sim", good_et, "--device", "x", "--device-file",
                                      "/dev/zero"], 1, "a character device",
             names="/dev/zero"),
        Case("calibration-dev-zero", ["et-sim", good_et, "--compute", "calibrated",
                                      "--calibration", "/dev/zero"], 1,
             "a character device", names="/dev/zero"),
        fifo_case("topology-fifo", ["et-sim", good_et, "--topology", "{in}"], "a FIFO"),
        fifo_case("trace-fifo", ["et-sim", "{in}"], "a FIFO"),
        # --compare's trace is read as the input is, its errors naming it.
        fifo_case("compare-trace-fifo", ["et-sim", good_et, "--compare", "{in}"],
                  "a FIFO"),
        Case("compare-dev-zero", ["et-sim", good_et, "--compare", "/dev/zero"], 1,
             "a character device", names="/dev/zero"),
        fifo_case("viz-trace-fifo", ["et-viz", "{in}", "--report"], "a FIFO"),
        fifo_case("replay-trace-fifo", ["et-replay", "{in}", "--device", "cpu"], "a FIFO"),
        # 2,000 ranks of a 2.9 MB graph: 5.8 GB of files, refused after rank 0 and
        # its staging folder removed.
        Case("write-ranks-over-4-gib",
             ["et-sim", os.path.join(os.path.dirname(good_et), "feeder_tests_chakra.0.et"),
              "--world", "2000", "--write-ranks", "{dir}/job"], 1, "4 GiB limit",
             names="{dir}/job"),
        text_case("nccl-tests-time-inf", log,
                  log_head + "  8  2  float  sum  -1  inf  0.00  0.00  0  9.1  0.00  0.00  0\n",
                  "time 'inf' is not a finite positive number", filename="l.txt"),
        text_case("nccl-tests-size-zero", log,
                  log_head + "  0  0  float  sum  -1  9.2  0.00  0.00  0  9.1  0.00  0.00  0\n",
                  "a row of 0 bytes", filename="l.txt"),
        Case("nccl-tests-missing-log", log[:-1] + ["{dir}/no-such.txt"], 1, "no-such.txt",
             names=""),
    ] + config_cases(good_et, topo) + log_cases(log, log_head)


def binary_case(name, argv, body, expect, filename):
    def make(d):
        path = os.path.join(d, filename)
        with open(path, "wb") as f:
            f.write(body)
        return {"in": path}
    return Case(name, argv, 1, expect, make=make)


def config_cases(good_et, topo):
    """Issue 51: platform, topology and calibration files: duplicate keys anywhere,
    text after the value, several documents, language-specific tags, bytes that are not
    UTF-8, and platform fields of the wrong type or meaning."""
    cases = [
        text_case("platform-duplicate-key", topo, "gpu: H100\ngpus_per_node: 8\ngpu: A100\n",
                  "duplicate key 'gpu'"),
        text_case("platform-json-duplicate-key", topo,
                  '{"gpu": "H100", "nic_gbits": 400, "nic_gbits": 100}',
                  "duplicate key 'nic_gbits'", filename="p.json"),
        text_case("topology-duplicate-nested-key", topo,
                  "dims:\n  - {kind: Ring, npus: 8, bandwidth_gbps: 300, latency_ns: 500,"
                  " npus: 4}\n", "duplicate key 'dims[0].npus'"),
        text_case("platform-json-trailing-text", topo, '{"gpu": "H100"} {"gpu": "A100"}',
                  "after", filename="p.json"),
        text_case("platform-two-documents", topo, "gpu: H100\n---\ngpu: A100\n",
                  "more than one YAML document"),
        text_case("platform-python-tag", topo,
                  "gpu: !!python/object/apply:os.system [echo]\n", "tag"),
        binary_case("platform-not-utf8", topo, b"gpu: H1\xff\xfe00\n", "UTF-8",
                    "f.yaml"),
        text_case("platform-gpus-per-node-string", topo, 'gpu: H100\ngpus_per_node: "8"\n',
                  "gpus_per_node must be a number"),
        text_case("platform-gpu-empty", topo, 'gpu: ""\n', "gpu must"),
        text_case("platform-gpu-number", topo, "gpu: 100\n", "gpu must"),
        text_case("platform-gpu-unknown", topo, "gpu: Z9000\n", "gpu must"),
        text_case("platform-name-list", topo, "gpu: H100\nname: [a, b]\n", "name must"),
        text_case("platform-name-number", topo, "gpu: H100\nname: 42\n", "name must"),
        text_case("platform-zero-nics", topo, "gpu: H100\nnics_per_node: 0\n",
                  "nics_per_node must be a number in [1"),
        text_case("calibration-duplicate-key",
                  ["et-sim", good_et, "--compute", "calibrated", "--calibration", "{in}"],
                  '{"device": "H100", "device": "A100"}', "duplicate key 'device'",
                  filename="c.json"),
        text_case("device-file-duplicate-key",
                  ["et-sim", good_et, "--device", "X1", "--device-file", "{in}"],
                  '{"devices": {"X1": {"peak_tflops": 1}, "X1": {"peak_tflops": 2}}}',
                  "duplicate key 'devices.X1'", filename="d.json"),
        # A topology far past 2^20 ranks, with no --world to fit it to.
        text_case("topology-huge-size", ["et-sim", good_et, "--topology", "{in}"],
                  "dims:\n  - {kind: Ring, npus: 1048576, bandwidth_gbps: 300, "
                  "latency_ns: 500}\n  - {kind: Switch, npus: 1048576, "
                  "bandwidth_gbps: 50, latency_ns: 5000}\n", "ranks"),
    ]
    return cases


def log_cases(log, log_head):
    """Issue 51: nccl-tests logs with binary data, times no run can take, and an empty
    path in the --comm-from list."""
    row = "  8  2  float  sum  -1  {t}  0.00  0.00  0  9.1  0.00  0.00  0\n"
    return [
        binary_case("nccl-tests-binary-after-header", log,
                    log_head.encode() + bytes(range(256)) * 4 +
                    row.format(t="9.2").encode(), "binary", "l.txt"),
        text_case("nccl-tests-time-1e308", log, log_head + row.format(t="1e308"),
                  "time '1e308'", filename="l.txt"),
        text_case("nccl-tests-time-1e-300", log, log_head + row.format(t="1e-300"),
                  "time '1e-300'", filename="l.txt"),
        Case("nccl-tests-empty-in-list", log[:-1] + ["{dir}/a.txt,,{dir}/b.txt"], 2,
             "--comm-from", names=""),
    ]


# ---------------------------------------------------------------- .et made from these

def long_kernels_case(build):
    """Two kernels of 58 minutes on one stream: each passes the per-op cap of an hour."""
    def make(d):
        trace = kineto_trace(kernel=False)
        ev = trace["traceEvents"]
        for i in range(2):
            ts = 10 ** 6 + i * 3500 * 10 ** 6
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 100,
                       "ts": ts, "dur": 3490 * 10 ** 6, "args": {}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "pid": 1, "tid": 100, "ts": ts + 1, "dur": 5,
                       "args": {"correlation": 7 + i}})
            ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                       "ts": ts + 10, "dur": 3480 * 10 ** 6,
                       "args": {"correlation": 7 + i, "device": 0, "stream": 7}})
        src, path = os.path.join(d, "long.json"), os.path.join(d, "long.et")
        with open(src, "w") as f:
            json.dump(trace, f)
        subprocess.run([os.path.join(build, "converter", "et-convert"), src, path,
                        "--quiet"], check=True)
        return {"in": path}
    return Case("replay-kernels-over-an-hour",
                ["et-replay", "{in}", "--device", "cpu", "--warmup", "0", "--iters", "1"],
                1, "add up to over 1 h", make=make)


def flag_cases(good_et):
    return [
        Case("flag-layout-plus", ["et-sim", good_et, "--layout", "dp=+4"], 2, "--layout",
             names=""),
        Case("flag-sweep-empty", ["et-sim", good_et, "--sweep", ""], 2, "--sweep", names=""),
        Case("flag-measured-step-1e308",
             ["et-convert", os.path.join(os.path.dirname(os.path.dirname(good_et)), "hta",
                                         "simple_add_et.json.gz"), "{dir}/out.et",
              "--measured-step-ms", "1e308"], 2, "--measured-step-ms", names=""),
    ]


# ---------------------------------------------------------------- the runner

def snapshot(path):
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            return ("file", hashlib.sha256(f.read()).hexdigest())
    return ("kind", stat.S_IFMT(st.st_mode))


def leftovers(d, before):
    bad = []
    for name in os.listdir(d):
        if name in before:
            continue
        if (".tmp." in name or name.startswith(".partial") or name.endswith("-wal") or
                name.endswith("-shm") or name.startswith(".")):
            bad.append(name)
    return bad


def run_case(build, work, case, limit_memory):
    d = os.path.join(work, case.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    paths = case.make(d) if case.make else {}
    values = dict(paths, dir=d)
    args = [a.format(**values) if "{" in a else a for a in case.argv]
    args[0] = os.path.join(build, TOOL_DIRS[case.argv[0]], case.argv[0])
    before = set(os.listdir(d))
    snaps = {k: snapshot(paths[k]) for k in set(case.untouched) | set(case.kept)}

    def limits():
        if limit_memory:
            resource.setrlimit(resource.RLIMIT_AS, (MAX_RSS_BYTES * 2, MAX_RSS_BYTES * 2))
    start = time.monotonic()
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=d, preexec_fn=limits, env=env)
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return case.name, "hang", f"no exit within {TIMEOUT_S} s", ""
    seconds = time.monotonic() - start
    lines = [l for l in err.decode(errors="replace").splitlines() if l.strip()]
    message = lines[-1] if lines else ""
    problems = []
    if proc.returncode < 0:
        return case.name, "signal", f"killed by signal {-proc.returncode}", message
    if proc.returncode != case.code:
        problems.append(f"exit {proc.returncode}, expected {case.code}")
    if case.code != 0:
        tool = case.argv[0]
        errors = [l for l in lines if l.startswith(tool + ": error: ")]
        # Warnings and notes about what was read may come first (the ranks of an
        # export that differ); nothing else may.
        others = [l for l in lines
                  if not l.startswith((tool + ": warning: ", tool + ": note: "))]
        if len(others) != 1 or len(errors) != 1 or errors[0] != message:
            problems.append(f"{len(others)} stderr lines besides warnings, not one "
                            f"'{tool}: error:' line last")
        named = case.names.format(**values) if "{" in case.names else case.names
        if named and named not in message:
            problems.append(f"message does not name {named}")
        if case.expect and case.expect not in message:
            problems.append(f"message lacks '{case.expect}'")
    else:
        forged = [l for l in lines if l.startswith("et-convert: wrote")]
        if forged:
            problems.append("a line forged from input text was printed raw")
    for k, snap in snaps.items():
        if not os.path.lexists(paths[k]) or snapshot(paths[k]) != snap:
            problems.append(f"{k} {paths[k]} was changed or replaced")
    # A refusal leaves nothing new at all; a success no temporary file.
    left = ([n for n in os.listdir(d) if n not in before] if case.code != 0 else
            leftovers(d, before))
    if left:
        problems.append("left behind: " + ", ".join(sorted(left)))
    shutil.rmtree(d, ignore_errors=True)
    if problems:
        return case.name, "bad", "; ".join(problems), message
    return case.name, "ok", f"{seconds:.1f} s", message


def sigterm_during_write_ranks(build, work, good_et):
    """SIGTERM while --write-ranks fills its staging folder: nothing may be left."""
    d = os.path.join(work, "sigterm-write-ranks")
    os.makedirs(d)
    proc = subprocess.Popen([os.path.join(build, "simulator", "et-sim"), good_et, "--world",
                             "100000", "--write-ranks", "job"], cwd=d,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + TIMEOUT_S
    while not os.listdir(d) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)  # some rank files in the folder
    proc.terminate()
    proc.wait()
    left = os.listdir(d)
    shutil.rmtree(d, ignore_errors=True)
    if proc.returncode != -15:
        return f"exit {proc.returncode}, not killed by SIGTERM (finished too soon?)"
    return "left behind: " + ", ".join(left) if left else ""


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    build, repo, work = (os.path.abspath(a) for a in sys.argv[1:4])
    only = sys.argv[4] if len(sys.argv) > 4 else ""
    data = os.path.join(repo, "tests", "data")
    good_et = os.path.join(data, "chakra", "mlp_mp.0.et")
    good_json = os.path.join(data, "hta", "simple_add_et.json.gz")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # Sanitizer builds reserve terabytes of address space: no RLIMIT_AS there.
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    limit_memory = "ET_SANITIZE:BOOL=ON" not in cache
    cases = (kineto_cases() + output_cases(good_json) + nsys_cases(data) +
             sim_cases(good_et) + flag_cases(good_et) + [long_kernels_case(build)])
    # et-replay is built only where MPI is found.
    cases = [c for c in cases if only in c.name and
             os.path.exists(os.path.join(build, TOOL_DIRS[c.argv[0]], c.argv[0]))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: run_case(build, work, c, limit_memory), cases))
    counts = {}
    failures = 0
    problem = sigterm_during_write_ranks(build, work, good_et)
    results.append(("sigterm-write-ranks", "bad" if problem else "ok", problem, ""))
    for name, outcome, detail, message in results:
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome != "ok":
            failures += 1
            print(f"FAIL {name}: {outcome}: {detail}\n  stderr: {message[:300]}")
    print(f"{len(results)} cases: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
