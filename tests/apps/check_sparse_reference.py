#!/usr/bin/env python3
"""check_sparse_reference.py RESULT.h5 MATRIX.mtx.gz --which END --k K --rtol R

Checks a block-eigs result against SciPy's shift-invert ARPACK on the same
Matrix Market file (a sparse LU of A - sigma I; sigma 0 for the smallest end,
the largest eigenvalue's estimate for the largest), independently of
block-eigs: each of the K eigenvalues of END within R relative of the
reference. Prints "reference ok: ..." or the worst pair and exits 1.
"""
import argparse
import sys

import h5py
import numpy as np
import scipy.io
import scipy.sparse.linalg as sla


def reference(a, k, which):
    if which == "smallest":
        w = sla.eigsh(a, k=k, sigma=0.0, which="LM", return_eigenvectors=False, tol=1e-14)
        return np.sort(w)
    w = sla.eigsh(a, k=k, which="LA", return_eigenvectors=False, tol=1e-14)
    return np.sort(w)[::-1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result")
    p.add_argument("matrix")
    p.add_argument("--which", choices=["smallest", "largest"], required=True)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--rtol", type=float, required=True)
    args = p.parse_args()
    a = scipy.io.mmread(args.matrix).tocsc()
    with h5py.File(args.result, "r") as f:
        got = np.asarray(f["/eigenvalues"][:], dtype=float)
    if got.size != args.k:
        print(f"{args.result}: {got.size} eigenvalues, expected {args.k}")
        return 1
    ref = reference(a, args.k, args.which)
    err = np.abs(got - ref) / np.abs(ref)
    j = int(np.argmax(err))
    if err[j] > args.rtol:
        print(f"pair {j}: {got[j]!r} against the reference {ref[j]!r}, relative error {err[j]:.2e} > {args.rtol:g}")
        return 1
    print(f"reference ok: {args.k} {args.which} eigenvalues within {err[j]:.1e} relative (at most {args.rtol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
