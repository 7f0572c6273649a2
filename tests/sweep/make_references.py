#!/usr/bin/env python3
"""make_references.py DATA_DIR NAME... > references.tsv

The dense reference eigenvalues of the sweep's matrices (tests/sweep): for
each Matrix Market file DATA_DIR/NAME.mtx.gz, its rows, ||A||_2 and the 8
smallest and 8 largest eigenvalues (largest first), from numpy.linalg.eigvalsh
on the dense matrix, to 17 significant digits.
"""
import gzip
import os
import sys

import numpy as np
import scipy.io

K = 8


def main(data, names):
    print("name\trows\tnorm\tsmallest\tlargest")
    for name in names:
        with gzip.open(os.path.join(data, name + ".mtx.gz"), "rb") as f:
            a = scipy.io.mmread(f).toarray().astype(np.float64)
        values = np.linalg.eigvalsh(a)
        norm = max(abs(values[0]), abs(values[-1]))
        row = lambda v: ",".join(f"{x:.17g}" for x in v)
        print(f"{name}\t{a.shape[0]}\t{norm:.17g}\t{row(values[:K])}\t{row(values[::-1][:K])}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
