"""CuPy's cg on the complex twisted (Bloch) Laplacian: COLUMNS random complex right-hand sides solved one after
another (cupyx.scipy.sparse.linalg.cg takes one), each to ||b - A x|| <= TOL ||b||, on the periodic 7-point Laplacian
of an N^3 grid with phases (0.9, 1.7, 2.3) (bench/configs/cg-bloch-128.yaml's problem); prints the time and the largest
relative residual. Usage: python bench/scripts/bloch_cg_cupy.py N TOL COLUMNS"""
import sys
import time

import cupy as cp
import cupyx.scipy.sparse as csp
import numpy as np
import scipy.sparse as sp
from cupyx.scipy.sparse.linalg import cg

n, tol, columns = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])


def ring(t):
    rows = np.arange(n)
    S = sp.csr_matrix((np.full(n, np.exp(1j * t / n)), (rows, (rows + 1) % n)), shape=(n, n))
    return (2 * sp.identity(n, dtype=complex, format="csr") - S - S.conj().T).tocsr()


I = sp.identity(n, dtype=complex, format="csr")
A = csp.csr_matrix((sp.kron(sp.kron(I, I), ring(0.9)) + sp.kron(sp.kron(I, ring(1.7)), I) +
                    sp.kron(sp.kron(ring(2.3), I), I)).tocsr())
rng = np.random.default_rng(1)
B = cp.asarray(rng.standard_normal((n**3, columns)) + 1j * rng.standard_normal((n**3, columns)))
cp.cuda.Device().synchronize()
start = time.perf_counter()
X = cp.empty_like(B)
for j in range(columns):
    X[:, j], info = cg(A, B[:, j], rtol=tol, maxiter=20000)  # CuPy 14 (tol before 13)
cp.cuda.Device().synchronize()
seconds = time.perf_counter() - start
rel = float(cp.max(cp.linalg.norm(A @ X - B, axis=0) / cp.linalg.norm(B, axis=0)))
print(f"cupy cg {n}^3 Bloch complex128, {columns} right-hand sides one by one, tol {tol:g}: {seconds:.2f} s, "
      f"largest relative residual {rel:.2e}")
