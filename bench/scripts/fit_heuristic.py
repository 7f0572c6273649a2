#!/usr/bin/env python3
"""Fit the row_split / merge_based table of spmm/heuristic.cpp from
spmm-bench results.

    spmm-bench --csv results.csv [--data DIR]
    python3 bench/scripts/fit_heuristic.py results.csv [more.csv ...] --device H200 --commit abc1234 \
        [--date 2026-11-22] [--min-rows 4096]

Several CSVs (runs of the same kernels) are fitted on the geometric mean of each kernel's times,
which damps the run-to-run noise at the 5% margin; each run is also scored on its own.

The rule being fitted (heuristic.cpp), per precision and block-width row:

    row_split    if n = 1 and the stream body pays  (fixed, not fitted: rows >= 4096 and the longest
                                                     row >= 8x the mean, or >= 4x a mean <= 16,
                                                     or scattered columns (the CSV's `scattered`
                                                     >= 0.9); or a mean row over 4096, any row count)
    merge_based  if rows < min_rows                 (too few rows to fill the GPU)
                 or max_row_length > skew * mean    (a few long rows: row-split
                                                     leaves lanes idle behind them)
                 or mean < short_mean               (very short rows at wide n)
                 or dense rows taken across rows    (fixed, not fitted: mean >= cols / 2,
                                                     four merge segments a row, >= 64-byte
                                                     B rows; --multiprocessors sets the SMs)
    row_split    otherwise.

A width n uses the first row with n <= max_n; the rows are the widths the
full suite measures (1, 2, 4, ..., 256), so every constant has cases behind it.
min_rows is one constant for the whole table. For each candidate min_rows,
each (row, precision) gets the (skew, short_mean) pair that puts the most
cases within 5% of the faster of the two kernels, ties broken by the smallest
total slowdown, then by the plainest thresholds. The script reports the fitted
score and a leave-one-matrix-out score (each matrix predicted by a table fitted
without it), prints the C++ table, and the cases the table still gets wrong.
Where a kernel was not run (row_split on rows of millions) it counts as
infinitely slow; a FAIL with a time still counts as timed (the only FAILs so
far were the check's own bug on dense_2x8M fp32).
"""
import argparse
import csv
import math
import sys
from collections import defaultdict

import numpy as np

WIDTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256]  # max_n of the table's rows
MIN_ROWS = [0, 1024, 2048, 4096, 8192, 16384, 32768]
WITHIN = 1.05
NEVER = 1e18  # a skew threshold no matrix reaches
MULTIPROCESSORS = 132  # the H100's; --multiprocessors


def merge_items_per_segment(rows, nnz, multiprocessors):
    """heuristic.cpp's merge_items_per_segment: 4 waves of 64 warps an SM, 32 to 1024 items."""
    wanted = (rows + nnz + 4 * 64 * multiprocessors - 1) // (4 * 64 * multiprocessors)
    items = 32
    while items < wanted and items < 1024:
        items *= 2
    return items


def dense_rows_take_merge(rows, cols, mean, mx, n, precision):
    """heuristic.cpp's dense-rows rule of choose_algorithm (before the table)."""
    if rows < 4096 or cols <= 0 or mean < 0.5 * cols or n * (4 if precision == "fp32" else 8) < 64:
        return False
    items = merge_items_per_segment(rows, round(mean * rows), MULTIPROCESSORS)
    return mx <= 3 * mean and mean >= 4 * items


def row_stream_takes(rows, mean, mx, scattered, n):
    """heuristic.cpp's row_stream_pays at n = 1 (choose_algorithm's first rule); `scattered` is
    RowShape::scattered (the CSV's column; 0 in CSVs from before it)."""
    if n != 1:
        return False
    if mean > 4096:
        return True
    if rows < 4096 or mean <= 0:
        return False
    return mx >= 8 * mean or (mx >= 4 * mean and mean <= 16) or scattered >= 0.9


def load(path):
    """(matrix, precision, n) -> {rows, mean, max, row_split, merge_based} (times in us)."""
    cases = defaultdict(dict)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["algorithm"] not in ("row_split", "merge_based"):
                continue
            c = cases[(r["matrix"], r["precision"], int(r["n"]))]
            c["rows"] = int(r["rows"])
            c["mean"] = float(r["mean_row_length"])
            c["max"] = float(r["max_row_length"])
            c["dense_merge"] = dense_rows_take_merge(c["rows"], int(r["cols"]), c["mean"], c["max"],
                                                     int(r["n"]), r["precision"])
            scattered = float(r.get("scattered") or 0)
            c["stream"] = row_stream_takes(c["rows"], c["mean"], c["max"], scattered, int(r["n"]))
            timed = r["time_us"] != "" and r["check"] in ("PASS", "FAIL")
            c[r["algorithm"]] = float(r["time_us"]) if timed else math.inf
    return {k: v for k, v in cases.items() if "row_split" in v and "merge_based" in v
            and min(v["row_split"], v["merge_based"]) < math.inf}


