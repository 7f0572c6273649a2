#!/usr/bin/env python3
"""check_best_iterate.py RESULT.h5 MAX_ITERATIONS

Checks a block-eigs result file of a run that stopped unconverged: the pairs
returned are no worse than the best iterate its history records (largest
residual over the pairs, within 10% for the explicit recompute), and the run
stopped well before MAX_ITERATIONS. Prints 'best iterate ok' and exits 0."""
import sys

import h5py
import numpy as np


def main():
    path, limit = sys.argv[1], int(sys.argv[2])
    with h5py.File(path, "r") as f:
        history = f["/history/residual_norms"][:]
        final = f["/residual_norms"][:]
        iterations = int(f["/iterations"][0])
        restored = float(f.attrs["best_iterate_restored"])
    best = history.max(axis=1).min()
    print(f"iterations {iterations}, best largest residual {best:.3e} at iteration "
          f"{history.max(axis=1).argmin()}, returned {final.max():.3e}, restored {restored:g}")
    if not final.max() <= 1.1 * best:
        sys.exit("the pairs returned are worse than the best iterate")
    if not iterations < limit / 2:
        sys.exit(f"{iterations} iterations: not well before the limit {limit}")
    print("best iterate ok")


if __name__ == "__main__":
    main()
