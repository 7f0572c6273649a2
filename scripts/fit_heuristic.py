#!/usr/bin/env python3
"""Fit the row_split / merge_based tuning table of spmm/cuda/heuristic.cpp
from spmm-bench results.

    spmm-bench --csv results.csv [--data DIR]
    python3 scripts/fit_heuristic.py results.csv [--device "H100 SXM"] [--commit abc123]

The rule being fitted (heuristic.cpp): merge_based when rows < min_rows,
else merge_based when the mean row length is below the threshold of the
block-width range and precision, else row_split. For every min_rows candidate
the script picks, per (width range, precision), the threshold that puts the
most cases within 5% of the faster of the two kernels (ties: the smallest
total slowdown), keeps the best min_rows, and prints the C++ table with the
measurement behind each constant. Where row_split was not run (too slow, see
the CSV note) it counts as infinitely slow.
"""
import argparse
import csv
import datetime
import math
import sys
from collections import defaultdict

RANGES = [(1, 1), (2, 4), (5, 16), (17, 64), (65, 256)]  # the rows of merge_below
MIN_ROWS = [0, 1024, 4096, 16384, 65536, 262144]
WITHIN = 1.05


def load(path):
    """(matrix, precision, n) -> {rows, mean, row_split, merge_based} times in microseconds."""
    cases = defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["algorithm"] not in ("row_split", "merge_based"):
                continue
            key = (r["matrix"], r["precision"], int(r["n"]))
            c = cases[key]
            c["rows"] = int(r["rows"])
            c["mean"] = float(r["mean_row_length"])
            ok = r["time_us"] != "" and r["check"] == "PASS"
            c[r["algorithm"]] = float(r["time_us"]) if ok else math.inf
    return {k: v for k, v in cases.items() if "row_split" in v and "merge_based" in v
            and min(v["row_split"], v["merge_based"]) < math.inf}


def score(cases, threshold, min_rows):
    """(cases not within 5%, total slowdown) of the rule on these cases."""
    misses, slowdown = 0, 0.0
    for c in cases:
        merge = c["rows"] < min_rows or c["mean"] < threshold
        chosen = c["merge_based"] if merge else c["row_split"]
        best = min(c["merge_based"], c["row_split"])
        ratio = chosen / best if chosen < math.inf else 1e9
        misses += ratio > WITHIN
        slowdown += ratio
    return misses, slowdown


def fit_threshold(cases, min_rows):
    means = sorted({c["mean"] for c in cases})
    candidates = [0.0] + [(a + b) / 2 for a, b in zip(means, means[1:])] + [means[-1] * 2 if means else 1.0]
    return min(candidates, key=lambda t: (score(cases, t, min_rows), abs(math.log((t + 1) / 10.35))))


def group(cases, lo, hi, precision):
    return [c for (m, p, n), c in cases.items() if p == precision and lo <= n <= hi]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--device", default="(device?)")
    parser.add_argument("--commit", default="(commit?)")
    args = parser.parse_args()
    cases = load(args.csv)
    if not cases:
        sys.exit("no case has both row_split and merge_based timed and checked")

    best = None
    for min_rows in MIN_ROWS:
        total = 0
        table = []
        for lo, hi in RANGES:
            row = []
            for precision in ("fp32", "fp64"):
                g = group(cases, lo, hi, precision)
                t = fit_threshold(g, min_rows) if g else 9.35
                misses, _ = score(g, t, min_rows)
                total += misses
                row.append((t, len(g), misses))
            table.append(row)
        if best is None or total < best[0]:
            best = (total, min_rows, table)

    total, min_rows, table = best
    date = datetime.date.today().isoformat()
    print(f"// Fitted by scripts/fit_heuristic.py from {args.csv}: {args.device}, commit {args.commit}, {date}.")
    print(f"// {len(cases)} cases; {len(cases) - total} within 5% of the faster kernel "
          f"({100.0 * (len(cases) - total) / len(cases):.1f}%).")
    print("constexpr std::array<Threshold, 5> merge_below = {{")
    for (lo, hi), row in zip(RANGES, table):
        (t32, n32, m32), (t64, n64, m64) = row
        label = f"n = {lo}" if lo == hi else f"n = {lo}..{hi}"
        print(f"    {{{hi}, {t32:.3g}, {t64:.3g}}},  // {label}: fp32 {n32 - m32}/{n32} within 5%, "
              f"fp64 {n64 - m64}/{n64} ({args.device}, {args.commit}, {date})")
    print("}};")
    print(f"constexpr std::int64_t row_split_min_rows = {min_rows};  // best of {MIN_ROWS}, same run")

    # The cases the fitted rule still gets wrong, worst first.
    worst = []
    for (m, p, n), c in cases.items():
        t = next(row for (lo, hi), row in zip(RANGES, table) if lo <= n <= hi)[0 if p == "fp32" else 1][0]
        merge = c["rows"] < min_rows or c["mean"] < t
        chosen = c["merge_based"] if merge else c["row_split"]
        ratio = chosen / min(c["merge_based"], c["row_split"])
        if ratio > WITHIN:
            worst.append((ratio, m, p, n, c["mean"], "merge_based" if merge else "row_split"))
    for ratio, m, p, n, mean, chose in sorted(worst, reverse=True)[:20]:
        print(f"// miss: {m} {p} n={n} mean {mean:.3g}: {chose} is {ratio:.2f}x the faster kernel")


if __name__ == "__main__":
    main()
