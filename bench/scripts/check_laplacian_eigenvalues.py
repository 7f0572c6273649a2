#!/usr/bin/env python3
"""Checks a block-eigs result file's eigenvalues against the closed form of the
n x n x n 7-point Laplacian (Dirichlet): every value, in order, with every
multiplicity (no pair missed or repeated).

usage: check_laplacian_eigenvalues.py RESULTS.h5 N [--largest | --interval A B] [--rtol 1e-10]

Prints the largest relative error and the multiplicities compared (the last
cluster may be cut by k, so it is compared as far as k reaches; with
--interval, a window's result, every value in [A, B] and every cluster);
exit 1 where the count differs (a window), an eigenvalue is off by more than
rtol relative or a multiplicity differs. Needs numpy and h5py."""
import argparse
import sys

import h5py
import numpy as np


def every_value(n):
    one = 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
    return (one[:, None, None] + one[None, :, None] + one[None, None, :]).ravel()


def in_window(n, a, b):
    values = every_value(n)
    return np.sort(values[(values >= a) & (values <= b)])


def closed_form(n, k, largest):
    all_values = every_value(n)
    part = np.partition(all_values, len(all_values) - k)[-k:] if largest else np.partition(all_values, k - 1)[:k]
    return np.sort(part)[::-1] if largest else np.sort(part)


def clusters(values, scale):
    """Run lengths of values equal to within 1e-9 of the spectrum's scale."""
    runs, start = [], 0
    for i in range(1, len(values) + 1):
        if i == len(values) or abs(values[i] - values[start]) > 1e-9 * scale:
            runs.append(i - start)
            start = i
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("n", type=int)
    ap.add_argument("--largest", action="store_true")
    ap.add_argument("--interval", type=float, nargs=2, metavar=("A", "B"))
    ap.add_argument("--rtol", type=float, default=1e-10)
    args = ap.parse_args()
    with h5py.File(args.results, "r") as f:
        found = f["eigenvalues"][()]
        converged = f["converged"][()]
    k = len(found)
    if args.interval:
        exact = in_window(args.n, *args.interval)
        print(f"window [{args.interval[0]}, {args.interval[1]}]: {k} pairs found, {len(exact)} in the closed form")
        if k != len(exact):
            print("FAILED")
            return 1
        if k == 0:
            print("ok")
            return 0
    else:
        exact = closed_form(args.n, k, args.largest)
    error = np.abs(found - exact) / np.abs(exact)
    worst = int(np.argmax(error))
    found_runs, exact_runs = clusters(found, 12.0), clusters(exact, 12.0)
    same_runs = found_runs == exact_runs if args.interval else found_runs[:-1] == exact_runs[:-1]
    print(f"{k} pairs, {int(converged.sum())} converged; largest relative error {error[worst]:.2e} "
          f"(pair {worst}: {found[worst]:.15e} vs {exact[worst]:.15e}); "
          f"{len(exact_runs)} distinct values, multiplicities {'equal' if same_runs else 'DIFFERENT'}")
    ok = error[worst] <= args.rtol and same_runs and converged.all()
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
