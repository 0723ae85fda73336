#!/usr/bin/env python3
"""et-sim --html pages loaded in headless Chromium (issue 54).

Usage: html_report_browser_test.py BUILD_DIR SOURCE_DIR CASE [--shots DIR]

CASE is one of:
  demo   the README's demo: the bundled 4-rank DDP trace with its profiler
         traces, --host-time recorded (a truth, host-bound, gloo collectives)
  gpu    an H100 recording (../shared/traces/h100/mlp1024) at --layout dp=8:
         GPU kernels, a synthesized DDP sync, GPU memory against capacity
  sweep  the same trace swept over dp=1,8,64 (the Scale tab)
  viz    et-viz --report --html on the demo's 4 ranks: the recorded trace's
         page, the same design (Overview, Ops, Memory, Distributed)
  diff   et-viz --diff --html on the H100 MLP at widths 1024 and 4096: the
         Compare tab
  compare  et-sim's page of the H100 MLP at width 1024 --compare 4096
         (tests/data/h100): the run's tabs and its Compare tab
  big    the ~308k-node trace of docs/benchmarks.md (tests/bench: made once,
         cached in $ET_BENCH_DATA_DIR, default /tmp/et-bench): under 5 MB,
         loaded in under 3 s

Each page must load with no console error, no uncaught exception and no
request for anything but the file itself; every tab must be on the bar, show
its section when clicked, and give a screenshot that is not blank (enough
pixels unlike the background) and unlike the other tabs'. Exits 77 (skipped)
when Chromium is not installed or the shared traces are absent.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless_page  # noqa: E402

SKIP = 77
RUN_TABS = ["overview", "ops", "timeline", "memory", "distributed"]


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), result.returncode,
                                             result.stderr[-2000:]))
    return result.stdout


def shared_traces(src):
    return os.environ.get("ET_SHARED_TRACES",
                          os.path.join(src, "..", "shared", "traces"))


def big_trace(build, src):
    """The benchmark's 308k-node .et, made as model_load_bench.sh makes it."""
    data = os.environ.get("ET_BENCH_DATA_DIR", "/tmp/et-bench")
    et = os.path.join(data, "big308k.et")
    if os.path.getsize(et) if os.path.exists(et) else 0:
        return et
    os.makedirs(data, exist_ok=True)
    bench = os.path.join(src, "tests", "bench")
    upgraded = os.path.join(data, "tfm_small.1.1.0.json")
    big_json = os.path.join(data, "big308k.json")
    run([sys.executable, os.path.join(bench, "et_upgrade_schema.py"),
         os.path.join(src, "tests", "data", "pytorch-1.13-cpu",
                      "tfm_small_et.json.gz"), upgraded])
    run([sys.executable, os.path.join(bench, "et_repeat_ops.py"), upgraded,
         big_json, "308000"])
    run([os.path.join(build, "converter", "et-convert"), big_json, et,
         "--keep", "all", "--quiet"])
    return et


