#!/usr/bin/env python3
"""Makes a larger 1.1.x ET by repeating a recorded one's top-level ops.

Benchmark input preparation (docs/benchmarks.md, issue 13 item 7): the
children of the thread root (each a whole subtree) are appended again, in id
order, until the trace holds at least TARGET nodes; copy k gets ids offset by
k * (max id + 1) and its ctrl_deps offset the same way (the thread root stays
the parent of the top-level ops). Tensor values are left as recorded, as when
the same model runs again. Node order inside each subtree is kept.

Usage: et_repeat_ops.py in_1.1.x.json out.json TARGET
"""

import json
import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src, encoding="utf-8") as f:
        trace = json.load(f)
    nodes = trace["nodes"]
    by_id = {n["id"]: n for n in nodes}
    thread = next(n["id"] for n in nodes if n["name"].endswith("|thread]"))

    def top_level(node):
        while node["ctrl_deps"] != thread:
            node = by_id[node["ctrl_deps"]]
        return node["id"]

    roots = [n for n in nodes if n["ctrl_deps"] == n["id"] or n["id"] == thread]
    groups = {}
    for n in nodes:
        if n["ctrl_deps"] != n["id"] and n["id"] != thread:
            groups.setdefault(top_level(n), []).append(n)
    stride = max(by_id) + 1
    out = list(roots)
    copy = 0
    while len(out) < target:
        for top in sorted(groups):
            if len(out) >= target:
                break
            for n in groups[top]:
                c = json.loads(json.dumps(n))
                c["id"] += copy * stride
                if c["ctrl_deps"] != thread:
                    c["ctrl_deps"] += copy * stride
                out.append(c)
        copy += 1
    trace["nodes"] = out
    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(trace, f)
    os.replace(tmp, dst)
    print(f"et_repeat_ops: {src}: {len(nodes)} nodes -> {dst}: {len(out)} nodes")


if __name__ == "__main__":
    main()
