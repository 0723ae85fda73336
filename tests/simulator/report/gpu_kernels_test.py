#!/usr/bin/env python3
"""The GPU kernel table and the tensor-core rule, on real H100 recordings.

Usage: gpu_kernels_test.py BUILD_DIR SOURCE_DIR

Each H100 recording (tests/data/h100's MLPs, ../shared/traces/h100's ResNet-50
and GPT-2 where present) is converted and simulated with --json. Its
recording's dtype (the *_meta.json beside it) is the truth the rule is held
to: an fp32 model (TF32 off, PyTorch's default for matmuls) runs no kernel on
tensor cores though it runs GEMMs; a bf16-autocast one runs every bf16
GEMM/convolution kernel on them and most of its kernel time there. And the
table adds up: kernel rows are GPU work only (no memcpy, memset, host op),
their shares sum to 1, calls and times match the op table's rows of the same
name, and each row's recorded time is the trace's (recorded calls == calls,
error 0 at --compute recorded), and none where it is no truth (a
tensor-parallel split, --device). Exits 77 when no recording is found.
"""

import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("FAIL: %s: %s" % (" ".join(cmd), result.stderr[-2000:]))
    return result.stdout


def is_bf16_matmul(name):
    """A kernel whose name says it multiplies bf16 matrices (the truth's
    side: the dtype recorded; the kernel families cuBLAS/cuDNN name so)."""
    lower = name.lower()
    return "bf16" in lower and any(w in lower for w in ("gemm", "fprop",
                                                         "dgrad", "wgrad"))


def check(model, dtype, report):
    kernels = report["gpu_kernels"]
    ops = {o["name"]: o for o in report["ops"]}
    assert kernels, "%s: no GPU kernel in the table" % model
    total = sum(k["total_ns"] for k in kernels)
    assert abs(sum(k["share"] for k in kernels) - 1) < 1e-9, model
    for k in kernels:
        lower = k["name"].lower()
        assert "memcpy" not in lower and "memset" not in lower, k["name"]
        op = ops[k["name"]]  # a kernel is an op row of the same name
        assert (op["calls"], op["total_ns"]) == (k["calls"], k["total_ns"])
        assert k["recorded_calls"] == k["calls"], k
        assert k["recorded_ns"] == k["predicted_of_recorded_ns"] > 0, k
    tc = [k for k in kernels if k["tensor_cores"]]
    tc_ns = sum(k["total_ns"] for k in tc)
    if dtype == "fp32":
        assert any("gemm" in k["name"].lower() for k in kernels), model
        assert not tc, "%s (fp32): on tensor cores: %s" % (
            model, [k["name"] for k in tc])
    else:
        matmuls = [k for k in kernels if is_bf16_matmul(k["name"])]
        assert matmuls, model
        for k in matmuls:
            assert k["tensor_cores"], "%s: %s" % (model, k["name"])
        assert tc_ns > 0.1 * total, (model, tc_ns, total)
    print("%s (%s): %d kernels, %d on tensor cores, %.1f%% of kernel time"
          % (model, dtype, len(kernels), len(tc), 100.0 * tc_ns / total))


def check_no_truth(sim, et):
    """Where the recorded time is no truth for the simulated one, none is
    compared: a tensor-parallel split divides the durations (every op, and
    the report says why); --device scales the GPU ops (kernels only: host
    ops keep theirs); --compute roofline prices kernels anew (compared,
    and no longer equal)."""
    split = json.loads(run([sim, et, "--layout", "tp=2", "--json"]))
    assert "tensor-parallel" in split["recorded_none"], split.get(
        "recorded_none")
    assert all(o["recorded_calls"] == 0 for o in split["ops"])
    scaled = json.loads(run([sim, et, "--device", "A100", "--json"]))
    assert "recorded_none" not in scaled
    assert all(k["recorded_calls"] == 0 for k in scaled["gpu_kernels"])
    kernels = {k["name"] for k in scaled["gpu_kernels"]}
    host = [o for o in scaled["ops"] if o["name"] not in kernels and
            o["recorded_calls"] > 0]
    assert host, "--device: no host op kept its recorded time"
    roofline = json.loads(run([sim, et, "--compute", "roofline", "--json"]))
    moved = [k for k in roofline["gpu_kernels"] if k["recorded_calls"] and
             k["predicted_of_recorded_ns"] != k["recorded_ns"]]
    assert moved, "--compute roofline: every kernel at its recorded time"
    print("no truth: tp split %d ops, --device %d kernels and %d host ops "
          "kept, roofline %d kernels moved" % (
              len(split["ops"]), len(kernels), len(host), len(moved)))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, src = sys.argv[1:]
    sim = os.path.join(build, "simulator", "et-sim")
    convert = os.path.join(build, "converter", "et-convert")
    shared = os.path.join(os.environ.get(
        "ET_SHARED_TRACES", os.path.join(src, "..", "shared", "traces")),
        "h100")
    found = [(os.path.join(src, "tests", "data", "h100"), m)
             for m in ("mlp1024", "mlp4096")]
    found += [(shared, m) for m in ("resnet50", "gpt2")
              if os.path.isfile(os.path.join(shared, m + "_meta.json"))]
    found = [(d, m) for d, m in found
             if os.path.isfile(os.path.join(d, m + "_et.json.gz"))]
    if not found:
        print("SKIP: no H100 recording")
        return 77
    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as w:
        for folder, model in found:
            meta_path = os.path.join(folder, model + "_meta.json")
            if not os.path.isfile(meta_path):
                meta_path = os.path.join(shared, model + "_meta.json")
            with open(meta_path) as f:
                dtype = json.load(f)["dtype"]
            et = os.path.join(w, model + ".et")
            run([convert, os.path.join(folder, model + "_et.json.gz"), et,
                 "--kineto", os.path.join(folder, model + "_kineto.json.gz")])
            check(model, dtype, json.loads(run([sim, et, "--json"])))
            if model == "mlp1024":
                check_no_truth(sim, et)
    return 0


if __name__ == "__main__":
    sys.exit(main())
