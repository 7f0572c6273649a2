#!/usr/bin/env python3
"""check_cg_rhs.py RESULT.h5 MATRIX.h5 RTOL
   check_cg_rhs.py RESULT.h5 --absent

Checks a block-cg result file whose right-hand sides were generated: /B is
there (rows x columns float64, like /X), its column norms are the file's
/rhs_norms, and A X = B to RTOL relative in every column, with A read from
MATRIX.h5 (HDF5 CSR, group /A: indptr, indices, data). With --absent: no /B,
and the attribute rhs says it was not written. Prints 'rhs ok' and exits 0.
"""
import sys

import h5py
import numpy as np


def attribute(f, name):
    value = f.attrs[name]
    return value.decode() if isinstance(value, bytes) else str(value)


def csr_times(path, x):
    with h5py.File(path, "r") as f:
        indptr, indices, data = (f["/A/" + name][:] for name in ("indptr", "indices", "data"))
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    y = np.zeros((len(indptr) - 1, x.shape[1]))
    np.add.at(y, rows, data[:, None] * x[indices])
    return y


def main(args):
    with h5py.File(args[0], "r") as f:
        where = attribute(f, "rhs")
        if args[1] == "--absent":
            if "B" in f or not where.startswith("not written"):
                sys.exit(f"/B written (rhs attribute '{where}') although block_cg.rhs.output is false")
            print("rhs ok: not written")
            return
        if "B" not in f or where != "/B":
            sys.exit(f"no /B in {args[0]} (rhs attribute '{where}')")
        b, x, norms = f["/B"][:], f["/X"][:], f["/rhs_norms"][:]
    problems = []
    if b.dtype != np.float64 or b.shape != x.shape:
        problems.append(f"/B is {b.dtype} {b.shape}, /X is {x.dtype} {x.shape}")
    if not np.allclose(np.linalg.norm(b, axis=0), norms, rtol=1e-12, atol=0):
        problems.append(f"the column norms of /B {np.linalg.norm(b, axis=0)} are not /rhs_norms {norms}")
    residual = np.linalg.norm(csr_times(args[1], x) - b, axis=0) / np.linalg.norm(b, axis=0)
    print("relative residuals ||A X - B|| / ||B|| per column:", " ".join(f"{r:.2e}" for r in residual))
    if not np.all(residual <= float(args[2])):
        problems.append(f"A X differs from B by more than {args[2]}")
    if problems:
        sys.exit("; ".join(problems))
    print("rhs ok")


if __name__ == "__main__":
    main(sys.argv[1:])
