"""ettools against the tools it is built from: every number Python gives is
the one et-sim prints (its --json byte for byte, over the shared traces and
the demo), each refusal has et-sim's words, and the tables hold what the
converter wrote and what the engine ran."""
import collections
import glob
import gzip
import json
import os
import re
import time

import numpy as np
import pytest

import ettools
from conftest import ET_CONVERT, ET_SIM, REPO, SHARED, run_tool


def et_sim_json(*args):
    rc, out, err = run_tool(ET_SIM, *args, "--json")
    assert rc == 0, err
    return out


# ---- the demo -------------------------------------------------------------

def test_demo_to_dict_is_et_sim_json(demo):
    result = ettools.simulate(demo, ranks=4, host_time="recorded")
    expected = et_sim_json(demo, "--ranks", "4", "--host-time", "recorded")
    assert result.json == expected
    assert result.to_dict() == json.loads(expected)
    # A Trace loaded with ranks= simulates the same run.
    trace = ettools.load(demo, ranks=4)
    assert ettools.simulate(trace, host_time="recorded").json == expected


def test_demo_text_is_et_sim_text(demo):
    result = ettools.simulate(demo, ranks=4, host_time="recorded", top=8)
    rc, out, err = run_tool(ET_SIM, demo, "--ranks", "4", "--top", "8",
                            "--host-time", "recorded")
    assert rc == 0
    assert result.text == out
    assert [("et-sim: note: " + n + "\n") for n in result.notes] == \
        err.splitlines(keepends=True)


def test_demo_tables_are_the_report(demo):
    result = ettools.simulate(demo, ranks=4, host_time="recorded")
    d = result.to_dict()
    ranks = result.ranks
    assert sorted(ranks["rank"]) == [0, 1, 2, 3]
    by_rank = {r: row for row in d["ranks"] for r in row["ranks"]}
    for _, row in ranks.iterrows():
        src = by_rank[row["rank"]]
        for k in ("step_ns", "compute_ns", "comm_ns", "exposed_comm_ns",
                  "idle_ns"):
            assert row[k] == src[k]
    # The long tables come as C++ columns, not parsed from the JSON: every
    # field of every row is the JSON's (synthesized: there only when true).
    assert len(d["collectives"]) > 0 and len(d["critical_path"]) > 0
    for name in ("ops", "collectives", "critical_path"):
        table = getattr(result, name)
        assert len(table) == len(d[name])
        for column in table.columns:
            got = table[column].tolist()
            want = [row.get(column, False) for row in d[name]]
            assert got == want, (name, column)
        assert set(table.columns) >= set().union(*d[name])
    steps = result.steps
    assert len(steps) == 4 * d["step"]["steps"]
    b = result.breakdown
    assert np.allclose(b["step_us"] * 1e3, ranks["step_ns"])


def test_demo_timeline_is_et_sim_timeline(demo, workdir):
    path = workdir / "timeline.json"
    rc, _, err = run_tool(ET_SIM, demo, "--ranks", "4", "--timeline", path)
    assert rc == 0, err
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    simulated = [e for e in events if e.get("cat") in ("compute", "comm")]
    tl = ettools.simulate(demo, ranks=4).timeline
    assert len(tl) == len(simulated)
    got = collections.Counter(zip(tl["rank"], tl["id"], tl["category"]))
    want = collections.Counter((e["pid"], e["args"]["node"], e["cat"])
                               for e in simulated)
    assert got == want
    starts = {(e["pid"], e["args"]["node"]): (e["ts"], e["dur"])
              for e in simulated}
    for r, i, s, dur in zip(tl["rank"], tl["id"], tl["start_us"],
                            tl["duration_us"]):
        ts, d = starts[(r, i)]
        assert abs(ts - s) < 1e-3 and abs(d - dur) < 1e-3


