"""CuPy's lobpcg on the complex twisted (Bloch) Laplacian: the 16 smallest pairs of the periodic 7-point
Laplacian on an N^3 grid with phases (0.9, 1.7, 2.3), complex double, to a relative residual TOL, at most
MAXITER iterations; prints the time, iterations reached, the largest relative residual and the eigenvalues'
largest relative error against the closed form.
Usage: python bench/scripts/bloch_cupy.py N TOL MAXITER"""
import sys, time
import numpy as np
import scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp
from cupyx.scipy.sparse.linalg import lobpcg

n, tol, maxiter, k = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), 16
phases = (0.9, 1.7, 2.3)


def ring(t):  # the periodic 1D operator with phase t spread over its n links: 2 I - S - S^H
    w = np.exp(1j * t / n)
    S = sp.diags([np.full(n - 1, w)], [1], shape=(n, n), dtype=complex).tolil()
    S[n - 1, 0] = w
    S = S.tocsr()
    return (2 * sp.identity(n, dtype=complex) - S - S.conj().T).tocsr()


I = sp.identity(n, dtype=complex)
A = (sp.kron(sp.kron(I, I), ring(phases[0])) + sp.kron(sp.kron(I, ring(phases[1])), I) +
     sp.kron(sp.kron(ring(phases[2]), I), I)).tocsr()
f = [2 - 2 * np.cos((2 * np.pi * np.arange(n) + t) / n) for t in phases]
exact = np.sort((f[0][:, None, None] + f[1][None, :, None] + f[2][None, None, :]).ravel())[:k]
Ad = csp.csr_matrix(A)
rng = np.random.default_rng(1)
X = cp.asarray(rng.standard_normal((n**3, k)) + 1j * rng.standard_normal((n**3, k)))
cp.cuda.Device().synchronize()
t = time.perf_counter()
w, V, history = lobpcg(Ad, X, largest=False, tol=tol, maxiter=maxiter, retResidualNormsHistory=True)
cp.cuda.Device().synchronize()
seconds = time.perf_counter() - t
w = cp.asnumpy(w)
order = np.argsort(w)
R = Ad @ V - V * cp.asarray(w)
rel = float(cp.max(cp.linalg.norm(R, axis=0) / cp.abs(cp.asarray(w))))
err = np.max(np.abs(w[order] - exact) / exact)
print(f"cupy lobpcg {n}^3 Bloch complex128, k {k}, tol {tol:g}: {seconds:.2f} s, {len(history)} iterations "
      f"(cap {maxiter}), largest relative residual {rel:.2e}, eigenvalues' largest relative error {err:.2e}")
