#!/usr/bin/env python3
"""Column spans of the Matrix Market files in a folder (docs/benchmarks/spmm.md#heuristic-column-slab).

For each matrix (symmetric storage expanded): the median, mean, nnz-weighted
mean and 90th percentile over non-empty rows of (largest - smallest column + 1),
the statistic RowShape::span takes the mean of.
  scripts/dev/matrix_spans.py ../shared/data/matrices
"""
import glob
import gzip
import os
import sys

import numpy as np


def read_pattern(path):
    with gzip.open(path, "rt") as f:
        header = f.readline().lower().split()
        symmetric = any(s in header for s in ("symmetric", "skew-symmetric", "hermitian"))
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows, cols, _ = map(int, line.split()[:3])
        data = np.loadtxt(f, usecols=(0, 1), dtype=np.int64, ndmin=2)
    i, j = data[:, 0] - 1, data[:, 1] - 1
    if symmetric:
        off = i != j
        i, j = np.concatenate([i, j[off]]), np.concatenate([j, i[off]])
    return rows, cols, i, j


def main(folder):
    for path in sorted(glob.glob(os.path.join(folder, "*.mtx.gz"))):
        rows, cols, i, j = read_pattern(path)
        first = np.full(rows, np.iinfo(np.int64).max)
        last = np.full(rows, -1)
        np.minimum.at(first, i, j)
        np.maximum.at(last, i, j)
        count = np.bincount(i, minlength=rows)
        has = count > 0
        span, weight = (last - first + 1)[has], count[has]
        name = os.path.basename(path).replace(".mtx.gz", "")
        print(f"{name:34s} rows {rows:8d} cols {cols:8d} nnz {len(i):9d} span median {np.median(span):9.0f} "
              f"mean {span.mean():9.0f} wmean {(span * weight).sum() / weight.sum():9.0f} "
              f"p90 {np.percentile(span, 90):9.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
