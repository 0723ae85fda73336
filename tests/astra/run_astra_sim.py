#!/usr/bin/env python3
"""Runs every multi-rank trace the project holds in ASTRA-sim 2.x, next to et-sim.

For each job: et-convert the recorded per-rank files (ET + profiler trace), write
ASTRA-sim's comm-group file from the ranks' own process-group tables, run ASTRA-sim's
analytical (congestion unaware) backend on the files and `et-sim --schedule astra --comm
astra` on the same files and configs, and print the slowest rank's `sys[N] finished`
cycles (1 cycle = 1 ns) next to et-sim's graph time. A job fails when ASTRA-sim leaves a
rank unfinished ("unreleased nodes", a hang past the time limit, a crash before every rank
finished) or et-sim's astra schedule refuses the job. The numbers are printed, not
bounded: both are models of the same job, neither is a measured truth (docs/astra-sim.md).

  ASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware \
    run_astra_sim.py BUILD_DIR REPO_DIR WORK_DIR [--shared TRACES_DIR] [--only NAME,...]

Without ASTRA_SIM (or with a path that is not an executable) it prints why and exits 77
(ctest's skip). ASTRA-sim is built outside this project (docs/astra-sim.md says how).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ASTRA_TIMEOUT_S = 600  # the largest job here finishes in seconds
SKIP = 77

# ASTRA-sim (518bd51) frees a collective implementation twice at exit when a rank runs
# the same collective type in two comm-file groups (docs/astra-sim.md, first table). Every
# rank has finished by then, so in such a job a crash at exit (SIGABRT from glibc's check,
# or SIGSEGV) counts when every rank printed its line. The crash can also come before
# ASTRA-sim's asynchronous logger has written those lines (it varies from run to run; the
# simulation itself is deterministic): such a run is tried again, up to TEARDOWN_TRIES times.
TEARDOWN_TRIES = 4


def crashed(status):
    """True for a run ended by a signal (negative from subprocess, 128+ from a shell)."""
    return status is not None and (status < 0 or status >= 128)


def rank_in_two_groups(groups_path):
    """True when the comm-group file puts some rank in two groups (the teardown bug)."""
    if not groups_path:
        return False
    seen = set()
    for members in json.load(open(groups_path)).values():
        if seen & set(members):
            return True
        seen |= set(members)
    return False


class Job:
    """One multi-rank job: recorded per-rank files, or one rank scaled by --world."""

    def __init__(self, name, et, ranks, kineto=None, world=None, where="data",
                 form="per_rank", layout=None, micro_batches=None):
        # form: "per_rank" (one recorded file per rank, `et` holds %d), "export" (one
        # Nsight Systems export, a graph per GPU), "et" (Chakra .et files already).
        # layout: et-sim's --layout for a one-rank trace (its product is `world`):
        # the job et-sim synthesizes (tp, pp, dp) and writes for ASTRA-sim.
        self.name, self.et, self.ranks = name, et, ranks
        self.kineto, self.world, self.where, self.form = kineto, world, where, form
        self.layout, self.micro_batches = layout, micro_batches

    def npus(self):
        return self.world or self.ranks


# Every multi-rank recording in tests/data (per-rank ET + profiler trace), then the
# one-rank-of-eight MI300X trace at its recorded world of 8 (--world 8: its only file),
# then jobs et-sim synthesizes from one rank (--layout).
JOBS = [
    Job("ddp_mlp", "pytorch-1.13-cpu/ddp_mlp_et_r%d.json.gz", 4,
        "pytorch-1.13-cpu/ddp_mlp_trace_r%d.json.gz"),
    Job("tp8", "tp8/tp8_et_r%d.json.gz", 8, "tp8/tp8_kineto_r%d.json.gz"),
    Job("pp2_2r", "pp/pp2_2r_et_r%d.json.gz", 2, "pp/pp2_2r_kineto_r%d.json.gz"),
    Job("tp2dp2", "tp-dp/tp2dp2_et_r%d.json.gz", 4, "tp-dp/tp2dp2_kineto_r%d.json.gz"),
    Job("tp4dp2", "tp-dp/tp4dp2_et_r%d.json.gz", 8, "tp-dp/tp4dp2_kineto_r%d.json.gz"),
    Job("torch2_tp2dp2", "torch2-cpu/tp2dp2_et_r%d.json.gz", 4,
        "torch2-cpu/tp2dp2_kineto_r%d.json.gz"),
    Job("torch2_ddp4", "torch2-cpu/ddp4_et_r%d.json.gz", 4,
        "torch2-cpu/ddp4_kineto_r%d.json.gz"),
    Job("ddp_gpt_2r", "recorded/ddp_gpt_2r_et_r%d.json.gz", 2,
        "recorded/ddp_gpt_2r_kineto_r%d.json.gz"),
    Job("ddp_gpt_4r", "recorded/ddp_gpt_4r_et_r%d.json.gz", 4,
        "recorded/ddp_gpt_4r_kineto_r%d.json.gz"),
    Job("tp_dp_4r", "recorded/tp_dp_4r_et_r%d.json.gz", 4,
        "recorded/tp_dp_4r_kineto_r%d.json.gz"),
    Job("wide_ddp2", "dp-sync/wide_ddp2_et_r%d.json.gz", 2),
    Job("mi300x_w8", "kineto-only/tracelens_mi300_resnet_act_checkpoint.json.gz", 1,
        world=8, where="shared"),
    # ../shared/traces: a 2 x H100 FSDP capture by Nsight Systems (a graph per GPU) and
    # the reference text converter's 2-NPU model-parallel MLP (Chakra files already).
    Job("nsys_2gpu", "nsys/nsysai_mfu_2gpu_before.sqlite.gz", 2, where="shared",
        form="export"),
    Job("chakra_mlp_mp", "chakra/mlp_mp.%d.et", 2, where="shared", form="et"),
    # A synthesized 1,024-rank job from the CPU corpus's one-rank GPT block (width 256):
    # Megatron tensor parallelism over 8, 4 pipeline stages of 1F1B over 4
    # micro-batches, 32 data-parallel replicas (docs/et-sim.md, --layout).
    Job("gpt_w256_tp8pp4dp32", "cpu-corpus/cpu_gpt_w256_et.json.gz", 1,
        "cpu-corpus/cpu_gpt_w256_kineto.json.gz", world=1024,
        layout="tp=8,pp=4,dp=32", micro_batches=4),
    # The smaller jobs that bisected its gap (docs/astra-sim.md): pipeline peers
    # 8 ranks apart on a ring of 32 (a message pays a latency per hop), data-
    # parallel groups of 8 contiguous ranks (the last member's message to the
    # first crosses 7 hops) whose gradient buckets 4 chunks do not divide (one
    # chunk more); then tensor-parallel groups of 8 in the stages.
    Job("gpt_w256_pp4dp8", "cpu-corpus/cpu_gpt_w256_et.json.gz", 1,
        "cpu-corpus/cpu_gpt_w256_kineto.json.gz", world=32,
        layout="pp=4,dp=8", micro_batches=4),
    Job("gpt_w256_tp8pp4", "cpu-corpus/cpu_gpt_w256_et.json.gz", 1,
        "cpu-corpus/cpu_gpt_w256_kineto.json.gz", world=32,
        layout="tp=8,pp=4", micro_batches=4),
]


def run(argv, timeout_s=ASTRA_TIMEOUT_S, cwd=None):
    """Runs argv at the lowest priority; returns (exit status, stdout + stderr)."""
    try:
        p = subprocess.run(["nice", "-n", "19"] + argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=timeout_s, cwd=cwd)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out


def ring_config(configs, npus, work):
    """ASTRA-sim's Ring_4npus network with npus_count set to `npus` (same link)."""
    text = open(os.path.join(configs, "examples__network__analytical__Ring_4npus.yml")).read()
    text, n = re.subn(r"npus_count:\s*\[\s*\d+\s*\]", f"npus_count: [ {npus} ]", text)
    assert n == 1, "Ring_4npus.yml has no npus_count line"
    path = os.path.join(work, f"Ring_{npus}npus.yml")
    with open(path, "w") as f:
        f.write(text)
    return path


