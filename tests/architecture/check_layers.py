#!/usr/bin/env python3
"""Checks that every library includes only what docs/architecture.md allows.

The layers, lowest first: base, proto, model, step; then the tools
(converter with converter/kineto and converter/nsys below it, simulator
with scaleout below it, replay, visualizer),
which may include any shared layer but never each other; cli is for the
tools' mains only. Prints each include that breaks the rule and exits 1.
"""
import pathlib
import re
import sys

SHARED = ["base", "proto", "model", "step"]
ALLOWED = {
    "base": {"base"},
    "proto": {"base", "proto"},
    "model": {"base", "proto", "model"},
    "step": {"base", "proto", "model", "step"},
    "converter/kineto": set(SHARED) | {"converter/kineto"},
    "converter/nsys": set(SHARED) | {"converter/nsys", "converter/kineto"},
    "converter": set(SHARED) | {"converter", "converter/kineto", "converter/nsys"},
    "scaleout": set(SHARED) | {"scaleout"},
    "simulator": set(SHARED) | {"scaleout", "simulator"},
    "replay": set(SHARED) | {"replay"},
    "visualizer": set(SHARED) | {"visualizer"},
    "cli": {"cli"},
}
SUBLIBS = ["converter/kineto", "converter/nsys"]
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
