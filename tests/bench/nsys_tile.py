#!/usr/bin/env python3
"""Makes a large Nsight Systems export for benchmarks by tiling a real one.

Usage: nsys_tile.py IN.sqlite[.gz] OUT.sqlite TARGET_MB

Copies IN and appends copies of its activity rows (kernels, memcpys, memsets,
runtime calls, NVTX ranges, synchronisation) shifted past the capture's end,
with correlation ids shifted past the largest one, until the file reaches
TARGET_MB. Every copy is the same capture again, so the graph grows with the
file and each copy links as the original does.
"""
import gzip
import os
import shutil
import sqlite3
import sys

TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
          "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"]


def main(src, dst, target_mb):
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as i, open(dst, "wb") as o:
        shutil.copyfileobj(i, o)
    db = sqlite3.connect(dst)
    present = [t for t in TABLES if db.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
        (t,)).fetchone()]
    span = max(db.execute(f"SELECT max(end) FROM {t}").fetchone()[0] or 0
               for t in present) + 1
    corr = max(db.execute(
        f"SELECT max(correlationId) FROM {t}").fetchone()[0] or 0
        for t in present if t != "NVTX_EVENTS") + 1
    columns = {t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
               for t in present}
    base = {t: db.execute(f"SELECT max(rowid) FROM {t}").fetchone()[0] or 0
            for t in present}
    copy = 1
    while os.path.getsize(dst) < target_mb * 1e6:
        for t in present:
            exprs = []
            for c in columns[t]:
                if c in ("start", "end"):
                    exprs.append(f"{c} + {copy * span}")
                elif c == "correlationId":
                    exprs.append(f"{c} + {copy * corr}")
                else:
                    exprs.append(c)
            db.execute(f"INSERT INTO {t} ({', '.join(columns[t])}) SELECT "
                       f"{', '.join(exprs)} FROM {t} WHERE rowid <= {base[t]}")
        db.commit()
        copy += 1
    db.close()
    print(f"{dst}: {copy} copies of {src}, "
          f"{os.path.getsize(dst) / 1e6:.1f} MB")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