def comm_groups(bin_dir, et_pattern, ranks, work):
    """{group name: global ranks} for every group other than "0" that a collective names.

    Read from each rank's own process-group table (`pg_ranks:<name>` in its metadata, in
    global ranks); a collective naming a group no rank's table gives is an error, since
    ASTRA-sim would then stop at the first lookup.
    """
    groups, used = {}, set()
    for rank in range(ranks):
        out = os.path.join(work, f"rank{rank}.json")
        status, text = run([os.path.join(bin_dir, "converter", "et-convert"), "--to-json",
                            et_pattern % rank, out])
        if status != 0:
            raise RuntimeError(f"et-convert --to-json {et_pattern % rank}: {text.strip()}")
        doc = json.load(open(out))
        os.remove(out)
        for attr in doc["metadata"].get("attr", []):
            if attr["name"].startswith("pg_ranks:"):
                members = [int(v) for v in attr.get("int64_list", {}).get("values", [])]
                name = attr["name"][len("pg_ranks:"):]
                if members:
                    groups.setdefault(name, {})[rank] = members
        for node in doc["nodes"]:
            if not node.get("type", "").startswith("COMM_COLL"):
                continue
            for attr in node.get("attr", []):
                if attr["name"] == "pg_name" and attr.get("string_val", "0") != "0":
                    used.add(attr["string_val"])
    missing = sorted(used - groups.keys())
    if missing:
        raise RuntimeError(f"collectives name groups {missing} that no rank's table gives")
    named = [name for name in used if not name.isdigit()]
    if named:  # ASTRA-sim reads a group's name with stoi
        raise RuntimeError(f"collectives name groups {sorted(named)}: ASTRA-sim's "
                           f"comm-group file takes integers")
    table = {}
    for name in sorted(used, key=int):
        lists = {tuple(members) for members in groups[name].values()}
        if len(lists) != 1:  # ASTRA-sim's file gives a name one set of ranks
            raise RuntimeError(f"group {name}: the ranks' tables give {sorted(lists)}")
        table[name] = list(lists.pop())
    return table