def load_runs(paths):
    """load() of each run, combined by the geometric mean of each kernel's time (cases in all runs)."""
    runs = [load(p) for p in paths]
    combined = {}
    for key, first in runs[0].items():
        if not all(key in r for r in runs):
            continue
        c = dict(first)
        for alg in ("row_split", "merge_based"):
            times = [r[key][alg] for r in runs]
            c[alg] = math.exp(sum(map(math.log, times)) / len(times)) if max(times) < math.inf else math.inf
        combined[key] = c
    return combined, runs


def picks_merge(c, min_rows, skew, short_mean):
    if c["stream"]:
        return False
    return (c["rows"] < min_rows or c["dense_merge"] or c["max"] > skew * c["mean"]
            or c["mean"] < short_mean)


def ratio(c, merge):
    chosen = c["merge_based"] if merge else c["row_split"]
    return chosen / min(c["merge_based"], c["row_split"]) if chosen < math.inf else 1e9


def score(cases, min_rows, skew, short_mean):
    """(cases not within 5%, total slowdown) of one row of the rule."""
    misses, slowdown = 0, 0.0
    for c in cases:
        r = ratio(c, picks_merge(c, min_rows, skew, short_mean))
        misses += r > WITHIN
        slowdown += min(r, 10.0)
    return misses, slowdown


def midpoints(values):
    v = sorted(set(values))
    return [(a + b) / 2 for a, b in zip(v, v[1:])]


def fit_row(cases, min_rows):
    # Thresholds rounded to 2 significant digits (readable table), halfway
    # between measured values; NEVER / 0 switch a branch off. Every (skew,
    # short_mean) pair is scored at once (numpy); the same objective as score().
    skews = np.array(sorted(set([NEVER] + [float(f"{x:.2g}") for x in midpoints(c["max"] / c["mean"] for c in cases)])))
    means = np.array(sorted(set([0.0] + [float(f"{x:.2g}") for x in midpoints(c["mean"] for c in cases)])))
    rows = np.array([c["rows"] for c in cases], dtype=float)
    mean = np.array([c["mean"] for c in cases])
    mx = np.array([c["max"] for c in cases])
    dense = np.array([c["dense_merge"] for c in cases], dtype=bool)
    stream = np.array([c["stream"] for c in cases], dtype=bool)
    r_merge = np.array([ratio(c, True) for c in cases])
    r_split = np.array([ratio(c, False) for c in cases])
    merge = ((rows < min_rows)[None, None, :] | dense[None, None, :] | (mx[None, None, :] > skews[:, None, None] * mean[None, None, :])
             | (mean[None, None, :] < means[None, :, None]))
    merge &= ~stream[None, None, :]
    r = np.where(merge, r_merge, r_split)
    misses = (r > WITHIN).sum(axis=2)
    slowdown = np.minimum(r, 10.0).sum(axis=2)
    best = None
    for i, s in enumerate(skews):
        for j, m in enumerate(means):
            key = (int(misses[i, j]), round(float(slowdown[i, j]), 9), m, -s)  # then no short_mean, high skew
            if best is None or key < best[0]:
                best = (key, float(s), float(m))
    return best[1], best[2]


def group(cases, precision, lo, hi):
    return [c for (m, p, n), c in cases.items() if p == precision and lo <= n <= hi]


def row_bounds():
    lo = 1
    for hi in WIDTHS:
        yield lo, hi
        lo = hi + 1


def fit_table(cases, min_rows_choices=MIN_ROWS):
    best = None
    for min_rows in min_rows_choices:
        table, misses = [], 0
        for lo, hi in row_bounds():
            row = []
            for p in ("fp32", "fp64"):
                g = group(cases, p, lo, hi)
                s, m = fit_row(g, min_rows) if g else (NEVER, 0.0)
                row.append((s, m))
                misses += score(g, min_rows, s, m)[0]
            table.append(row)
        if best is None or misses < best[0]:
            best = (misses, min_rows, table)
    return best[1], best[2]


def predict(min_rows, table, c, precision, n):
    for (lo, hi), row in zip(row_bounds(), table):
        if n <= hi:
            s, m = row[0 if precision == "fp32" else 1]
            return picks_merge(c, min_rows, s, m)
    s, m = table[-1][0 if precision == "fp32" else 1]
    return picks_merge(c, min_rows, s, m)