def test_compare_is_et_sim_compare(workdir):
    """simulate(compare=) is et-sim --compare: the comparison in its JSON,
    and the page with the Compare tab."""
    ets = []
    for model in ("mlp1024", "mlp4096"):
        ets.append(workdir / (model + ".et"))
        data = REPO / "tests/data/h100"
        ettools.convert(data / (model + "_et.json.gz"), ets[-1],
                        kineto=data / (model + "_kineto.json.gz"))
    page = workdir / "compare.html"
    result = ettools.simulate(str(ets[0]), compare=str(ets[1]), html=str(page))
    expected = et_sim_json(ets[0], "--compare", ets[1])
    assert result.json == expected
    assert result.to_dict()["compare"]["after"] == str(ets[1])
    assert 'id="tab-compare"' in page.read_text()
    d = json.loads(expected)
    assert list(result.compare_ops["name"]) == \
        [o["name"] for o in d["compare"]["ops"]]
    assert list(result.gpu_kernels["tensor_cores"]) == \
        [k["tensor_cores"] for k in d["gpu_kernels"]]
    assert list(result.gpu_kernels["recorded_ns"]) == \
        [k["recorded_ns"] for k in d["gpu_kernels"]]


# ---- the node table -------------------------------------------------------

def test_nodes_are_what_the_converter_wrote(workdir):
    out = workdir / "conv"
    out.mkdir()
    summaries = ettools.convert(
        REPO / "examples/data/ddp_mlp_et_r%d.json.gz", out / "d.%d.et",
        ranks=4, kineto=REPO / "examples/data/ddp_mlp_trace_r%d.json.gz")
    assert len(summaries) == 4
    trace = ettools.load(out / "d.%d.et", ranks=4)
    nodes = trace.nodes
    assert trace.ranks == [0, 1, 2, 3]
    for rank, s in enumerate(summaries):
        mine = nodes[nodes["rank"] == rank]
        assert len(mine) == s["written_nodes"]
        types = mine["type"].astype(str).value_counts().to_dict()
        assert types == s["nodes_by_type"]
        comm = mine[mine["kind"] == "collective"]
        got = comm.groupby(comm["comm_type"].astype(str))["comm_bytes"].sum()
        assert got.to_dict() == s["collective_bytes_by_type"]
    deps = trace.deps
    for rank, s in enumerate(summaries):
        kinds = deps[deps["rank"] == rank]["kind"].astype(str).value_counts()
        assert kinds.get("data", 0) == s["data_deps"]
        assert kinds.get("ctrl", 0) == s["ctrl_deps"]
    steps = trace.steps
    assert set(steps["rank"]) == {0, 1, 2, 3}
    assert (steps["duration_us"] > 0).all()
    assert trace.metadata[0]["nodes"] == summaries[0]["written_nodes"]


def test_node_table_of_the_largest_trace_is_fast():
    """The largest .et in ../shared/traces: its node table, columns built in
    C++ (the time is printed; the bound is loose for a loaded machine;
    docs/python.md has the 308k-node trace's)."""
    ets = sorted(glob.glob(str(SHARED / "**/*.et"), recursive=True),
                 key=os.path.getsize)
    if not ets:
        pytest.skip("no ../shared/traces")
    t0 = time.perf_counter()
    trace = ettools.load(ets[-1])
    nodes = trace.nodes
    seconds = time.perf_counter() - t0
    print("\n%s: %d nodes in %.3f s" % (ets[-1], len(nodes), seconds))
    assert len(nodes) == trace.metadata[0]["nodes"] > 1000
    assert nodes["id"].is_unique
    assert seconds < 10


# ---- every shared trace: to_dict() is et-sim --json -----------------------

def shared_inputs():
    """(id, path, ranks) of every trace in ../shared/traces as et-sim takes
    it: each .et, the ASTRA-sim microbenchmarks as their rank patterns."""
    if not SHARED.is_dir():
        return []
    found, patterns = [], set()
    for path in sorted(glob.glob(str(SHARED / "**/*.et"), recursive=True)):
        if "/microbenchmarks/" in path:
            head, _, tail = path.rpartition("/")
            stem = tail.split(".")[0]
            n = len(glob.glob(head + "/" + stem + ".*.et"))
            patterns.add((head + "/" + stem + ".%d.et", n))
        else:
            found.append((os.path.relpath(path, SHARED), path, None))
    for pattern, n in sorted(patterns):
        found.append((os.path.relpath(pattern, SHARED), pattern, n))
    return found


def converted_inputs():
    """Every ET and Kineto JSON in ../shared/traces, each as et-convert
    converts it alone, ETs with their Kineto traces where they are paired
    (the nsys exports are several graphs: et-convert's, not convert()'s)."""
    if not SHARED.is_dir():
        return []
    out = []
    for path in sorted(glob.glob(str(SHARED / "**/*.json.gz"),
                                 recursive=True)):
        name = os.path.basename(path)
        if "replay" in name or "_light" in name:
            continue
        kineto = None
        if "_et" in name:
            guess = path.replace("_et", "_kineto").replace("_et_r", "_trace_r")
            for k in (guess, path.replace("_et.", "_trace.")):
                if k != path and os.path.exists(k):
                    kineto = k
        out.append((os.path.relpath(path, SHARED), path, kineto))
    return out