def convert(bin_dir, data, job, work):
    """Converts (or copies) the job's files into `work`; returns their %d pattern."""
    if job.form == "et":
        for rank in range(job.ranks):
            shutil.copy(os.path.join(data, job.et % rank),
                        os.path.join(work, f"{job.name}.{rank}.et"))
        return os.path.join(work, job.name + ".%d.et")
    et_convert = os.path.join(bin_dir, "converter", "et-convert")
    argv = [et_convert, os.path.join(data, job.et), os.path.join(work, job.name + ".%d.et"),
            "--quiet"]
    if job.form == "export":
        pass  # the export holds every GPU
    elif job.ranks > 1:
        argv += ["--ranks", str(job.ranks), "--jobs", "1"]
    else:
        argv[2] = os.path.join(work, job.name + ".et")
    if job.kineto:
        argv += ["--kineto", os.path.join(data, job.kineto)]
    status, text = run(argv)
    if status != 0:
        raise RuntimeError(f"et-convert: {text.strip()}")
    return os.path.join(work, job.name + ".%d.et")


def et_sim(bin_dir, job, pattern, net, system, work):
    """et-sim --schedule astra --comm astra on the job: (graph time in ns, ASTRA-sim
    workload prefix, comm-group file). Only a job scaled from one rank (--world or
    --layout) has the last two: et-sim writes it for ASTRA-sim (--write-ranks); else
    they are None.
    """
    argv = [os.path.join(bin_dir, "simulator", "et-sim"), "--schedule", "astra", "--comm",
            "astra", "--topology", net, "--astra-system", system, "--json"]
    prefix, groups = None, None
    if job.world:
        out = os.path.join(work, "job")
        scale = ["--world", str(job.world)]
        if job.layout:
            scale = ["--layout", job.layout, "--micro-batches", str(job.micro_batches)]
        argv = argv[:1] + [os.path.join(work, job.name + ".et")] + scale + [
            "--write-ranks", out] + argv[1:]
        prefix = os.path.join(out, job.name)
    else:
        argv = argv[:1] + [pattern, "--ranks", str(job.ranks)] + argv[1:]
    p = subprocess.run(["nice", "-n", "19"] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=ASTRA_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"et-sim --schedule astra: {p.stderr.strip()}")
    if job.world and os.path.exists(prefix + ".comm_groups.json"):
        groups = prefix + ".comm_groups.json"
    return json.loads(p.stdout)["step_ns"], prefix, groups


def et_sim_files(bin_dir, prefix, npus, net, system):
    """et-sim --schedule astra --comm astra on the written per-rank files: each rank
    its own program, as ASTRA-sim runs them (the one-rank run above simulates a
    class of symmetric ranks per stage)."""
    argv = [os.path.join(bin_dir, "simulator", "et-sim"), prefix + ".%d.et", "--ranks",
            str(npus), "--schedule", "astra", "--comm", "astra", "--topology", net,
            "--astra-system", system, "--json"]
    p = subprocess.run(["nice", "-n", "19"] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=ASTRA_TIMEOUT_S)
    if p.returncode != 0:
        raise RuntimeError(f"et-sim on the written files: {p.stderr.strip()}")
    return json.loads(p.stdout)["step_ns"]