def evaluate(cases, min_rows, table):
    hits = sum(ratio(c, predict(min_rows, table, c, p, n)) <= WITHIN for (m, p, n), c in cases.items())
    return hits, len(cases)


def main():
    global MULTIPROCESSORS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--device", default="(device?)")
    parser.add_argument("--commit", default="(commit?)")
    parser.add_argument("--date", default="(date?)")
    parser.add_argument("--no-loo", action="store_true", help="skip the leave-one-matrix-out score")
    parser.add_argument("--multiprocessors", type=int, default=MULTIPROCESSORS,
                        help="SMs of the GPU the CSVs were measured on (the dense-rows rule's segments)")
    parser.add_argument("--min-rows", type=int, help="fix min_rows instead of searching " + str(MIN_ROWS))
    args = parser.parse_args()
    MULTIPROCESSORS = args.multiprocessors
    cases, runs = load_runs(args.csv)
    if not cases:
        sys.exit("no case has both row_split and merge_based timed")
    choices = [args.min_rows] if args.min_rows is not None else MIN_ROWS

    min_rows, table = fit_table(cases, choices)
    hits, total = evaluate(cases, min_rows, table)
    # The rule without the skew feature (what a caller that only knows the
    # mean row length gets), and the old rule, for comparison.
    no_skew = [[(NEVER, m) for (s, m) in row] for row in table]
    hits_ns, _ = evaluate(cases, min_rows, no_skew)
    old = [[(NEVER, 9.35), (NEVER, 9.35)] for _ in WIDTHS]
    hits_old, _ = evaluate(cases, 16384, old)

    loo = None
    if not args.no_loo:
        matrices = sorted({m for (m, p, n) in cases})
        loo_hits = 0
        for held in matrices:
            train = {k: v for k, v in cases.items() if k[0] != held}
            r, t = fit_table(train, choices)
            test = {k: v for k, v in cases.items() if k[0] == held}
            loo_hits += evaluate(test, r, t)[0]
        loo = loo_hits

    src = f"{args.device}, commit {args.commit}, {args.date}"
    print(f"// Fitted by bench/scripts/fit_heuristic.py from {' '.join(args.csv)} ({src}):")
    print(f"// {total} cases (matrix x precision x n with both kernels timed); objective: cases")
    print(f"// within 5% of the faster kernel, then total slowdown. Fitted: {hits}/{total} "
          f"({100.0 * hits / total:.1f}%)" + (f"; leave-one-matrix-out: {loo}/{total} "
                                               f"({100.0 * loo / total:.1f}%)." if loo is not None else "."))
    print(f"// Same table without the skew feature (max = mean): {hits_ns}/{total} "
          f"({100.0 * hits_ns / total:.1f}%); the old rule (mean < 9.35, rows < 16384): "
          f"{hits_old}/{total} ({100.0 * hits_old / total:.1f}%).")
    if len(runs) > 1:
        print("// Each run scored alone: " + ", ".join(
            f"{p.rsplit('/', 1)[-1]} {evaluate(r, min_rows, table)[0]}/{len(r)}" for p, r in zip(args.csv, runs)) + ".")
    print(f"constexpr std::array<Rule, {len(WIDTHS)}> rules = {{{{")
    for (lo, hi), row in zip(row_bounds(), table):
        (s32, m32), (s64, m64) = row
        parts = []
        for p, (s, m) in zip(("fp32", "fp64"), row):
            g = group(cases, p, lo, hi)
            miss = score(g, min_rows, s, m)[0]
            parts.append(f"{p} {len(g) - miss}/{len(g)}")
        fmt = lambda x: "never" if x >= NEVER else f"{x:g}"
        label = f"n = {lo}" if lo == hi else f"n = {lo}..{hi}"
        print(f"    {{{hi}, {{{fmt(s32)}, {m32:g}}}, {{{fmt(s64)}, {m64:g}}}}},  // {label}: "
              + ", ".join(parts) + " within 5%")
    print("}};")
    how = "fixed by --min-rows" if args.min_rows is not None else f"best of {MIN_ROWS}"
    print(f"constexpr std::int64_t row_split_min_rows = {min_rows};  // {how}")

    worst = []
    for (m, p, n), c in cases.items():
        merge = predict(min_rows, table, c, p, n)
        r = ratio(c, merge)
        if r > WITHIN:
            worst.append((r, m, p, n, c["mean"], c["max"], "merge_based" if merge else "row_split"))
    for r, m, p, n, mean, mx, chose in sorted(worst, reverse=True):
        print(f"// miss: {m} {p} n={n} mean {mean:.3g} max {mx:.0f}: {chose} is {r:.2f}x the faster kernel")


if __name__ == "__main__":
    main()
