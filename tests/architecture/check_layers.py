#!/usr/bin/env python3
"""Checks that every library includes only what docs/architecture.md allows.

The layers, lowest first: base, proto, model, step; then the tools
(converter, simulator with scaleout below it, replay, visualizer),
which may include any shared layer but never each other; cli is for the
tools' mains only. Inside converter/, lowest first: common, kineto, graph,
then the importers (et, kineto_only, nsys above kineto_only, astra_text),
then the driver (converter/ itself): an importer never includes the driver
nor an importer beside it. Inside simulator/, lowest first: platform, comm,
engine, then calibration and report (each above the engine, neither sees the
other), then the driver (simulator/ itself): the communication model never
includes the engine, the engine never includes the reports. Prints each
include that breaks the rule and exits 1; a converter or simulator folder
missing from the table is an error too.
"""
import pathlib
import re
import sys

SHARED = ["base", "proto", "model", "step"]
CONVERTER_BELOW = ["converter/common", "converter/kineto", "converter/graph"]
CONVERTER_IMPORTERS = ["converter/et", "converter/kineto_only",
                       "converter/nsys", "converter/astra_text"]
SIMULATOR_PARTS = ["simulator/platform", "simulator/comm", "simulator/engine",
                   "simulator/calibration", "simulator/report"]
SIM_BELOW = set(SHARED) | {"scaleout"}
ALLOWED = {
    "base": {"base"},
    "proto": {"base", "proto"},
    "model": {"base", "proto", "model"},
    "step": {"base", "proto", "model", "step"},
    "converter/common": set(SHARED) | {"converter/common"},
    "converter/kineto": set(SHARED) | {"converter/common", "converter/kineto"},
    "converter/graph": set(SHARED) | {"converter/common", "converter/kineto",
                                      "converter/graph"},
    # The importers: each sees the layers below, never the driver.
    "converter/et": set(SHARED) | set(CONVERTER_BELOW) | {"converter/et"},
    "converter/kineto_only": set(SHARED) | set(CONVERTER_BELOW)
    | {"converter/kineto_only"},
    # An nsys export's graphs are converted as Kineto traces alone.
    "converter/nsys": set(SHARED) | set(CONVERTER_BELOW)
    | {"converter/kineto_only", "converter/nsys"},
    "converter/astra_text": set(SHARED) | {"converter/astra_text"},
    # The driver: ConvertFile, multi-rank, cross-rank check, et-convert.
    "converter": set(SHARED) | set(CONVERTER_BELOW) | set(CONVERTER_IMPORTERS)
    | {"converter"},
    "scaleout": set(SHARED) | {"scaleout"},
    # simulator/: the machine, then what communication costs (never the
    # engine), the engine (never the reports), then what is fitted to
    # measurements and what is reported, and the driver on top.
    "simulator/platform": SIM_BELOW | {"simulator/platform"},
    "simulator/comm": SIM_BELOW | {"simulator/platform", "simulator/comm"},
    "simulator/engine": SIM_BELOW | {"simulator/platform", "simulator/comm",
                                     "simulator/engine"},
    "simulator/calibration": SIM_BELOW | {"simulator/platform",
                                          "simulator/comm", "simulator/engine",
                                          "simulator/calibration"},
    "simulator/report": SIM_BELOW | {"simulator/platform", "simulator/comm",
                                     "simulator/engine", "simulator/report"},
    "simulator": SIM_BELOW | set(SIMULATOR_PARTS) | {"simulator"},
    "replay": set(SHARED) | {"replay"},
    "visualizer": set(SHARED) | {"visualizer"},
    "cli": {"cli"},
    # The Python module: a front end like the mains, over the converter's
    # and the simulator's drivers (and cli's flag rule), never replay/viz.
    "python": set(SHARED) | {"scaleout", "cli", "converter", "simulator",
                             "python"} | set(CONVERTER_BELOW)
    | set(CONVERTER_IMPORTERS) | set(SIMULATOR_PARTS),
}
SUBLIBS = CONVERTER_BELOW + CONVERTER_IMPORTERS + SIMULATOR_PARTS
KNOWN = SUBLIBS + [k for k in ALLOWED if k not in SUBLIBS]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def library_of(path):
    """The library a path (relative to the root) belongs to, or None."""
    for lib in KNOWN:
        if path == lib or path.startswith(lib + "/"):
            return lib
    return None


def main(root):
    root = pathlib.Path(root)
    problems = []
    checked = 0
    for lib in KNOWN:
        for f in sorted((root / lib).glob("*")):
            if f.suffix not in (".h", ".cc", ".cu"):
                continue
            allowed = set(ALLOWED[lib])
            if f.name.endswith("_main.cc"):
                allowed.add("cli")
            for inc in INCLUDE.findall(f.read_text(errors="replace")):
                target = library_of(inc)
                if target is None:
                    continue  # system, third-party or generated elsewhere
                checked += 1
                if target not in allowed:
                    problems.append(f"{f.relative_to(root)}: includes {inc} "
                                    f"({lib} may not include {target})")
    for tool in ("converter", "simulator"):
        for d in sorted((root / tool).iterdir()):
            if d.is_dir() and any(d.glob("*.cc")) and \
                    f"{tool}/{d.name}" not in ALLOWED:
                problems.append(f"{tool}/{d.name}/: a {tool} folder that "
                                "docs/architecture.md's table lacks")
    for p in problems:
        print(p)
    print(f"check_layers: {checked} includes checked, {len(problems)} "
          "against docs/architecture.md")
    if checked == 0:
        print("check_layers: no includes found: wrong root?")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
