#!/usr/bin/env python3
"""Runs every tool over every file of the hostile-input corpus (tests/data/bad/inputs).

Each run must end with exit status 1 (2 for a usage error) and one stderr line `<tool>: error: ...` that names the
input file and equals the line recorded in tests/data/bad/expected.tsv; and must leave no
output file and no `*.tmp.<pid>` behind. A signal (crash, abort, sanitizer), a run past the
time limit (hang), an exit status other than 1, extra stderr lines, a message without the
file name, or a left-over file fails the test. A few flag cases (out-of-range --world and
friends) are run the same way, against a good trace; their messages name the flag instead.

  run_bad_inputs.py BUILD_DIR REPO_DIR WORK_DIR [--record]

--record rewrites expected.tsv from the current messages (review the diff before
committing). Prints the count of runs by outcome.
"""

import collections
import concurrent.futures
import os
import shutil
import subprocess
import sys

TIMEOUT_S = 30  # the slowest honest run (et-replay's MPI start) takes ~2 s

# Which tools read a file, by the file name's prefix: (run id, argv after the tool).
RUNS = {
    "et_": [("et-convert", ["et-convert", "{in}", "{out}/x.et"])],
    "kineto_": [("et-convert-kineto",
                 ["et-convert", "{good_json}", "{out}/x.et", "--kineto", "{in}"])],
    "graph_": [
        ("et-sim", ["et-sim", "{in}"]),
        ("et-viz-dot", ["et-viz", "{in}", "-o", "{out}/g.dot"]),
        ("et-viz-report", ["et-viz", "{in}", "--report"]),
        ("et-viz-timeline", ["et-viz", "{in}", "--timeline", "{out}/t.json"]),
        ("et-replay", ["et-replay", "{in}", "--device", "cpu", "--warmup", "0",
                       "--iters", "1", "--json", "{out}/r.json"]),
    ],
    "cal_": [("et-sim", ["et-sim", "{good_et}", "--compute", "calibrated",
                         "--calibration", "{in}"])],
    "dev_": [("et-sim", ["et-sim", "{good_et}", "--device", "x", "--device-file", "{in}"])],
    "topo_": [("et-sim", ["et-sim", "{good_et}", "--topology", "{in}", "--world", "4"])],
    "sys_": [("et-sim", ["et-sim", "{good_et}", "--comm", "astra", "--topology",
                         "{ring}", "--astra-system", "{in}", "--world", "4"])],
    "groups_": [("et-sim", ["et-sim", "{good_et}", "--groups", "{in}"])],
}

# Hostile flag values, against a good trace: (case name, argv).
FLAG_CASES = [
    ("sim-world-huge", ["et-sim", "{good_et}", "--world", "4611686018427387904"]),
    ("sim-world-1e9", ["et-sim", "{good_et}", "--world", "1000000000"]),
    ("sim-world-0", ["et-sim", "{good_et}", "--world", "0"]),
    ("sim-world-negative", ["et-sim", "{good_et}", "--world", "-1"]),
    ("sim-ranks-1e9", ["et-sim", "{out}/r.%d.et", "--ranks", "1000000000"]),
    ("viz-rank-range", ["et-viz", "{good_et}", "--rank", "0-2000000000", "--report"]),
    ("viz-name-long", ["et-viz", "{long_name_et}", "--name", ".*x", "--report"]),
    ("replay-world-0", ["et-replay", "{good_et}", "--world", "0"]),
    ("convert-ranks-1e9", ["et-convert", "{out}/in.%d.json", "{out}/o.%d.et",
                           "--ranks", "1000000000"]),
    # The timeline fails after -o is written (the trace has no start times):
    # -o must be removed. (A missing folder is refused before the work.)
    ("viz-timeline-fails", ["et-viz", "{good_et}", "-o", "{out}/g.dot",
                            "--timeline", "{out}/t.json"]),
]

TOOL_DIRS = {"et-convert": "converter", "et-sim": "simulator", "et-viz": "visualizer",
             "et-replay": "replay"}


def expand(argv, values):
    return [a.format(**values) if "{" in a else a for a in argv]


