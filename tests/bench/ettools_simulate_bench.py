#!/usr/bin/python3
"""ettools.simulate against et-sim's own run (issue 50, docs/benchmarks.md
"ettools.simulate"): CPU time (user + sys) of et-sim on a trace, as a child
process, and of ettools.simulate on the same trace inside this process (the
import of numpy and pandas before it, not counted), alternated REPEATS times
so that a load on the machine falls on both alike; then what the first read
of each part of the Result costs. A fresh Python's first call is measured
in a child process; later calls reuse the heap an earlier one grew (fewer
page faults) and run faster. Prints a markdown table.

Usage: PYTHONPATH=BUILD/python /usr/bin/python3 tests/bench/ettools_simulate_bench.py
           BUILD TRACE.et [REPEATS]   (REPEATS default 3)
TRACE: tests/bench/model_load_bench.sh makes the 308,402-node big308k.et.
"""
import gc
import resource
import subprocess
import sys

import ettools


def cpu_s(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def et_sim_cpu_s(build, trace):
    before = cpu_s(resource.RUSAGE_CHILDREN)
    subprocess.run([build + "/simulator/et-sim", trace], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cpu_s(resource.RUSAGE_CHILDREN) - before


def timed(what):
    before = cpu_s(resource.RUSAGE_SELF)
    value = what()
    return cpu_s(resource.RUSAGE_SELF) - before, value


def simulate_cpu_s(trace):
    """simulate() and freeing its Result (et-sim frees its simulation too)."""
    def run():
        result = ettools.simulate(trace)
        del result
        gc.collect()
    return timed(run)[0]


def fresh_simulate_cpu_s(trace):
    """simulate_cpu_s in a fresh Python, as a notebook's first call is: its
    heap not yet grown by an earlier run."""
    out = subprocess.run([sys.executable, __file__, "--once", trace],
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def main():
    if sys.argv[1] == "--once":
        print(simulate_cpu_s(sys.argv[2]))
        return
    build, trace = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    tool, module, again = [], [], []
    for _ in range(repeats):
        tool.append(et_sim_cpu_s(build, trace))
        module.append(fresh_simulate_cpu_s(trace))
        again.append(simulate_cpu_s(trace))
    result = ettools.simulate(trace)
    reads = [(name, timed(lambda n=name: getattr(result, n))[0])
             for name in ("step", "ranks", "ops", "critical_path", "timeline",
                          "json")]
    reads.append(("to_dict()", timed(result.to_dict)[0]))
    print("| what | CPU s (best of %d; all) |" % repeats)
    print("|---|---|")
    print("| `et-sim %s` | %.2f (%s) |" % (
        trace.rsplit("/", 1)[-1], min(tool),
        ", ".join("%.2f" % t for t in tool)))
    print("| `ettools.simulate`, a fresh Python's first call | %.2f (%s) |" % (
        min(module), ", ".join("%.2f" % t for t in module)))
    print("| `ettools.simulate`, called again in one Python | %.2f (%s) |" % (
        min(again), ", ".join("%.2f" % t for t in again)))
    for name, t in reads:
        print("| then `result.%s`, first read | %.2f |" % (name, t))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("\npeak RSS of this process: %.0f MB" % rss_mb)


if __name__ == "__main__":
    main()
