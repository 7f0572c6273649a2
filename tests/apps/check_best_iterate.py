#!/usr/bin/env python3
"""check_best_iterate.py RESULT.h5 MAX_ITERATIONS

Checks a block-eigs result file of a run that stopped unconverged: the pairs
returned are no worse than the best iterate its history records (the
geometric mean of the pairs' residuals, within 10% for the explicit
recompute), and the run
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
    means = np.exp(np.log(history).mean(axis=1))
    best, returned = means.min(), np.exp(np.log(final).mean())
    print(f"iterations {iterations}, best mean residual {best:.3e} at iteration "
          f"{means.argmin()}, returned {returned:.3e}, restored {restored:g}")
    if not returned <= 1.1 * best:
        sys.exit("the pairs returned are worse than the best iterate")
    if not iterations < limit / 2:
        sys.exit(f"{iterations} iterations: not well before the limit {limit}")
    print("best iterate ok")


if __name__ == "__main__":
    main()
