#!/usr/bin/env python3
"""LOBPCG's kernel times by iteration, from an Nsight Systems SQLite export.

usage: nsys_by_update.py trace.sqlite

In windows of 25 Ritz updates (one per iteration): the update kernel's mean,
minimum and maximum, and the three kernels that took most of the time between
the window's first and last update, per update. Shows how soft locking moves
the kernels' costs, which nsys_gaps.py's whole-run means hide.
"""
import sqlite3, sys, collections
db = sqlite3.connect(sys.argv[1])
names = dict(db.execute("select id, value from StringIds"))
ks = [(s, e - s, names.get(n, "?")) for s, e, n in db.execute("select start, end, shortName from CUPTI_ACTIVITY_KIND_KERNEL order by start")]
ritz = [k for k in ks if "ritz_update" in k[2]]
print("ritz updates:", len(ritz), "total ms %.1f" % (sum(k[1] for k in ritz) / 1e6))
w = 25
for i in range(0, len(ritz), w):
    chunk = ritz[i:i + w]
    t0, t1 = chunk[0][0], chunk[-1][0] + chunk[-1][1]
    other = collections.Counter()
    for s, d, n in ks:
        if t0 <= s <= t1 and "ritz_update" not in n: other[n[:28]] += d
    top = ", ".join("%s %.0f" % (n, v / 1e3 / len(chunk)) for n, v in other.most_common(3))
    print("updates %3d-%3d: ritz %.0f us (min %.0f max %.0f); per update: %s" % (i, i + len(chunk) - 1,
          sum(k[1] for k in chunk) / 1e3 / len(chunk), min(k[1] for k in chunk) / 1e3, max(k[1] for k in chunk) / 1e3, top))