@pytest.mark.parametrize("name,path,ranks", shared_inputs(),
                         ids=[i[0] for i in shared_inputs()])
def test_shared_et_to_dict_is_et_sim_json(name, path, ranks):
    args = [path] + (["--ranks", str(ranks)] if ranks else [])
    rc, out, err = run_tool(ET_SIM, *args, "--json")
    options = {"ranks": ranks} if ranks else {}
    if rc != 0:
        with pytest.raises(ettools.Error) as e:
            ettools.simulate(path, **options)
        assert "et-sim: error: %s\n" % e.value == err
        return
    result = ettools.simulate(path, **options)
    assert result.json == out


@pytest.mark.parametrize("name,path,kineto", converted_inputs(),
                         ids=[i[0] for i in converted_inputs()])
def test_converted_to_dict_is_et_sim_json(name, path, kineto, workdir):
    et = workdir / (name.replace("/", "_") + ".et")
    try:
        ettools.convert(path, et, kineto=kineto)
    except ettools.Error as e:
        args = [path, str(et) + ".tool"] + (["--kineto", kineto] if kineto
                                            else [])
        rc, _, err = run_tool(ET_CONVERT, *args)
        assert rc != 0 and str(e) in err
        return
    for options, flags in (({}, []),
                           ({"host_time": "recorded"},
                            ["--host-time", "recorded"]),
                           ({"layout": "dp=8"}, ["--layout", "dp=8"])):
        rc, out, err = run_tool(ET_SIM, et, *flags, "--json")
        if rc != 0:
            with pytest.raises(ettools.Error) as e:
                ettools.simulate(str(et), **options)
            assert "et-sim: error: %s\n" % e.value == err
            continue
        assert ettools.simulate(str(et), **options).json == out, flags


# ---- sweeps, nccl-tests, other options ------------------------------------

def test_sweep_is_et_sim_sweep(workdir):
    et = workdir / "nn_demo.et"
    ettools.convert(SHARED / "pytorch-1.13-cpu/nn_demo_et.json.gz", et,
                    kineto=SHARED / "pytorch-1.13-cpu/nn_demo_trace.json.gz")
    expected = json.loads(et_sim_json(et, "--sweep", "dp=1,8,64"))
    table = ettools.sweep(str(et), dp=[1, 8, 64])
    assert list(table["value"]) == [1, 8, 64]
    assert list(table["step_us"]) == \
        [p["step_us"] for p in expected["sweep"]["points"]]
    assert ettools.simulate(str(et), sweep="dp=1,8,64").to_dict() == expected


def test_search_is_et_sim_search(workdir):
    """--search world=N as ettools.search: the same rows, ranked."""
    et = workdir / "tpmlp1.et"
    ettools.convert(REPO / "tests/data/tp-synth/tpmlp1_et.json.gz", et,
                    kineto=REPO / "tests/data/tp-synth/tpmlp1_kineto.json.gz")
    expected = json.loads(et_sim_json(et, "--search", "world=16"))
    table = ettools.search(str(et), world=16)
    rows = expected["search"]["layouts"]
    assert list(table["layout"]) == [r["layout"] for r in rows]
    assert list(table["step_us"]) == [r["step_us"] for r in rows]
    assert list(table["step_us"]) == sorted(table["step_us"])
    assert table.attrs["best"] == expected["search"]["best"]
    assert ettools.simulate(str(et), search="world=16").to_dict() == expected


def test_pipeline_is_et_sim_pipeline(workdir):
    """--layout pp=P with --micro-batches and --pp-schedule, as keywords."""
    et = workdir / "gpt64.et"
    ettools.convert(REPO / "tests/data/cpu-corpus/cpu_gpt_w64_et.json.gz", et,
                    kineto=REPO / "tests/data/cpu-corpus/cpu_gpt_w64_kineto.json.gz")
    expected = json.loads(et_sim_json(et, "--layout", "pp=2", "--micro-batches",
                                      "8", "--pp-schedule", "gpipe"))
    result = ettools.simulate(str(et), layout="pp=2", micro_batches=8,
                              pp_schedule="gpipe")
    assert result.to_dict() == expected
    assert any("bubble" in n for n in expected["notes"])


