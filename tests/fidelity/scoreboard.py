#!/usr/bin/env python3
"""The step-time scoreboard: every trace with a truth, converted, simulated by
et-sim in both host-time modes (and on an H200 where the truth exists), and
replayed by et-replay's CPU backend; one table of errors (markdown).

  python3 tests/fidelity/scoreboard.py [BUILD_DIR] [--no-replay]

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
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "traces")
H100_MODELS = ["mlp1024", "mlp4096", "gpt1024", "resnet50", "gpt2"]


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def step_of(report):
    s = report["step"]
    return s["predicted_us"] / 1e3, s["measured_us"], s["error_pct"]


def fmt(pred_ms, measured_us, err):
    if measured_us is None:
        return "%.2f (no truth)" % pred_ms
    return "%.2f vs %.2f (%+.1f%%)" % (pred_ms, measured_us / 1e3, err)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    replay = "--no-replay" not in sys.argv
    convert = os.path.join(build, "converter", "et-convert")
    sim = os.path.join(build, "simulator", "et-sim")
    rep = os.path.join(build, "replay", "et-replay")
    tmp = tempfile.mkdtemp(prefix="scoreboard_")
    rows = []
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
        row = [model]
        row.append(fmt(*step_of(run_json([sim, et, "--json"]))))
        row.append(fmt(*step_of(run_json([sim, et, "--json", "--device", "H200",
                                           "--measured-step-ms",
                                           str(meta["unprofiled_step_ms_h200"])]))))
        row.append(fmt(*step_of(run_json([sim, et, "--json", "--host-time",
                                           "recorded"]))))
        if replay:
            out = os.path.join(tmp, model + ".replay.json")
            subprocess.run([rep, et, "--iters", "3", "--json", out], check=True,
                           capture_output=True)
            row.append(fmt(*step_of(json.load(open(out)))))
        rows.append(row)
    # The demo: 4 CPU ranks over gloo, profiled steps only.
    data = os.path.join(ROOT, "examples", "data")
    pattern = os.path.join(tmp, "ddp_mlp.%d.et")
    subprocess.run([convert, os.path.join(data, "ddp_mlp_et_r%d.json.gz"), pattern,
                    "--ranks", "4", "--kineto",
                    os.path.join(data, "ddp_mlp_trace_r%d.json.gz"), "--quiet"],
                   check=True)
    demo = ["ddp_mlp (4 CPU ranks)",
            fmt(*step_of(run_json([sim, pattern, "--ranks", "4", "--json"]))),
            "-",
            fmt(*step_of(run_json([sim, pattern, "--ranks", "4", "--json",
                                   "--host-time", "recorded"])))]
    if replay:
        demo.append("-")
    rows.append(demo)
    head = ["trace", "et-sim (unprofiled) ms", "et-sim --device H200 ms",
            "et-sim --host-time recorded ms"]
    if replay:
        head.append("et-replay --device cpu (unprofiled) ms")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