def run_one(build, key, argv, values, work, needs_file):
    out_dir = os.path.join(work, key.replace("|", "__"))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    values = dict(values, out=out_dir)
    args = expand(argv, values)
    args[0] = os.path.join(build, TOOL_DIRS[argv[0]], argv[0])
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    try:
        proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=TIMEOUT_S, env=env, cwd=out_dir)
    except subprocess.TimeoutExpired:
        return key, "hang", f"no exit within {TIMEOUT_S} s", ""
    lines = [l for l in proc.stderr.decode(errors="replace").splitlines() if l.strip()]
    message = lines[-1] if lines else ""
    left = sorted(os.listdir(out_dir))
    shutil.rmtree(out_dir, ignore_errors=True)
    if proc.returncode < 0:
        return key, "signal", f"killed by signal {-proc.returncode}", message
    if proc.returncode == 0:
        return key, "accepted", "exit status 0: the input was accepted", message
    problems = []
    if proc.returncode not in (1, 2):  # 2: et-replay's usage errors
        problems.append(f"exit status {proc.returncode}, not 1 or 2")
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines, not 1")
    if not message.startswith(argv[0] + ": error: "):
        problems.append("message does not start with '<tool>: error: '")
    if needs_file and values["in"] not in message:
        problems.append("message does not name the input file")
    # Inputs the tool did not create (a pattern input's rank files) are not output.
    left = [f for f in left if not f.startswith("in.")]
    if left:
        problems.append("left behind: " + ", ".join(left))
    if problems:
        return key, "bad-error", "; ".join(problems), message
    return key, "error", "", message


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    build, repo, work = (os.path.abspath(a) for a in sys.argv[1:4])
    record = "--record" in sys.argv[4:]
    corpus = os.path.join(repo, "tests", "data", "bad", "inputs")
    expected_path = os.path.join(repo, "tests", "data", "bad", "expected.tsv")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(repo, "tests", "data")
    long_name_et = os.path.join(work, "long_name.et")
    values = {
        "good_et": os.path.join(data, "chakra", "mlp_mp.0.et"),
        "good_json": os.path.join(data, "hta", "simple_add_et.json.gz"),
        "ring": os.path.join(data, "astra-sim", "configs",
                             "examples__network__analytical__Ring_4npus.yml"),
        "long_name_et": long_name_et,
    }
    # A graph with a 30 KB node name (std::regex once overflowed its stack on it).
    long_json = os.path.join(work, "long_name.json")
    with open(long_json, "w") as f:
        f.write('{"schema": "1.0.1", "nodes": [{"name": "' + "a" * 30000 +
                '", "id": 1, "parent": 0}]}')
    subprocess.run([os.path.join(build, "converter", "et-convert"), long_json, long_name_et,
                    "--quiet"], check=True)

    failures = []
    # The committed corpus must be what make_corpus.py makes (it is deterministic).
    regen = os.path.join(work, "regenerated")
    subprocess.run([sys.executable, os.path.join(repo, "tests", "data", "bad", "make_corpus.py"),
                    data, regen], check=True)
    for name in sorted(set(os.listdir(regen)) | set(os.listdir(corpus))):
        a, b = os.path.join(regen, name), os.path.join(corpus, name)
        if not (os.path.exists(a) and os.path.exists(b)) or open(a, "rb").read() != open(
                b, "rb").read():
            failures.append(f"{name}: differs from make_corpus.py's output (run it)")
    shutil.rmtree(regen)

    jobs = []
    for name in sorted(os.listdir(corpus)):
        prefix = next((p for p in RUNS if name.startswith(p)), None)
        if prefix is None:
            sys.exit(f"{name}: no tool reads this prefix; see make_corpus.py")
        for run_id, argv in RUNS[prefix]:
            path = os.path.join(corpus, name)
            jobs.append((f"{name}|{run_id}", argv, dict(values, **{"in": path}), True))
    for case, argv in FLAG_CASES:
        jobs.append((f"flag|{case}", argv, dict(values, **{"in": ""}), False))

    expected = {}
    if os.path.exists(expected_path):
        with open(expected_path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                key, _, message = line.rstrip("\n").partition("\t")
                expected[key] = message

    # et-replay is built only where MPI is found.
    jobs = [j for j in jobs
            if os.path.exists(os.path.join(build, TOOL_DIRS[j[1][0]], j[1][0]))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: run_one(build, j[0], j[1], j[2], work, j[3]),
                                jobs))
    counts = collections.Counter()
    recorded = []
    for (key, argv, vals, _), (_, outcome, problem, message) in zip(jobs, results):
        generic = message.replace(vals["in"], "{in}") if vals["in"] else message
        generic = generic.replace(work, "{work}")
        counts[outcome] += 1
        recorded.append(f"{key}\t{generic}")
        if outcome != "error":
            failures.append(f"{key}: {outcome}: {problem}: {message[:300]}")
        elif not record and expected.get(key) != generic:
            failures.append(f"{key}: message changed:\n  expected: {expected.get(key)}\n"
                            f"  got:      {generic[:300]}")
    if record:
        with open(expected_path, "w") as f:
            f.write("# run (input|tool) <TAB> the exact error line; {in} is the input path.\n"
                    "# Written by tests/bad_inputs/run_bad_inputs.py --record; review diffs.\n")
            f.write("\n".join(recorded) + "\n")
    leftovers = [f for f in os.listdir(corpus) if ".tmp." in f]
    if leftovers:
        failures.append("temporary files left in the corpus: " + ", ".join(leftovers))
    print(f"{len(jobs)} runs over {len(os.listdir(corpus))} files and {len(FLAG_CASES)} "
          "flag cases: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
