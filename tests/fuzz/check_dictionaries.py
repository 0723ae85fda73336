#!/usr/bin/env python3
"""Keeps the fuzz targets' dictionaries in step with the readers: every field name the
Kineto reader reads, every column the nsys reader checks and every key of platform and
topology files must be a token of its target's dictionary, so a field added to a reader
is fuzzed from the day it is added (issue 51). Fails listing the names that are missing.

  check_dictionaries.py REPO_DIR
"""

import os
import re
import sys


def dictionary(path):
    """The tokens of a libFuzzer dictionary, unescaped."""
    tokens = set()
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        body = line[line.index('"') + 1:line.rindex('"')]
        tokens.add(re.sub(r'\\(.)', r'\1', body))
    return tokens


def main():
    repo = sys.argv[1]

    def read(rel):
        return open(os.path.join(repo, rel), encoding="utf-8").read()

    kineto = read("converter/kineto/kineto_trace.cc")
    nsys = read("converter/nsys/nsys_tables.cc")
    platform = read("simulator/platform/platform.cc")
    topology = read("simulator/platform/topology.cc")
    wanted = {
        "fuzz_kineto.dict": {f'"{k}"' for k in re.findall(r'(?:info_)?key == "([^"]*)"', kineto)},
        "fuzz_nsys.dict": set(re.findall(r'(?:Id|Time|Dim|TextColumn)\("([^"]*)"', nsys) +
                              re.findall(r'\{"([A-Za-z]+)", (?:true|false)', nsys)),
        "fuzz_configs.dict": set(
            re.findall(r'"([a-z0-9_]+)"',
                       re.search(r"kPlatformKeys\[\] = \{([^}]*)\}", platform).group(1)) +
            re.findall(r'(?:d|root)\["([a-z_]+)"\]', topology)),
    }
    missing = []
    for name, names in wanted.items():
        if len(names) < 5:
            missing.append(f"{name}: found only {len(names)} names in the reader: "
                           "did its code change shape? update this script")
        have = dictionary(os.path.join(repo, "tests", "fuzz", name))
        missing += [f"{name}: {n}" for n in sorted(names - have)]
    for m in missing:
        print("missing from tests/fuzz/" + m)
    print(f"{sum(len(n) for n in wanted.values())} reader names, {len(missing)} missing")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
