#!/usr/bin/env python3
"""Refit rows of `automatic`'s table (spmm/cuda/heuristic.cpp, `rules`) from spmm-bench CSVs.

For each width the CSVs hold and each precision, every (skew, short_mean) pair of the grid below is
scored over the suite's cases: the kernel the rule picks (merge_based when longest > skew * mean or
mean < short_mean, else row_split) against the faster of the two measured times. The pair with the
fewest cases below 0.9x of the best cuSPARSE time, then the most within 5% of the faster kernel,
then the best geometric mean, wins. The rules ahead of the table in choose_algorithm (fewer than
row_split_min_rows rows; dense regular rows) are applied first, as the code does, so those cases
count for either pair. Explicit row_split times stand for `automatic`'s (its column slabs are left
out). Several CSVs (runs) of one width: their times are averaged per case.
  scripts/dev/fit_choice_table.py 'run1/*.csv' 'run2/*.csv' [--widths 64,128,256] [--sms 132]
"""
import argparse
import collections
import csv
import glob
import lzma
import math

SKEWS = [3, 5, 8, 10, 14, 20, 24, 34, 50, 70, 100, 120, 170, 220, 290, 400, 600, 1300, 3000, math.inf]
SHORT_MEANS = [0, 2, 2.2, 3, 4, 5, 6, 8]
ROW_SPLIT_MIN_ROWS = 4096


def merge_items_per_segment(rows, nnz, sms):
    target = 4 * 64 * sms
    wanted = (rows + nnz + target - 1) // target
    items = 32
    while items < wanted and items < 1024:
        items *= 2
    return items


def load(patterns):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    shape = {}
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            f = lzma.open(path, 'rt') if path.endswith('.xz') else open(path)
            for r in csv.DictReader(f):
                if r['check'] != 'PASS' or not r['time_us']:
                    continue
                key = (r['matrix'], r['precision'], int(r['n']))
                times[key][r['algorithm']].append(float(r['time_us']))
                shape[r['matrix']] = (int(r['rows']), int(r['cols']), int(r['nnz']), float(r['mean_row_length']),
                                      float(r['max_row_length']))
    return times, shape


def pre_rule(shape, n, precision, sms):
    """merge_based where choose_algorithm decides before the table; None where the table decides."""
    rows, cols, nnz, mean, longest = shape
    if rows < ROW_SPLIT_MIN_ROWS:
        return 'merge_based'
    row_bytes = n * (4 if precision == 'fp32' else 8)
    if cols > 0 and mean >= 0.5 * cols and row_bytes >= 128:
        if longest <= 3 * mean and mean >= 4 * merge_items_per_segment(rows, nnz, sms):
            return 'merge_based'
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('csvs', nargs='+')
    parser.add_argument('--widths', default='')
    parser.add_argument('--sms', type=int, default=132)
    args = parser.parse_args()
    times, shapes = load(args.csvs)
    widths = sorted({k[2] for k in times}) if not args.widths else [int(w) for w in args.widths.split(',')]
    for precision in ('fp32', 'fp64'):
        for n in widths:
            cases = []
            for (matrix, p, w), t in times.items():
                if p != precision or w != n or 'row_split' not in t or 'merge_based' not in t:
                    continue
                cusparse = [sum(v) / len(v) for a, v in t.items() if a.startswith('cusparse')]
                if not cusparse:
                    continue
                mean_time = {a: sum(t[a]) / len(t[a]) for a in ('row_split', 'merge_based')}
                cases.append((matrix, mean_time, min(cusparse), pre_rule(shapes[matrix], n, precision, args.sms)))
            if not cases:
                continue
            scored = []
            for skew in SKEWS:
                for short_mean in SHORT_MEANS:
                    below, within, logs = 0, 0, 0.0
                    for matrix, t, cusparse, fixed in cases:
                        _, _, _, mean, longest = shapes[matrix]
                        pick = fixed or ('merge_based' if longest > skew * mean or mean < short_mean else 'row_split')
                        below += cusparse / t[pick] < 0.9
                        within += t[pick] <= 1.05 * min(t.values())
                        logs += math.log(cusparse / t[pick])
                    scored.append((below, -within, -logs, skew, short_mean))
            scored.sort()
            below, within, logs, skew, short_mean = scored[0]
            print(f'{precision} n = {n:3d}: skew {skew:>6} short_mean {short_mean:>3}: {-within}/{len(cases)} within 5%, '
                  f'{below} below 0.9x, geomean {math.exp(-logs / len(cases)):.3f}x')


if __name__ == '__main__':
    main()