def test_interleaved_pipeline_and_split_as_keywords(workdir):
    """--pp-schedule interleaved:V and --pp-split, as keywords (tests/data/pp-gpt)."""
    et = workdir / "ppgpt1.et"
    ettools.convert(REPO / "tests/data/pp-gpt/gpt1_et.json.gz", et,
                    kineto=REPO / "tests/data/pp-gpt/gpt1_kineto.json.gz")
    for keywords in ({"pp_schedule": "interleaved:2"}, {"pp_split": "3,1"}):
        args = ["--layout", "pp=2", "--micro-batches", "4"]
        for key, value in keywords.items():
            args += ["--" + key.replace("_", "-"), value]
        expected = json.loads(et_sim_json(et, *args))
        result = ettools.simulate(str(et), layout="pp=2", micro_batches=4,
                                  **keywords)
        assert result.to_dict() == expected
        note = next(n for n in expected["notes"] if "synthesized pp=2" in n)
        assert ("interleaved:2" in note) == ("pp_schedule" in keywords)
        assert ("--pp-split" in note) == ("pp_split" in keywords)


def test_nccl_tests_is_et_sim_table():
    expected = json.loads(et_sim_json("--nccl-tests", "all_gather",
                                      "--world", "16", "--max-bytes", "1M"))
    table = ettools.nccl_tests("all_gather", world=16, max_bytes="1M")
    assert list(table["bytes"]) == [r["bytes"] for r in expected["rows"]]
    assert list(table["time_us"]) == [r["time_us"] for r in expected["rows"]]


def test_every_et_sim_flag_is_a_keyword():
    """Every flag et_sim_main.cc defines is a keyword of simulate()."""
    main = open(REPO / "simulator/et_sim_main.cc").read()
    flags = set(re.findall(r"ABSL_FLAG\([^,]+,\s*(\w+),", main))
    assert len(flags) > 40 and flags == set(ettools.OPTIONS)


# ---- errors have the tool's words -----------------------------------------

@pytest.mark.parametrize("options,flags", [
    ({"world": 0}, ["--world", "0"]),
    ({"layout": "dp=0"}, ["--layout", "dp=0"]),
    ({"layout": "xx=2"}, ["--layout", "xx=2"]),
    ({"comm": "carrier-pigeon"}, ["--comm", "carrier-pigeon"]),
    ({"calibration": "c.json"}, ["--calibration", "c.json"]),
    ({"sweep": ""}, ["--sweep", ""]),
    ({"topology": "NO-SUCH-CLUSTER"}, ["--topology", "NO-SUCH-CLUSTER"]),
    ({"slow_rank": ["x"]}, ["--slow-rank", "x"]),
])
def test_bad_option_has_et_sim_words(demo, options, flags):
    rc, out, err = run_tool(ET_SIM, demo, "--ranks", "4", *flags)
    assert rc != 0
    with pytest.raises(ettools.Error) as e:
        ettools.simulate(demo, ranks=4, **options)
    assert "et-sim: error: %s\n" % e.value == err
    assert isinstance(e.value, ettools.UsageError) == (rc == 2)


def test_bad_file_has_et_sim_words(workdir):
    bad = workdir / "bad.et"
    bad.write_bytes(b"\x05not a chakra trace")
    rc, _, err = run_tool(ET_SIM, bad)
    assert rc == 1
    with pytest.raises(ettools.Error) as e:
        ettools.simulate(str(bad))
    assert "et-sim: error: %s\n" % e.value == err
    assert not isinstance(e.value, ettools.UsageError)
    with pytest.raises(ettools.Error) as e:
        ettools.load(str(bad))
    assert str(bad) in str(e.value)
    with pytest.raises(ettools.Error):
        ettools.load(str(workdir / "missing.et"))


def test_unknown_keyword_is_refused(demo):
    with pytest.raises(ettools.UsageError, match="no --wrold"):
        ettools.simulate(demo, ranks=4, wrold=8)
    with pytest.raises(ettools.UsageError, match="--world: expected an int"):
        ettools.simulate(demo, world="8")


# ---- HTA's temporal breakdown ---------------------------------------------

