#!/usr/bin/env python3
"""et-viz --diff on two recordings of one model whose width changed (issue 54).

Usage: trace_diff_test.py BUILD_DIR SOURCE_DIR

The shared H100 recordings mlp1024 and mlp4096 are one MLP at hidden width
1024 and 4096: the GEMM kernels' time must move most. Checks, on the --json
output: the rows are sorted by how far their self time moved, each delta is
after - before, the groups' self times add up to each trace's total, the op
that moved most is a GPU GEMM kernel that got slower, and the text names it
with both times; diffing the other way round negates every delta and swaps
appeared and vanished; a trace against itself moves nothing. Exits 77 when
../shared is absent.
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


def main():
    build, src = sys.argv[1:3]
    h100 = os.path.join(os.environ.get(
        "ET_SHARED_TRACES", os.path.join(src, "..", "shared", "traces")),
        "h100")
    if not os.path.isdir(h100):
        print("SKIP: %s is absent" % h100)
        return 77
    viz = os.path.join(build, "visualizer", "et-viz")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as w:
        ets = []
        for model in ("mlp1024", "mlp4096"):
            et = os.path.join(w, model + ".et")
            run([os.path.join(build, "converter", "et-convert"),
                 os.path.join(h100, model + "_et.json.gz"), et, "--kineto",
                 os.path.join(h100, model + "_kineto.json.gz")])
            ets.append(et)
        diff = json.loads(run([viz, "--diff"] + ets + ["--json"]))
        back = json.loads(run([viz, "--diff", ets[1], ets[0], "--json"]))
        same = json.loads(run([viz, "--diff", ets[0], ets[0], "--json"]))
        text = run([viz, "--diff"] + ets + ["--top", "5"])
    ops = diff["ops"]
    moved = [abs(o["delta_self_ns"]) for o in ops]
    assert moved == sorted(moved, reverse=True), "not sorted by move"
    for o in ops:
        assert o["delta_self_ns"] == o["after_self_ns"] - o["before_self_ns"]
        assert o["change"] == ("appeared" if o["before_calls"] == 0 else
                               "vanished" if o["after_calls"] == 0 else
                               "changed"), o
    assert sum(o["before_self_ns"] for o in ops) == diff["self_ns"][0]
    assert sum(o["after_self_ns"] for o in ops) == diff["self_ns"][1]
    top = ops[0]
    assert top["device"] == "gpu" and "gemm" in top["name"].lower(), top
    assert top["after_self_ns"] > top["before_self_ns"], top
    print("moved most: %s, %d -> %d ns" % (top["name"][:60],
                                           top["before_self_ns"],
                                           top["after_self_ns"]))
    assert top["name"][:50] in text, text
    # The other way round.
    key = lambda o: (o["name"], o["device"], o["input_shapes"])
    forward = {key(o): o for o in ops}
    swap = {"appeared": "vanished", "vanished": "appeared",
            "changed": "changed"}
    for o in back["ops"]:
        f = forward[key(o)]
        assert o["delta_self_ns"] == -f["delta_self_ns"], (o, f)
        assert o["change"] == swap[f["change"]], (o, f)
    # A trace against itself.
    assert all(o["delta_self_ns"] == 0 and o["change"] == "changed"
               for o in same["ops"]), "a trace against itself moved"
    assert same["self_ns"][0] == same["self_ns"][1]
    print("%d op groups compared" % len(ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