def astra_sim(binary, prefix, npus, net, system, memory, groups, log):
    """Runs ASTRA-sim (its output kept in `log`); returns (slowest rank's cycles, a note
    on how it ended) or raises why not."""
    argv = [binary, f"--workload-configuration={prefix}",
            f"--system-configuration={system}",
            f"--remote-memory-configuration={memory}",
            f"--network-configuration={net}"]
    if groups:
        argv.append(f"--comm-group-configuration={groups}")
    teardown_bug = rank_in_two_groups(groups)
    for tries in range(1, (TEARDOWN_TRIES if teardown_bug else 1) + 1):
        status, text = run(argv, cwd=os.path.dirname(log))  # it writes log/ in its folder
        with open(log, "w") as f:
            f.write(text)
        finished = {int(r): int(c) for r, c in
                    re.findall(r"sys\[(\d+)\] finished, (\d+) cycles", text)}
        stalled = re.findall(r"sys\.id=(\d+) has unreleased nodes", text)
        if not crashed(status) or stalled or len(finished) == npus:
            break
    if status is None:
        raise RuntimeError(f"ASTRA-sim ran past {ASTRA_TIMEOUT_S} s (a hang?); "
                           f"{len(finished)} of {npus} ranks finished")
    if stalled:
        raise RuntimeError(f"ASTRA-sim: ranks {sorted(set(stalled))} have unreleased nodes")
    if len(finished) != npus:
        raise RuntimeError(f"ASTRA-sim exit {status}: {len(finished)} of {npus} ranks "
                           f"printed 'finished'; last lines: {text.strip()[-400:]}")
    if status != 0 and not (teardown_bug and crashed(status)):
        raise RuntimeError(f"ASTRA-sim exit {status} after every rank finished")
    note = "" if status == 0 else f" (exit {status} after every rank finished)"
    if tries > 1:
        note += f" (run {tries} times: the crash at exit came before the log)"
    return max(finished.values()), note


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("repo_dir")
    parser.add_argument("work_dir")
    parser.add_argument("--shared", default=None,
                        help="../shared/traces (for the MI300X job; skipped without it)")
    parser.add_argument("--only", default="", help="comma-separated job names")
    args = parser.parse_args()
    for name in ("build_dir", "repo_dir", "work_dir", "shared"):  # ASTRA-sim runs elsewhere
        if getattr(args, name):
            setattr(args, name, os.path.abspath(getattr(args, name)))

    binary = os.environ.get("ASTRA_SIM", "")
    if not binary or not os.access(binary, os.X_OK):
        print("skipped: set ASTRA_SIM to ASTRA-sim's AstraSim_Analytical_Congestion_Unaware "
              "(built outside this project: docs/astra-sim.md, 'How it was built')"
              + (f"; '{binary}' is not an executable" if binary else ""))
        return SKIP

    data = os.path.join(args.repo_dir, "tests", "data")
    configs = os.path.join(data, "astra-sim", "configs")
    system = os.path.join(configs, "examples__system__native_collectives__Ring_4chunks.json")
    memory = os.path.join(configs,
                          "examples__remote_memory__analytical__no_memory_expansion.json")
    only = set(filter(None, args.only.split(",")))
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)

    rows, failures = [], []
    for job in JOBS:
        if only and job.name not in only:
            continue
        root = data if job.where == "data" else args.shared
        if not root or not os.path.exists(os.path.join(root, job.et.replace("%d", "0"))):
            print(f"{job.name}: skipped, its trace is not here ({job.where})")
            continue
        work = os.path.join(args.work_dir, job.name)
        os.makedirs(work)
        try:
            net = ring_config(configs, job.npus(), work)
            pattern = convert(args.build_dir, root, job, work)
            sim_ns, prefix, groups = et_sim(args.build_dir, job, pattern, net, system, work)
            print(f"{job.name}: et-sim --schedule astra {sim_ns:,} ns; running ASTRA-sim",
                  flush=True)
            if not job.world:
                prefix = os.path.join(work, job.name)
                table = comm_groups(args.build_dir, pattern, job.ranks, work)
                if table:
                    groups = os.path.join(work, job.name + ".comm_groups.json")
                    with open(groups, "w") as f:
                        json.dump(table, f)
            cycles, note = astra_sim(binary, prefix, job.npus(), net, system, memory,
                                       groups, os.path.join(work, "astra-sim.log"))
            if job.world:
                files_ns = et_sim_files(args.build_dir, prefix, job.npus(), net, system)
                note += (f"; et-sim on the written files {files_ns:,} ns "
                         f"({(files_ns - cycles) / cycles * 100:+.2f}%)")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            failures.append(f"{job.name}: {e}")
            print(f"{job.name}: FAILED: {e}")
            continue
        diff = (sim_ns - cycles) / cycles * 100 if cycles else float("nan")
        rows.append((job.name, job.npus(), cycles, sim_ns, diff, note))
        print(f"{job.name}: {job.npus()} ranks, ASTRA-sim {cycles:,} ns, et-sim "
              f"{sim_ns:,} ns, et-sim vs ASTRA-sim {diff:+.2f}%{note}", flush=True)

    print("\n| job | ranks | ASTRA-sim slowest rank (ns) | et-sim --schedule astra (ns) "
          "| et-sim vs ASTRA-sim |\n|---|---|---|---|---|")
    for name, npus, cycles, sim_ns, diff, note in rows:
        print(f"| {name} | {npus} | {cycles:,}{note} | {sim_ns:,} | {diff:+.2f}% |")
    if failures:
        print(f"\n{len(failures)} job(s) did not run to the end:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
