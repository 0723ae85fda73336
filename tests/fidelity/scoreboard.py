#!/usr/bin/env python3
"""The step-time scoreboard: every trace with a truth, converted, simulated by
et-sim in both host-time modes (and on an H200 where the truth exists), and
replayed by et-replay's CPU backend; one table of errors (markdown).

  python3 tests/fidelity/scoreboard.py [BUILD_DIR] [--no-replay] [--check-bias]
      [--replay-device cuda] [--keep DIR]

--replay-device cuda (on a GPU machine) replays on the GPU instead of the CPU backend,
in both host-time modes, each against its own truth; --keep DIR keeps every replay's
JSON report (per-op times) there. ET_SHARED_TRACES names the traces folder where
../shared is not beside the checkout.

Every error is signed (predicted - true, % of true); the last row is the mean
signed error of each column. --check-bias (ctest `host_bias`): exits 1 when a
default prediction (H100, or --device H200) misses its truth by more than 5%
or a column's mean signed error is beyond 2% (issue 21's bounds); exits 77
(ctest: skipped) with the reason when ../shared is absent.

Truths: ../shared/traces/h100/*_meta.json (the step without a profiler on the
H100 and the H200) and the profiled steps the Kineto traces carry; the demo's
4 DDP ranks (examples/data) have only their `## step_N ##` profiled steps.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("ET_SHARED_TRACES") or os.path.join(
    os.path.dirname(ROOT), "shared", "traces")
H100_MODELS = ["mlp1024", "mlp4096", "gpt1024", "resnet50", "gpt2"]


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def step_of(report):
    s = report["step"]
    return s["predicted_us"] / 1e3, s["measured_us"], s["error_pct"]


def fmt(pred_ms, measured_us, err, errors=None):
    if errors is not None and err is not None:
        errors.append(err)
    if measured_us is None:
        return "%.2f (no truth)" % pred_ms
    return "%.2f vs %.2f (%+.1f%%)" % (pred_ms, measured_us / 1e3, err)


def flag_value(name, default):
    """The value after `name` on the command line (removed from sys.argv), or default."""
    if name not in sys.argv:
        return default
    i = sys.argv.index(name)
    value = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return value


def replay_step(rep, et, device, keep, name, *flags):
    """One et-replay run's step (predicted ms, truth us, error %); on a GPU, 2 warm-up
    and 10 timed iterations."""
    out = os.path.join(keep, name + ".replay.json")
    iters = ["--warmup", "2", "--iters", "10"] if device == "cuda" else ["--iters", "3"]
    run = subprocess.run([rep, et, "--device", device, "--json", out] + iters +
                         list(flags), capture_output=True, text=True)
    if run.returncode != 0:  # said in the table and on stderr; the other cells go on
        print("scoreboard.py: %s: et-replay exited %d: %s" %
              (name, run.returncode, run.stderr.strip()), file=sys.stderr)
        return None
    return step_of(json.load(open(out)))


def fmt_replay(step, errors):
    return "failed (stderr)" if step is None else fmt(*step, errors)


def main():
    device = flag_value("--replay-device", "cpu")
    keep = flag_value("--keep", None)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    replay = "--no-replay" not in sys.argv and "--check-bias" not in sys.argv
    check_bias = "--check-bias" in sys.argv
    convert = os.path.join(build, "converter", "et-convert")
    sim = os.path.join(build, "simulator", "et-sim")
    rep = os.path.join(build, "replay", "et-replay")
    tmp = tempfile.mkdtemp(prefix="scoreboard_")
    keep = keep or tmp
    os.makedirs(keep, exist_ok=True)
    rows = []
    # Signed errors per column of the H100 models (unprofiled columns only
    # enter the bias check; recorded mode replays the profiler).
    cols = {"default": [], "light": [], "h200": [], "h200 light": [],
            "recorded": [], "replay": [], "replay recorded": []}
    for model in H100_MODELS:
        d = os.path.join(SHARED, "h100")
        meta_path = os.path.join(d, model + "_meta.json")
        if not os.path.exists(meta_path):
            # Said, not silent: a missing ../shared gave an empty scoreboard.
            print("scoreboard.py: skipping %s: %s not found (the H100 traces "
                  "live in ../shared/traces/h100 beside the checkout)"
                  % (model, meta_path), file=sys.stderr)
            continue
        meta = json.load(open(meta_path))
        et = os.path.join(tmp, model + ".et")
        subprocess.run([convert, os.path.join(d, model + "_et.json.gz"), et,
                        "--kineto", os.path.join(d, model + "_kineto.json.gz"),
                        "--measured-step-ms", str(meta["unprofiled_step_ms"]),
                        "--quiet"], check=True)
        light = ["--host-profile", os.path.join(d, model + "_kineto_light.json.gz")]
        h200 = ["--device", "H200", "--measured-step-ms",
                str(meta["unprofiled_step_ms_h200"])]
        row = [model]
        row.append(fmt(*step_of(run_json([sim, et, "--json"])), cols["default"]))
        row.append(fmt(*step_of(run_json([sim, et, "--json"] + light)), cols["light"]))
        row.append(fmt(*step_of(run_json([sim, et, "--json"] + h200)), cols["h200"]))
        row.append(fmt(*step_of(run_json([sim, et, "--json"] + h200 + light)),
                       cols["h200 light"]))
        row.append(fmt(*step_of(run_json([sim, et, "--json", "--host-time",
                                           "recorded"])), cols["recorded"]))
        if replay:
            row.append(fmt_replay(replay_step(rep, et, device, keep, model),
                                  cols["replay"]))
        if replay and device == "cuda":
            row.append(fmt_replay(replay_step(rep, et, device, keep, model + ".recorded",
                                              "--host-time", "recorded"),
                                  cols["replay recorded"]))
        rows.append(row)
    if check_bias:
        sys.exit(check(cols))
    # The demo: 4 CPU ranks over gloo, profiled steps only.
    data = os.path.join(ROOT, "examples", "data")
    pattern = os.path.join(tmp, "ddp_mlp.%d.et")
    subprocess.run([convert, os.path.join(data, "ddp_mlp_et_r%d.json.gz"), pattern,
                    "--ranks", "4", "--kineto",
                    os.path.join(data, "ddp_mlp_trace_r%d.json.gz"), "--quiet"],
                   check=True)
    demo = ["ddp_mlp (4 CPU ranks)",
            fmt(*step_of(run_json([sim, pattern, "--ranks", "4", "--json"]))),
            "-", "-", "-",
            fmt(*step_of(run_json([sim, pattern, "--ranks", "4", "--json",
                                   "--host-time", "recorded"])))]
    if replay:
        demo += ["-"] * (2 if device == "cuda" else 1)
    rows.append(demo)
    head = ["trace", "et-sim (unprofiled) ms", "et-sim --host-profile ms",
            "et-sim --device H200 ms", "et-sim --device H200 --host-profile ms",
            "et-sim --host-time recorded ms"]
    if replay:
        head.append("et-replay --device %s (unprofiled) ms" % device)
    if replay and device == "cuda":
        head.append("et-replay --device cuda --host-time recorded ms")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    names = ["default", "light", "h200", "h200 light", "recorded"] + (
        ["replay"] if replay else []) + (
        ["replay recorded"] if replay and device == "cuda" else [])
    print("| mean signed error (H100 models) | " + " | ".join(
        "%+.1f%%" % (sum(cols[c]) / len(cols[c])) if cols[c] else "-"
        for c in names) + " |")


def check(cols):
    """Issue 21's bounds on the default predictions (H100, and --device H200):
    1 when an error is beyond 5% or a column's mean signed error beyond 2%;
    77 (skipped) when there is nothing to check. The --host-profile columns
    are printed, not judged: their known positive bias (the light profiler's
    cost per op on CUDA is not measured) is in docs/step-model.md."""
    checked, failed = 0, False
    for name in ["default", "h200", "light", "h200 light"]:
        errs = cols[name]
        if not errs:
            continue
        mean = sum(errs) / len(errs)
        judged = name in ("default", "h200")
        if judged:
            checked += 1
            worst = max(abs(e) for e in errs)
            verdict = "ok"
            if worst > 5 or abs(mean) > 2:
                verdict = "FAIL (worst %.1f%% > 5%% or mean beyond 2%%)" % worst
            failed |= verdict != "ok"
        else:
            verdict = "not judged (--host-profile)"
        print("%-11s errors %s: mean %+.2f%%, %s" % (
            name, " ".join("%+.1f%%" % e for e in errs), mean, verdict))
    if not checked:
        print("scoreboard.py --check-bias: skipped: no trace with a truth "
              "(../shared/traces/h100 is absent)")
        return 77
    return 1 if failed else 0


if __name__ == "__main__":
    main()
