#!/usr/bin/env python3
"""What a solver run does outside its iterations, from an Nsight Systems SQLite export.

usage: nsys_edges.py trace.sqlite [anchor-kernel-substring] [min-us]

The iterations span the first to the last launch of the anchor kernel (default
ritz_update_). Before the first and after the last, prints every CUDA API
call and device activity that took at least min-us (default 50) microseconds,
with its time relative to the edge, and the totals by name: where the solve's
start-up and wind-down go.
"""
import collections
import sqlite3
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    anchor = sys.argv[2] if len(sys.argv) > 2 else "ritz_update_"
    min_ns = float(sys.argv[3] if len(sys.argv) > 3 else 50) * 1e3
    names = dict(db.execute("select id, value from StringIds"))
    device = [(s, e, names.get(n, "?")) for s, e, n in
              db.execute("select start, end, shortName from CUPTI_ACTIVITY_KIND_KERNEL")]
    for table, label in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        try:
            device += [(s, e, f"{label} {b / 1e6:.1f} MB") for s, e, b in db.execute(f"select start, end, bytes from {table}")]
        except sqlite3.OperationalError:
            pass
    api = [(s, e, names.get(n, "?")) for s, e, n in
           db.execute("select start, end, nameId from CUPTI_ACTIVITY_KIND_RUNTIME")]
    marks = sorted(s for s, e, n in device if anchor in n)
    if not marks:
        sys.exit(f"no kernel named like {anchor!r} in the trace")
    first, last_start = marks[0], marks[-1]
    last = max(e for s, e, n in device if anchor in n and s == last_start)
    for label, lo, hi, ref in (("before the first", -float("inf"), first, first), ("after the last", last, float("inf"), last)):
        print(f"== {label} {anchor} (times relative to it, ms)")
        rows = [("api", s, e, n) for s, e, n in api if lo <= s < hi] + \
               [("gpu", s, e, n) for s, e, n in device if lo <= s < hi]
        rows.sort(key=lambda r: r[1])
        totals, counts = collections.Counter(), collections.Counter()
        for kind, s, e, n in rows:
            totals[(kind, n[:60])] += e - s
            counts[(kind, n[:60])] += 1
            if e - s >= min_ns:
                print(f"  {kind} {(s - ref) / 1e6:10.3f} {(e - s) / 1e3:10.1f} us  {n[:90]}")
        print("  totals:")
        for key, value in totals.most_common(25):
            print(f"    {key[0]} {value / 1e6:9.3f} ms {counts[key]:6d} x  {key[1]}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.stderr.close()
