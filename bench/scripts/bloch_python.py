"""blockeigs.lobpcg from Python on the complex twisted (Bloch) Laplacian given as a CuPy matrix: the 16 smallest
pairs of the periodic 7-point Laplacian on an N^3 grid with phases (0.9, 1.7, 2.3) (bench/configs/eigs-bloch-128.yaml's
problem), complex128, relative residual TOL. The matrix is built with SciPy, moved to the GPU once (not timed as the
call), and taken there in place. Prints the call's phases, the eigenvalues' largest relative error against the closed
form and the largest relative residual (recomputed on the GPU).
Usage: [mpirun -np P] python bench/scripts/bloch_python.py N TOL"""
import sys
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np
import scipy.sparse as sp

import blockeigs

n, tol, k = int(sys.argv[1]), float(sys.argv[2]), 16
phases = (0.9, 1.7, 2.3)


def ring(t):
    """The periodic 1-D operator with phase t spread over its n links: 2 I - S - S^H (the generator's matrix)."""
    rows = np.arange(n)
    S = sp.csr_matrix((np.full(n, np.exp(1j * t / n)), (rows, (rows + 1) % n)), shape=(n, n))
    return (2 * sp.identity(n, dtype=complex, format="csr") - S - S.conj().T).tocsr()


I = sp.identity(n, dtype=complex, format="csr")
A = (sp.kron(sp.kron(I, I), ring(phases[0])) + sp.kron(sp.kron(I, ring(phases[1])), I) +
     sp.kron(sp.kron(ring(phases[2]), I), I)).tocsr()
A.sort_indices()
f = [2 - 2 * np.cos((2 * np.pi * np.arange(n) + t) / n) for t in phases]
exact = np.sort((f[0][:, None, None] + f[1][None, :, None] + f[2][None, None, :]).ravel())[:k]
Ad = csp.csr_matrix(A)
cp.cuda.Device().synchronize()
start = time.perf_counter()
w, V, info = blockeigs.lobpcg(Ad, k, tol=tol, seed=1, return_info=True)
cp.cuda.Device().synchronize()
call = time.perf_counter() - start
residual = "the library's only (rows on several ranks)"
if tuple(info["rows"]) == (0, A.shape[0]):  # one rank: every row here, the residual recomputed on the GPU
    wd = cp.asarray(w)
    residual = f"{float(cp.max(cp.linalg.norm(Ad @ V - V * wd, axis=0) / cp.abs(wd))):.2e} recomputed"
t = info["timings"]
errors = np.abs(w - exact) / exact
print(f"blockeigs.lobpcg {n}^3 Bloch complex128 (CuPy input), k {k}, tol {tol:g}: call {call:.3f} s "
      f"(input {t['input']:.3f}, distribution {t['distribution']:.3f}, set-up {t['setup']:.3f}, "
      f"solve {t['solve']:.3f}, output {t['output']:.3f}); method {info['method']}; {info['distribution']}; "
      f"{info['iterations']} iterations, stop {info['stop']}; eigenvalues' largest relative error "
      f"{errors.max():.2e}; largest relative residual {info['relative_residuals'].max():.2e} (library), {residual}")
