#!/usr/bin/env python3
"""Where a solver run's device time goes, from an Nsight Systems SQLite export.

usage: nsys_gaps.py trace.sqlite [anchor-kernel-substring]

Over the span from the first to the last launch of the anchor kernel (default
ritz_update_: one per LOBPCG iteration), prints the device's busy and idle
time, the idle gaps grouped by the activities on either side (what the device
waited between), and the time per kernel.
"""
import collections
import sqlite3
import sys


def main():
    db = sqlite3.connect(sys.argv[1])
    anchor = sys.argv[2] if len(sys.argv) > 2 else "ritz_update_"
    names = dict(db.execute("select id, value from StringIds"))
    events = [(s, e - s, names.get(n, "?")) for s, e, n in
              db.execute("select start, end, shortName from CUPTI_ACTIVITY_KIND_KERNEL")]
    for table, label in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
        try:
            events += [(s, e - s, label) for s, e in db.execute(f"select start, end from {table}")]
        except sqlite3.OperationalError:
            pass  # the run had none
    events.sort()
    marks = [e for e in events if anchor in e[2]]
    if not marks:
        sys.exit(f"no kernel named like {anchor!r} in the trace")
    t0, t1 = marks[0][0], marks[-1][0] + marks[-1][1]
    busy, end, previous = 0, t0, "?"
    gaps, gap_count = collections.Counter(), collections.Counter()
    kernel_time, kernel_count = collections.Counter(), collections.Counter()
    for start, duration, name in events:
        if start < t0 or start > t1:
            continue
        if start > end:
            key = f"{previous[:40]} -> {name[:40]}"
            gaps[key] += start - end
            gap_count[key] += 1
        busy += max(0, start + duration - max(start, end))
        end = max(end, start + duration)
        previous = name
        kernel_time[name[:50]] += duration
        kernel_count[name[:50]] += 1
    span, steps = t1 - t0, len(marks)
    print(f"span {span / 1e6:.1f} ms over {steps} {anchor} launches: device busy {busy / 1e6:.1f} ms, "
          f"idle {(span - busy) / 1e6:.1f} ms ({(span - busy) / steps / 1e3:.1f} us a launch)")
    for key, value in gaps.most_common(8):
        print(f"  idle {value / 1e6:8.1f} ms  {gap_count[key]:6d} x {value / gap_count[key] / 1e3:7.1f} us  {key}")
    for key, value in kernel_time.most_common(12):
        print(f"  busy {value / 1e6:8.1f} ms  {kernel_count[key]:6d} x {value / kernel_count[key] / 1e3:7.1f} us  {key}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # piped into head
        sys.stderr.close()
