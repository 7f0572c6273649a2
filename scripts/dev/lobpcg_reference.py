#!/usr/bin/env python3
"""How many iterations textbook LOBPCG needs on the 128^3 comparison's problem, pair by pair.

usage: lobpcg_reference.py [grid n] [block size] [seed] [lock 0|1]

The 7-point Laplacian on an n^3 grid (Dirichlet, 6 on the diagonal, as
block-eigs' generator), the k = 16 smallest pairs, relative residual 1e-5, in
numpy only: every step orthonormalises [X W P] (SVQB twice, dropping dependent
directions) and solves the standard Rayleigh-Ritz problem; P is the new X's
part outside the old X; converged columns get no W or P (lock = 1).

Prints the iterations and, per pair, the first iteration that met the test.
block-eigs' own history (HDF5 /history) gives the same pattern at the same
sizes, so the iteration count on this spectrum is LOBPCG's, not our
implementation's (docs/benchmarks/solvers.md).
The grid's clusters do not depend on n (eigenvalues ~ i^2 + j^2 + k^2), so a
32^3 grid (~10 s) shows what 128^3 does at about 5x the iterations.
"""
import sys

import numpy as np


def laplacian_apply(n):
    def apply(x):
        m = x.shape[1]
        g = x.reshape(n, n, n, m)
        y = 6 * g
        for axis in range(3):
            lo = [slice(None)] * 4
            hi = [slice(None)] * 4
            lo[axis], hi[axis] = slice(1, None), slice(None, -1)
            y[tuple(lo)] -= g[tuple(hi)]
            y[tuple(hi)] -= g[tuple(lo)]
        return y.reshape(n ** 3, m)

    return apply


def orthonormalised(s):
    for _ in range(2):
        d = np.sqrt(np.einsum("ij,ij->j", s, s))
        g = (s.T @ s) / np.outer(d, d)
        w, v = np.linalg.eigh(g)
        keep = w > 1e-14 * w.max()
        s = (s / d) @ (v[:, keep] / np.sqrt(w[keep]))
    return s


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    block = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    lock = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    k, tol = 16, 1e-5
    apply = laplacian_apply(n)
    x = orthonormalised(np.random.default_rng(seed).standard_normal((n ** 3, block)))
    ax = apply(x)
    _, v = np.linalg.eigh(x.T @ ax)
    x, ax, p = x @ v, ax @ v, None
    converged_at = [-1] * k
    for it in range(5000):
        theta = np.einsum("ij,ij->j", x, ax)
        r = ax - x * theta
        relative = np.linalg.norm(r, axis=0) / np.abs(theta)
        for j in range(k):
            if converged_at[j] < 0 and relative[j] <= tol:
                converged_at[j] = it
        if min(converged_at) >= 0:
            break
        active = [j for j in range(block) if not (lock and relative[j] <= tol)]
        blocks = [x, r[:, active]] + ([p] if p is not None else [])
        s = orthonormalised(np.hstack(blocks))
        a_s = apply(s)
        _, c = np.linalg.eigh((s.T @ a_s + a_s.T @ s) / 2)
        x_next, ax_next = s @ c[:, :block], a_s @ c[:, :block]
        p_next = x_next - x @ (x.T @ x_next)
        p = orthonormalised(p_next[:, active] if lock else p_next)
        x, ax = x_next, ax_next
    print(f"grid {n}^3, block {block}, seed {seed}, lock {lock}: {it} iterations;",
          "per pair:", " ".join(map(str, converged_at)))


if __name__ == "__main__":
    main()
