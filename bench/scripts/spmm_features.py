#!/usr/bin/env python3
"""Column-locality features of every spmm-bench matrix (bench/bench_suite.cpp,
--suite full), for bench/scripts/fit_heuristic.py --features.

    python3 bench/scripts/spmm_features.py --data /work/shared/data/matrices -o features.csv

Each matrix is built the way bench_suite.cpp builds it:
- lap7pt_128^3, lap27pt_100^3: the same natural ordering (x fastest) and the
  same stencil neighbours as io/generators.cpp, so exactly the same pattern.
- uniform_*, rows16k_x2048: the same row lengths; columns distinct, uniform in
  [0, cols) but drawn by numpy instead of the per-row mt19937_64 streams. The
  features are sums of per-row / per-row-group shape statistics over 10^6+
  rows, so another draw of the same distribution moves them by well under 1%.
- powerlaw_2M_mean8: the same row lengths exactly (the same splitmix mix and
  Pareto floor, hubs included), columns as above.
- dense_RxC: exactly the same pattern (every row holds columns 0..C-1).
- <name>_blockdiag: the .mtx.gz read as io::read_matrix_market reads it
  (symmetric files expanded, duplicates summed, pattern kept) and replicated
  block-diagonally exactly as replicate_block_diagonal (copies = ceil(10M /
  nnz)). Block diagonal copies keep every row's column offsets from its own
  row (copy c shifts both row and column by c * block size, the blocks are
  square), so per-row statistics are those of the block; only row groups that
  straddle two copies differ, and the features are computed on the replicated
  matrix itself, so even those are as measured.

Features (all integer arithmetic, what the device reduction computes; see
spmm/cuda/row_locality.cuh for the one adopted):
  band        mean |col - row| over the nonzeros
  near64      fraction of nonzeros with |col - row| < 64
  near1k      fraction with |col - row| < 1024
  spread8     mean over non-empty aligned groups of 8 rows of (max col - min col + 1)
  spread32    the same over groups of 32 rows
  distinct32  distinct columns per aligned group of 32 rows, summed, / nnz
              (1 = no B row reused inside a group; 1/32 = dense)
  tiles32     distinct 32-column tiles per group of 32 rows, summed, / nnz
Row-length features (none adopted):
  cv          standard deviation of the row lengths / their mean
  pad4, pad8, pad32
              sum over aligned groups of g rows of (g * longest - nonzeros), / nnz:
              the lanes a warp of g one-lane rows would leave idle
  long2, long4
              share of the nonzeros in rows longer than 2x / 4x the mean
"""
import argparse
import csv
import gzip
import os
import sys

import numpy as np

M64 = (1 << 64) - 1