def make_page(case, build, src, work):
    """Runs et-sim for `case`; returns (page, tabs expected)."""
    sim = os.path.join(build, "simulator", "et-sim")
    convert = os.path.join(build, "converter", "et-convert")
    page = os.path.join(work, case + ".html")
    if case == "demo":
        data = os.path.join(src, "examples", "data")
        run([convert, os.path.join(data, "ddp_mlp_et_r%d.json.gz"),
             os.path.join(work, "ddp_mlp.%d.et"), "--ranks", "4", "--kineto",
             os.path.join(data, "ddp_mlp_trace_r%d.json.gz")])
        run([sim, os.path.join(work, "ddp_mlp.%d.et"), "--ranks", "4",
             "--host-time", "recorded", "--html", page, "--timeline",
             os.path.join(work, "demo_timeline.json")])
        return page, RUN_TABS
    if case == "viz":
        data = os.path.join(src, "examples", "data")
        run([convert, os.path.join(data, "ddp_mlp_et_r%d.json.gz"),
             os.path.join(work, "ddp_mlp.%d.et"), "--ranks", "4", "--kineto",
             os.path.join(data, "ddp_mlp_trace_r%d.json.gz")])
        run([os.path.join(build, "visualizer", "et-viz")] +
            [os.path.join(work, "ddp_mlp.%d.et" % r) for r in range(4)] +
            ["--report", "--html", page])
        return page, ["overview", "ops", "memory", "distributed"]
    if case == "compare":
        ets = []
        for model in ("mlp1024", "mlp4096"):
            folder = os.path.join(src, "tests", "data", "h100")
            ets.append(os.path.join(work, model + ".et"))
            run([convert, os.path.join(folder, model + "_et.json.gz"),
                 ets[-1], "--kineto",
                 os.path.join(folder, model + "_kineto.json.gz")])
        run([sim, ets[0], "--compare", ets[1], "--html", page])
        return page, RUN_TABS + ["compare"]
    h100 = os.path.join(shared_traces(src), "h100")
    if case == "diff":
        if not os.path.isdir(h100):
            print("SKIP: %s is absent" % h100)
            sys.exit(SKIP)
        ets = []
        for model in ("mlp1024", "mlp4096"):
            ets.append(os.path.join(work, model + ".et"))
            run([convert, os.path.join(h100, model + "_et.json.gz"), ets[-1],
                 "--kineto", os.path.join(h100, model + "_kineto.json.gz")])
        run([os.path.join(build, "visualizer", "et-viz"), "--diff"] + ets +
            ["--html", page])
        return page, ["compare"]
    if case in ("gpu", "sweep"):
        if not os.path.isdir(h100):
            print("SKIP: %s is absent" % h100)
            sys.exit(SKIP)
        et = os.path.join(work, "mlp1024.et")
        run([convert, os.path.join(h100, "mlp1024_et.json.gz"), et, "--kineto",
             os.path.join(h100, "mlp1024_kineto.json.gz")])
        if case == "gpu":
            run([sim, et, "--layout", "dp=8", "--html", page])
            return page, RUN_TABS
        run([sim, et, "--sweep", "dp=1,8,64", "--device-memory-gib", "0.5",
             "--html", page])
        return page, ["overview", "scale"]
    if case == "big":
        run([sim, big_trace(build, src), "--world", "8", "--html", page])
        return page, RUN_TABS
    sys.exit("unknown case " + case)


def check_static(html, case):
    """Nothing in the file could fetch: no URL but the SVG namespace."""
    urls = set(re.findall(r"(?:https?|ftp)://[^\s\"'<>)]+", html))
    urls.discard("http://www.w3.org/2000/svg")
    assert not urls, "%s: URLs in the page: %s" % (case, sorted(urls)[:5])
    for pattern in (r"<link\b", r"<img\b", r"<iframe\b", r"@import",
                    r"\bsrc\s*=", r"url\("):
        assert not re.search(pattern, html), "%s: %s in the page" % (case,
                                                                      pattern)


def main():
    args = sys.argv[1:]
    shots = None
    if "--shots" in args:
        i = args.index("--shots")
        shots = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    build, src, case = args
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (.ci/install-deps installs it)")
        return SKIP
    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as work:
        page, tabs = make_page(case, build, src, work)
        size = os.path.getsize(page)
        with open(page, encoding="utf-8") as f:
            check_static(f.read(), case)
        if shots:
            os.makedirs(shots, exist_ok=True)
        seen = headless_page.inspect_page(chromium, page, tabs, shots)
    print("%s: %d bytes, load %.0f ms, %d tabs" % (case, size,
                                                  seen["load_ms"],
                                                  seen["tab_count"]))
    assert not seen["errors"], "%s: console: %s" % (case, seen["errors"])
    assert not seen["requests"], "%s: requests: %s" % (case,
                                                       seen["requests"])
    assert seen["tab_count"] == len(tabs), "%s: %d tabs on the bar" % (
        case, seen["tab_count"])
    pixels = {}
    for tab in tabs:
        shot = seen["tabs"][tab]
        assert shot["shown"], "%s: tab %s does not show" % (case, tab)
        width, height, _, rows = headless_page.png_pixels(shot["png"])
        assert (width, height) == (320, 225), "%s %s: %dx%d" % (case, tab,
                                                                width, height)
        ink = headless_page.ink_fraction(shot["png"])
        print("  %-12s ink %.3f" % (tab, ink))
        assert ink > 0.03, "%s: tab %s is blank (%.3f)" % (case, tab, ink)
        pixels[tab] = b"".join(rows)
    assert len(set(pixels.values())) == len(tabs), (
        "%s: two tabs look the same" % case)
    if case == "big":
        assert size < 5_000_000, "big page %d bytes (at most 5 MB)" % size
        assert seen["load_ms"] < 3000, "big page loads in %.0f ms" % (
            seen["load_ms"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
