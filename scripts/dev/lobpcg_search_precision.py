#!/usr/bin/env python3
"""Does LOBPCG need its residual block in fp64? A numpy model of fp32 storage for Z and A Z.

usage: lobpcg_search_precision.py N^D | MATRIX.mtx[.gz] [smallest|largest] [VARIANTS, e.g. 0,3]

Models block-eigs' device path: X, P and A P carried by implicit updates, A X
held implied as X Theta + Z where Z are the stored residuals (LobpcgTuning::
imply_ax), soft locking, and A X, A P recomputed every 100 steps. Each step
stores the residuals Z and A Z in fp64, both rounded to fp32, or Z alone
rounded to fp32 (the arithmetic stays fp64: A Z is A times the stored Z,
rounded as it is stored where it is stored in fp32). The implied A X then
carries Z's rounding, u32 times the residuals' size, which adds up until A X
is recomputed; the fourth variant also recomputes it once that sum reaches
5% of the smallest active residual (a drift-aware interval).
The projected problems and P are simplified (SVQB of the whole basis, P as
the new X's part outside the old X): the question is only what rounding the
search block to fp32 does to the iteration count and to the attainable
residual. k = 16, block 20, relative residual 1e-5.

Prints the iterations, the largest true relative residual ||A x - theta x|| /
(|theta| ||x||) of the 16 pairs (from an explicit A X) and the extreme Ritz
values, for each variant. N^D takes the Laplacian on an N^D grid
(48^3 is block-eigs' 7-point generator); Matrix Market files are read
without scipy.
"""
import gzip
import sys

import numpy as np


class Laplacian:
    def __init__(self, n, dims):
        self.n, self.dims, self.shape = n, dims, (n ** dims, n ** dims)

    def __matmul__(self, x):
        n, d, m = self.n, self.dims, x.shape[1]
        g = x.reshape((n,) * d + (m,))
        y = 2 * d * g
        for axis in range(d):
            lo, hi = [slice(None)] * (d + 1), [slice(None)] * (d + 1)
            lo[axis], hi[axis] = slice(1, None), slice(None, -1)
            y[tuple(lo)] -= g[tuple(hi)]
            y[tuple(hi)] -= g[tuple(lo)]
        return y.reshape(n ** d, m)


class Csr:
    def __init__(self, rows, cols, values, n):
        order = np.lexsort((cols, rows))
        self.cols, self.values, self.shape = cols[order], values[order], (n, n)
        self.offsets = np.searchsorted(rows[order], np.arange(n + 1))
        self.nonempty = self.offsets[:-1] < self.offsets[1:]

    def __matmul__(self, x):
        y = np.zeros((self.shape[0], x.shape[1]))
        products = self.values[:, None] * x[self.cols]
        y[self.nonempty] = np.add.reduceat(products, self.offsets[:-1][self.nonempty], axis=0)
        return y