def splitmix_mix(x):
    """bench_suite.cpp mix() on a numpy uint64 array."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def mix1(x):
    return int(splitmix_mix(np.array([x & M64], dtype=np.uint64))[0])


def csr_from_lengths_random(lengths, cols, rng):
    lengths = np.minimum(np.asarray(lengths, dtype=np.int64), cols)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    colidx = np.empty(offsets[-1], dtype=np.int64)
    # Short rows (the bulk): draw, then redraw rows with duplicates.
    short = lengths * 3 <= cols
    for L in np.unique(lengths[short]):
        rows = np.nonzero(short & (lengths == L))[0]
        if L == 0:
            continue
        block = rng.integers(0, cols, size=(len(rows), L))
        block.sort(axis=1)
        dup = np.nonzero((np.diff(block, axis=1) == 0).any(axis=1))[0] if L > 1 else []
        for d in dup:  # as bench_suite.cpp: keep the distinct ones, draw again
            row = np.unique(block[d])
            while len(row) < L:
                row = np.unique(np.concatenate([row, rng.integers(0, cols, size=L - len(row))]))
            block[d] = row
        idx = offsets[rows][:, None] + np.arange(L)[None, :]
        colidx[idx] = block
    for i in np.nonzero(~short)[0]:
        colidx[offsets[i]:offsets[i + 1]] = np.sort(rng.choice(cols, size=lengths[i], replace=False))
    return offsets, colidx, cols


def laplacian(n, stencil):
    idx = np.arange(n ** 3, dtype=np.int64)
    x, y, z = idx % n, (idx // n) % n, idx // (n * n)
    plane = n * n
    if stencil == 27:
        offs = [(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    else:
        offs = [(-1, 0, 0), (0, -1, 0), (0, 0, -1), (0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0)]
    cols, valid = [], []
    for dz, dy, dx in offs:
        ok = (x + dx >= 0) & (x + dx < n) & (y + dy >= 0) & (y + dy < n) & (z + dz >= 0) & (z + dz < n)
        cols.append(idx + dz * plane + dy * n + dx)
        valid.append(ok)
    cols, valid = np.stack(cols, 1), np.stack(valid, 1)  # ascending per row (z-major)
    lengths = valid.sum(1)
    offsets = np.zeros(n ** 3 + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets, cols[valid], n ** 3


def power_law_lengths(rows, mean, longest, seed):
    scale = (mean + 0.5) / 2.0
    i = np.arange(rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        u = ((splitmix_mix(np.uint64(seed) + i) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
    lengths = np.minimum(longest, np.floor(scale / np.sqrt(u)).astype(np.int64))
    for h in range(min(4, rows)):
        lengths[mix1(seed * 31 + h) % rows] = longest >> h
    return lengths


def dense(rows, cols):
    offsets = np.arange(rows + 1, dtype=np.int64) * cols
    return offsets, np.tile(np.arange(cols, dtype=np.int64), rows), cols


def read_mtx(path):
    with gzip.open(path, "rt") as f:
        header = f.readline().split()
        symmetric = header[4].lower() == "symmetric"
        pattern = header[3].lower() == "pattern"
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows, cols, entries = map(int, line.split())
        data = np.loadtxt(f, usecols=(0, 1), dtype=np.int64, ndmin=2) if entries else np.zeros((0, 2), np.int64)
    del pattern
    r, c = data[:, 0] - 1, data[:, 1] - 1
    if symmetric:
        off = r != c
        r, c = np.concatenate([r, c[off]]), np.concatenate([c, r[off]])
    key = np.unique(r * cols + c)  # sorted rows, sorted columns, duplicates summed
    r, c = key // cols, key % cols
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=rows), out=offsets[1:])
    return offsets, c, rows, cols


def replicate(offsets, colidx, rows, cols, min_nnz=10_000_000):
    nnz = len(colidx)
    copies = max(1, -(-min_nnz // max(1, nnz)))
    c = np.arange(copies, dtype=np.int64)
    off = (offsets[:-1][None, :] + c[:, None] * nnz).ravel()
    off = np.append(off, copies * nnz)
    col = (colidx[None, :] + c[:, None] * cols).ravel()
    return off, col, cols * copies


def features(offsets, colidx):
    rows = len(offsets) - 1
    nnz = len(colidx)
    lengths = np.diff(offsets)
    row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
    dist = np.abs(colidx - row)
    f = {"band": float(dist.sum()) / nnz,
         "near64": float((dist < 64).sum()) / nnz,
         "near1k": float((dist < 1024).sum()) / nnz}
    for g in (8, 32):
        # columns are sorted within a row: a row's first and last column
        first = np.where(lengths > 0, colidx[np.minimum(offsets[:-1], nnz - 1)], 1 << 62)
        last = np.where(lengths > 0, colidx[np.maximum(offsets[1:] - 1, 0)], -1)
        starts = np.arange(0, rows, g)
        mn = np.minimum.reduceat(first, starts)
        mx = np.maximum.reduceat(last, starts)
        ne = mx >= 0
        f[f"spread{g}"] = float((mx[ne] - mn[ne] + 1).sum()) / max(1, int(ne.sum()))
    gid = row // 32
    ncols = int(colidx.max()) + 1 if nnz else 1
    f["distinct32"] = len(np.unique(gid * ncols + colidx)) / nnz
    f["tiles32"] = len(np.unique(gid * (ncols // 32 + 1) + colidx // 32)) / nnz
    f["cv"] = float(lengths.std() / max(lengths.mean(), 1e-300))
    for g in (4, 8, 32):
        whole = (rows // g) * g
        grouped = lengths[:whole].reshape(-1, g)
        f[f"pad{g}"] = float((grouped.max(1) * g - grouped.sum(1)).sum()) / nnz
    mean = nnz / rows
    for m in (2, 4):
        f[f"long{m}"] = float(lengths[lengths > m * mean].sum()) / nnz
    f["rows"], f["nnz"] = rows, nnz
    f["max"] = int(lengths.max())
    return f


def synthetic():
    rng = np.random.default_rng(12345)
    yield "lap7pt_128^3", lambda: laplacian(128, 7)[:2]
    yield "lap27pt_100^3", lambda: laplacian(100, 27)[:2]
    yield "uniform_2M_x4", lambda: csr_from_lengths_random(np.full(2 << 20, 4), 2 << 20, rng)[:2]
    yield "uniform_1M_x32", lambda: csr_from_lengths_random(np.full(1 << 20, 32), 1 << 20, rng)[:2]
    yield "powerlaw_2M_mean8", lambda: csr_from_lengths_random(power_law_lengths(2 << 20, 8.0, 100000, 3),
                                                              2 << 20, rng)[:2]
    yield "rows16k_x2048", lambda: csr_from_lengths_random(np.full(16 << 10, 2048), 16 << 10, rng)[:2]
    nnz = 16 << 20
    rows = 2
    while rows <= nnz // 2:
        cols = nnz // rows
        human = lambda x: f"{x >> 20}M" if x >= 1 << 20 and x % (1 << 20) == 0 else (
            f"{x >> 10}k" if x >= 1 << 10 and x % (1 << 10) == 0 else str(x))
        yield f"dense_{human(rows)}x{human(cols)}", (lambda r=rows, c=cols: dense(r, c)[:2])
        rows *= 4


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="/work/shared/data/matrices")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--only", help="comma-separated matrix names (debugging)")
    args = p.parse_args()
    specs = list(synthetic())
    for file in sorted(os.listdir(args.data)):
        if file.endswith(".mtx.gz"):
            path = os.path.join(args.data, file)
            specs.append((file[:-7] + "_blockdiag",
                          lambda path=path: replicate(*read_mtx(path))[:2]))
    keys = ["band", "near64", "near1k", "spread8", "spread32", "distinct32", "tiles32",
            "cv", "pad4", "pad8", "pad32", "long2", "long4"]
    with open(args.output, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["matrix", "rows", "nnz", "max"] + keys)
        for name, build in specs:
            if args.only and name not in args.only.split(","):
                continue
            offsets, colidx = build()
            f = features(np.asarray(offsets, np.int64), np.asarray(colidx, np.int64))
            w.writerow([name, f["rows"], f["nnz"], f["max"]] + [f"{f[k]:.6g}" for k in keys])
            out.flush()
            print(name, f["rows"], f["nnz"], " ".join(f"{k}={f[k]:.4g}" for k in keys), file=sys.stderr)


if __name__ == "__main__":
    main()
