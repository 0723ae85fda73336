#!/usr/bin/env python3
"""Every number on et-sim's HTML page is the one its text report prints.

Usage: html_report_numbers_test.py BUILD_DIR SOURCE_DIR

Runs et-sim once with --html and --top 100000 (so the text prints every row)
on the demo (4 ranks, a truth, host memory), on an H100 recording at
--layout dp=8 (GPU kernels, synthesized collectives, GPU memory) and on the
H100 MLP at width 1024 --compare 4096 (tests/data/h100), parses both
outputs, and compares section by section: the step, its truth and error, the
bound, each rank's steps and bounds, the per-step parts, the per-rank totals,
the op table (recorded beside predicted), the GPU kernel table and its
tensor-core summary, the collective table, the critical path and its causes,
the memory rows, the notes, and the Compare tab (step, bounds, parts, op
moves, the largest checked against the two runs' own --json); and --html or
--compare misused is refused (exit 2; a missing
output folder exit 1, before the run). No browser needed. Exits 77 when ../shared is absent
(the demo alone is then checked).
"""

import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile


class Page(html.parser.HTMLParser):
    """Tables by id (rows of cell texts) and the text of elements by id."""

    def __init__(self):
        super().__init__()
        self.tables, self.texts, self.notes = {}, {}, []
        self._open = []  # (tag, id) of the open elements with an id
        self._table = None
        self._row = None
        self._cell = None
        self._in_notes = False
        self._li = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id"):
            self._table = self.tables.setdefault(attrs["id"], [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "ul" and attrs.get("id") == "notes":
            self._in_notes = True
        elif tag == "li" and self._in_notes:
            self._li = ""
        if tag not in ("meta", "br", "hr", "img", "input", "link"):
            eid = attrs.get("id")
            if attrs.get("class") == "fig":  # a recommendation's figure
                eid = "fig#%d" % len(self.texts)
            self._open.append([tag, eid, ""])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "li" and self._li is not None:
            self.notes.append(self._li)
            self._li = None
        elif tag == "ul":
            self._in_notes = False
        while self._open:
            open_tag, eid, text = self._open.pop()
            if eid:
                self.texts[eid] = text
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._li is not None:
            self._li += data
        for element in self._open:
            if element[1]:
                element[2] += data


def numbers(text):
    return re.findall(r"[-+]?\d+(?:\.\d+)?%?", text)


def section(text, start, stop=r"^\s*$"):
    """The lines after the first line matching `start`, up to `stop`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(start, line):
            out = []
            for rest in lines[i + 1:]:
                if re.search(stop, rest):
                    break
                out.append(rest)
            return out
    return []


def body_rows(page, table_id):
    rows = page.tables.get(table_id, [])
    return rows[1:]  # the header row first


def check(case, text, page):
    checked = 0

    def same(what, got, want):
        nonlocal checked
        assert got == want, "%s: %s: page %r, text %r" % (case, what, got,
                                                          want)
        checked += 1

    predicted = re.search(r"predicted ([\d.]+) ms per step", text).group(1)
    same("predicted step", numbers(page.texts["predicted"])[0], predicted)
    measured = re.search(r"vs measured ([\d.]+) ms \(([^;)]+).*?\): error "
                         r"([-+][\d.]+%)", text)
    if measured:
        same("measured step", numbers(page.texts["measured"])[0],
             measured.group(1))
        same("error", numbers(page.texts["error"])[0], measured.group(3))
    else:
        assert "no measured step" in text
        same("no truth", "none" in page.texts["measured"], True)
    bound = re.search(r"bound \(slowest rank, its steps together\): (.*)",
                      text)
    same("bound", page.texts["bound"].split("together): ", 1)[1],
         bound.group(1))
    # Each rank's steps and each step's bound.
    ranks = re.findall(r"^  (ranks? \S+(?: \(\d+\))?)\s+steps ([\d. ]+) ms"
                       r"(?:; measured ([\d.]+) ms \([^)]*\), error "
                       r"([-+][\d.]+%))?", text, re.M)
    same("rank step rows", len(body_rows(page, "rank-steps")), len(ranks))
    for row, (label, steps, truth, error) in zip(body_rows(page, "rank-steps"),
                                                 ranks):
        same("rank steps", row[:2], [label, steps.strip()])
        same("rank truth", row[2:], [truth or "-", error or "-"])
    bounds = re.findall(r"^    step (\d+): (.*)$", text, re.M)
    same("step bounds", [r[1:] for r in body_rows(page, "step-bounds")],
         [list(b) for b in bounds])
    # The per-step parts.
    parts = section(text, r"^step\s+step_ms\s+kernel_ms")
    same("breakdown", [numbers(" ".join(r)) for r in
                       body_rows(page, "breakdown")],
         [numbers(line) for line in parts])
    # Per rank over the graph.
    totals = section(text, r"^ranks\s+graph_ms")
    same("per rank", [numbers(" ".join(r[1:])) for r in
                      body_rows(page, "ranks")],
         [numbers(line)[-5:] for line in totals])
    # Ops: the text truncates names to 30 characters.
    ops = section(text, r"^op\s+calls\s+total_ms")
    page_ops = body_rows(page, "ops")
    same("op rows", len(page_ops), len(ops))
    for row, line in zip(page_ops, ops):
        same("op name", line[:30].rstrip(), row[0][:30].rstrip())
        same("op numbers", numbers(" ".join(row[1:])), numbers(line[30:]))
    # GPU kernels: the text cuts names to 50 characters; the tensor-core
    # summary line is the text's.
    kernels = section(text, r"^kernel\s+calls\s+total_ms")
    page_kernels = body_rows(page, "kernels")
    same("kernel rows", len(page_kernels), len(kernels))
    for row, line in zip(page_kernels, kernels):
        same("kernel name", line[:50].rstrip(), row[0][:50].rstrip())
        same("kernel numbers", numbers(" ".join(row[1:5] + row[6:])),
             numbers(line[50:]))
        same("kernel tensor cores", row[5], line[50:].split()[4])
    if kernels:
        summary = re.search(r"\((tensor cores: .*? kernel names);", text)
        same("tensor-core summary", page.texts["tensor-cores"],
             summary.group(1))
    # Collectives.
    colls = section(text, r"^collectives\s+group\s+ranks")
    colls = [c for c in colls if not c.startswith("*")]
    page_colls = body_rows(page, "collectives")
    same("collective rows", len(page_colls), len(colls))
    for row, line in zip(page_colls, colls):
        # Type, group (it may hold a space: "scaleout:dp (dp)"), 7 numbers.
        fields = line.split()
        same("collective type and group", row[:2],
             [fields[0], " ".join(fields[1:-7])])
        same("collective numbers", numbers(" ".join(row[2:])),
             numbers(" ".join(fields[-7:])))
    # The critical path and its causes.
    path = re.search(r"slowest rank\): (\d+) ops, busy ([\d.]+) ms of the "
                     r"([\d.]+) ms graph(?:; the other [\d.]+ ms: (.*))?",
                     text)
    same("critical path", numbers(page.texts["critical-summary"])[:3],
         list(path.groups()[:3]))
    causes = dict((name, ms) for name, ms in re.findall(
        r"(?:^|, )(.+?) ([\d.]+) ms", path.group(4) or ""))
    page_causes = dict(body_rows(page, "critical-causes"))
    for name, ms in causes.items():
        same("critical cause " + name, page_causes[name], ms)
    for name, ms in page_causes.items():
        if name not in causes and not name.startswith("ops on the path"):
            same("critical cause not printed " + name, ms, "0.000")
    # Memory: the peak, its device and node, what was held before.
    mem = re.findall(r"^(ranks? \S+(?: \(\d+\))?)\s+([\d.]+ \S+) on (\S+) at "
                     r"node (\d+) \((.*)\); ([\d.]+ \S+) held", text, re.M)
    page_mem = body_rows(page, "memory")
    same("memory rows", len(page_mem), len(mem))
    for row, (label, peak, device, node, name, before) in zip(page_mem, mem):
        same("memory", row[:5],
             [label, device, peak, "%s (%s)" % (node, name), before])
    # Each recommendation's figure: its numbers are the text's.
    text_numbers = set(numbers(text))
    figures = [v for k, v in page.texts.items() if k.startswith("fig#")]
    for figure in figures:
        # Standalone numbers only: not the digits inside an op's name.
        for n in re.findall(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%?(?![\w.])",
                            figure.split("figure:", 1)[1]):
            same("figure number %s in %r" % (n, figure), n in text_numbers,
                 True)
    same("recommendations with figures", len(figures) > 0, True)
    # Notes: every note the text prints is on the page.
    text_notes = re.findall(r"^note: (.*)$", text, re.M)
    for note in text_notes:
        same("note", note in page.notes, True)
    return checked


def check_compare(text, page, before, after):
    """The Compare tab against the text's comparison, and the comparison's
    op moves against the two runs' own --json reports."""
    checked = 0

    def same(what, got, want):
        nonlocal checked
        assert got == want, "compare: %s: page %r, text %r" % (what, got,
                                                               want)
        checked += 1

    step = re.search(r"^step: ([\d.]+) ms -> ([\d.]+) ms \((\S+)\)$", text,
                     re.M)
    same("step", numbers(page.texts["compare-step"]), list(step.groups()))
    for side in ("before", "after"):
        bound = re.search(r"^bound %s: (.*)$" % side, text, re.M).group(1)
        same("bound " + side,
             page.texts["compare-bound-" + side].split(": ", 1)[1], bound)
    parts = section(text, r"^per step of the slowest rank\s+before_ms")
    same("parts", [[r[0]] + numbers(" ".join(r[1:])) for r in
                   body_rows(page, "compare-parts")],
         [[line[:28].rstrip()] + numbers(line[28:]) for line in parts])
    moves = section(text, r"^op\s+change\s+before_calls")
    page_moves = body_rows(page, "compare-ops")
    same("op moves", len(page_moves), len(moves))
    for row, line in zip(page_moves, moves):
        same("op move name", row[0][:30].rstrip(), line[:30].rstrip())
        same("op move", [row[1]] + numbers(" ".join(row[2:])),
             [line[31:].split()[0]] + numbers(line[40:]))
    # The moves are the two runs' op tables subtracted, largest first.
    a = {o["name"]: o for o in before["ops"]}
    b = {o["name"]: o for o in after["ops"]}
    names = set(a) | set(b)
    delta = {n: b.get(n, {}).get("total_ns", 0) - a.get(n, {}).get(
        "total_ns", 0) for n in names}
    largest = max(abs(d) for d in delta.values())
    top = page_moves[0]
    same("top mover moved most", [n for n in names if abs(delta[n]) ==
                                  largest and n.startswith(top[0])] != [],
         True)
    same("top mover's change", top[6], "%+.3f" % (largest / 1e6 * (
        1 if max(delta.values()) == largest else -1)))
    return checked


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("FAIL: %s: %s" % (" ".join(cmd), result.stderr[-2000:]))
    return result.stdout


def check_refusals(sim, et, work):
    """--html misused is refused like the other flags, before any work."""
    for args, code, says in (
            (["--nccl-tests", "all_reduce", "--html", "x.html"], 2,
             "--html is used only with a trace"),
            ([et, "--html", ""], 2, "--html was given an empty value"),
            ([et, "--compare", ""], 2, "--compare was given an empty value"),
            ([et, "--sweep", "dp=1,2", "--compare", et], 2, "--compare"),
            ([et, "--compare", os.path.join(work, "none.et")], 1,
             "--compare " + os.path.join(work, "none.et")),
            ([et, "--html", os.path.join(work, "no", "such", "x.html")], 1,
             "--html " + os.path.join(work, "no", "such", "x.html"))):
        result = subprocess.run([sim] + args, capture_output=True, text=True)
        assert result.returncode == code, (args, result.returncode,
                                           result.stderr)
        assert says in result.stderr, (args, result.stderr)
        assert result.stdout == "", (args, "printed a report", result.stdout)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, src = sys.argv[1:]
    sim = os.path.join(build, "simulator", "et-sim")
    convert = os.path.join(build, "converter", "et-convert")
    h100 = os.path.join(os.environ.get(
        "ET_SHARED_TRACES", os.path.join(src, "..", "shared", "traces")),
        "h100")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as w:
        data = os.path.join(src, "examples", "data")
        run([convert, os.path.join(data, "ddp_mlp_et_r%d.json.gz"),
             os.path.join(w, "ddp.%d.et"), "--ranks", "4", "--kineto",
             os.path.join(data, "ddp_mlp_trace_r%d.json.gz")])
        check_refusals(sim, os.path.join(w, "ddp.0.et"), w)
        cases = [("demo", [os.path.join(w, "ddp.%d.et"), "--ranks", "4",
                           "--host-time", "recorded"])]
        if os.path.isdir(h100):
            et = os.path.join(w, "mlp1024.et")
            run([convert, os.path.join(h100, "mlp1024_et.json.gz"), et,
                 "--kineto", os.path.join(h100, "mlp1024_kineto.json.gz")])
            cases.append(("gpu", [et, "--layout", "dp=8"]))
        folder = os.path.join(src, "tests", "data", "h100")
        for model in ("mlp1024", "mlp4096"):
            run([convert, os.path.join(folder, model + "_et.json.gz"),
                 os.path.join(w, "t_" + model + ".et"), "--kineto",
                 os.path.join(folder, model + "_kineto.json.gz")])
        before, after = (os.path.join(w, "t_mlp%d.et" % n)
                         for n in (1024, 4096))
        cases.append(("compare", [before, "--compare", after]))
        for case, args in cases:
            page_path = os.path.join(w, case + ".html")
            text = run([sim] + args + ["--top", "100000", "--html",
                                       page_path])
            page = Page()
            with open(page_path, encoding="utf-8") as f:
                page.feed(f.read())
            checked = check(case, text, page)
            if case == "compare":
                checked += check_compare(
                    text, page, json.loads(run([sim, before, "--json"])),
                    json.loads(run([sim, after, "--json"])))
                joint = json.loads(run([sim] + args + ["--json"]))
                assert joint["compare"]["ops"][0]["name"] == body_rows(
                    page, "compare-ops")[0][0], joint["compare"]["ops"][0]
            print("%s: %d numbers and lines agree" % (case, checked))
    if not os.path.isdir(h100):
        print("SKIP: %s is absent (the demo was checked)" % h100)
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