def read_matrix_market(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        header = f.readline().lower()
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        n = int(line.split()[0])
        data = np.loadtxt(f, ndmin=2)
    rows, cols = data[:, 0].astype(np.int64) - 1, data[:, 1].astype(np.int64) - 1
    values = np.ones(len(rows)) if "pattern" in header else data[:, 2]
    if "symmetric" in header:
        off = rows != cols
        rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
        values = np.concatenate([values, values[off]])
    return Csr(rows, cols, values, n)


def svqb(gram, drop=1e-14):
    d = 1 / np.sqrt(np.maximum(np.diag(gram), 1e-300))
    m = gram * np.outer(d, d)
    w, v = np.linalg.eigh((m + m.T) / 2)
    keep = w > drop * w.max()
    return (d[:, None] * v[:, keep]) / np.sqrt(w[keep])


def rounded_to_fp32(y):
    return y.astype(np.float32).astype(np.float64)


def lobpcg(A, z_fp32, az_fp32, drift_aware=False, k=16, block=20, tol=1e-5, largest=False, recompute=100,
           max_iterations=5000, seed=1):
    sign = -1 if largest else 1
    store_z = rounded_to_fp32 if z_fp32 else (lambda y: y)
    store_az = rounded_to_fp32 if az_fp32 else (lambda y: y)
    X = np.random.default_rng(seed).standard_normal((A.shape[0], block))
    X = X @ svqb(X.T @ X)
    AX = A @ X
    _, v = np.linalg.eigh(sign * (X.T @ AX))
    X, AX = X @ v, AX @ v
    theta = np.einsum("ij,ij->j", X, AX)
    R = AX - X * theta
    P = AP = None
    converged_at = [-1] * k
    active = list(range(block))
    drift, since, recomputes = 0.0, 0, 0  # the implied A X's rounding since the last recompute
    for it in range(max_iterations):
        since += 1
        drifted = drift_aware and drift > 0.05 * np.linalg.norm(R[:, active], axis=0).min()
        if it and (since >= recompute or drifted):
            since, drift, recomputes = 0, 0.0, recomputes + 1
            AX = A @ X
            AP = A @ P if P is not None else None
            R = AX - X * theta
        relative = np.linalg.norm(R, axis=0) / np.abs(theta)
        for j in range(k):
            if converged_at[j] < 0 and relative[j] <= tol:
                converged_at[j] = it
        if min(converged_at) >= 0:
            break
        Z = store_z(R)
        if z_fp32:
            drift += 2.0 ** -24 * np.linalg.norm(R, axis=0).max()
        AX = X * theta + Z  # implied from the stored residuals
        active = [j for j in range(block) if relative[j] > tol]
        W = Z[:, active]
        AW = store_az(A @ W)
        S = np.hstack([X] + ([P] if P is not None else []) + [W])
        AS = np.hstack([AX] + ([AP] if P is not None else []) + [AW])
        T = svqb(S.T @ S)
        GA = T.T @ (S.T @ AS) @ T
        values, V = np.linalg.eigh(sign * (GA + GA.T) / 2)
        C = T @ V[:, :block]
        Cp = C.copy()
        Cp[:block] = 0
        Pn, APn = (S @ Cp)[:, active], (AS @ Cp)[:, active]
        t = svqb(Pn.T @ Pn)
        P, AP = Pn @ t, APn @ t
        X, AX = S @ C, AS @ C
        theta = sign * values[:block]
        R = AX - X * theta
    AX = A @ X
    theta = np.einsum("ij,ij->j", X, AX) / np.einsum("ij,ij->j", X, X)
    true_relative = np.linalg.norm(AX - X * theta, axis=0) / (np.abs(theta) * np.linalg.norm(X, axis=0))
    return it, recomputes, true_relative[:k], theta[:k]


def main():
    what = sys.argv[1]
    largest = len(sys.argv) > 2 and sys.argv[2] == "largest"
    if "^" in what:
        n, dims = map(int, what.split("^"))
        A = Laplacian(n, dims)
    else:
        A = read_matrix_market(what)
    variants = (("all fp64", False, False, False),
                ("Z and A Z in fp32", True, True, False),
                ("Z in fp32, A Z in fp64", True, False, False),
                ("Z in fp32, A Z in fp64, drift-aware recomputes", True, False, True))
    chosen = [int(v) for v in sys.argv[3].split(",")] if len(sys.argv) > 3 else range(len(variants))
    for name, z_fp32, az_fp32, drift_aware in (variants[v] for v in chosen):
        iterations, recomputes, relative, theta = lobpcg(A, z_fp32, az_fp32, drift_aware, largest=largest)
        print(f"{what} {'largest' if largest else 'smallest'}, {name}: {iterations} iterations "
              f"({recomputes} recomputes), "
              f"max true relative residual {relative.max():.2e}, Ritz values {theta.min():.15e} .. {theta.max():.15e}")


if __name__ == "__main__":
    main()