def hta_breakdown_by_hand(kineto):
    """HTA's temporal breakdown straight from a Kineto trace's GPU events:
    the span of its kernels, memcpys and memsets, the union of the compute
    kernels (not NCCL), the union of the others less it, and the rest."""
    events = json.load(gzip.open(kineto))["traceEvents"]
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in
           ("kernel", "gpu_memcpy", "gpu_memset")]

    def union(intervals):
        total, end = 0.0, None
        for s, e in sorted(intervals):
            if end is None or s > end:
                total += e - s
                end = e
            elif e > end:
                total += e - end
                end = e
        return total

    spans = [(e["ts"], e["ts"] + e["dur"]) for e in gpu]
    compute = [(e["ts"], e["ts"] + e["dur"]) for e in gpu
               if e["cat"] == "kernel" and "nccl" not in e["name"].lower()]
    span = max(e for _, e in spans) - min(s for s, _ in spans)
    busy, comp = union(spans), union(compute)
    return {"span_us": span, "compute_us": comp,
            "non_compute_us": busy - comp, "idle_us": span - busy}


@pytest.mark.parametrize("et,kineto", [
    ("hta/simple_add_et.json.gz", "hta/simple_add_kineto.json.gz"),
    (None, "hta/sampled_rank-0_kineto.json.gz"),
    (None, "kineto-only/hta_alexnet_trace.json.gz"),
])
def test_temporal_breakdown_is_hta_definition(workdir, et, kineto):
    """HTA's public test traces (an ET with its Kineto trace, a rank of a
    128-rank job with NCCL kernels on several streams, AlexNet with
    memcpys): the breakdown of the converted trace's device nodes equals
    HTA's definition computed from the Kineto events by hand."""
    out = workdir / (os.path.basename(kineto) + ".et")
    if et:
        ettools.convert(SHARED / et, out, kineto=SHARED / kineto)
    else:
        ettools.convert(SHARED / kineto, out)
    got = ettools.temporal_breakdown(ettools.load(out).nodes)
    want = hta_breakdown_by_hand(SHARED / kineto)
    assert len(got) == 1
    for key, value in want.items():
        assert abs(got.iloc[0][key] - value) < 1e-3, key
    assert want["compute_us"] > 0


def test_temporal_breakdown_of_the_simulated_run(demo):
    result = ettools.simulate(demo, ranks=4, host_time="recorded")
    tl = result.timeline
    b = ettools.temporal_breakdown(tl)
    # The demo is a CPU run: every op is on a host thread or a gloo channel.
    assert set(b["rank"]) <= set(tl["rank"])
    assert (b["idle_us"] >= -1e-6).all()


# ---- nsys exports ---------------------------------------------------------

@pytest.mark.parametrize("export", ["nsysai_mfu_2gpu_before.sqlite.gz",
                                    "nsysai_mock_rtx3080.sqlite.gz"])
def test_convert_an_nsys_export_as_et_convert(export, workdir):
    """An Nsight Systems export: ettools.convert writes the graphs
    et-convert writes, byte for byte, with its summaries."""
    src = REPO / "tests/data/nsys" / export
    mine = workdir / ("py_" + export)
    tool = workdir / ("tool_" + export)
    mine.mkdir()
    tool.mkdir()
    summaries = ettools.convert(src, mine / "g.%d.et")
    rc, _, err = run_tool(ET_CONVERT, src, tool / "g.%d.et",
                          "--json-summary", tool / "summary.json")
    assert rc == 0, err
    want = json.load(open(tool / "summary.json"))["ranks"]

    def same(s):  # not the output's path and the time it took
        return {k: v for k, v in s.items() if k not in ("output",
                                                         "wall_seconds")}
    assert [same(s) for s in summaries] == [same(s) for s in want]
    names = sorted(p.name for p in tool.iterdir() if p.suffix == ".et")
    assert sorted(p.name for p in mine.iterdir()) == names
    for name in names:
        assert (mine / name).read_bytes() == (tool / name).read_bytes()
    trace = ettools.load(mine / "g.%d.et", ranks=len(names))
    assert len(trace.nodes) == sum(s["written_nodes"] for s in summaries)


def test_convert_refuses_a_pattern_without_ranks(workdir):
    with pytest.raises(ettools.UsageError, match="needs --ranks N"):
        ettools.convert(REPO / "examples/data/ddp_mlp_et_r0.json.gz",
                        workdir / "x.%d.et")
