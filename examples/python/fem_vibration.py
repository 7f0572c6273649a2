"""Vibration modes of a membrane: the FEM pencil K x = lambda M x on the unit square by blockeigs.lobpcg.

    PYTHONPATH=build/cpu/python /usr/bin/python3 examples/python/fem_vibration.py [n]

Bilinear (Q1) elements on an n x n grid of interior nodes: K = K1 x M1 + M1 x K1 and M = M1 x M1 (Kronecker
products of the 1D stiffness K1 and mass M1), so each eigenvalue is a sum of two of the 1D pencil's, which
have the closed form 6 / h^2 (1 - cos t) / (2 + cos t), t = pi j h. They approach the membrane's
pi^2 (i^2 + j^2) as h shrinks.
"""
import sys

import numpy as np
import scipy.sparse as sp

import blockeigs

n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
h = 1.0 / (n + 1)
ones = np.ones(n)
K1 = sp.diags([-ones[1:], 2 * ones, -ones[1:]], [-1, 0, 1]) / h
M1 = sp.diags([ones[1:], 4 * ones, ones[1:]], [-1, 0, 1]) * (h / 6)
K = (sp.kron(K1, M1) + sp.kron(M1, K1)).tocsr()
M = sp.kron(M1, M1).tocsr()

k = 6
w, V, info = blockeigs.lobpcg(K, k, B=M, M="chebyshev", tol=1e-9, return_info=True, gather=True)
t = np.pi * np.arange(1, n + 1) * h
one_d = 6 / h**2 * (1 - np.cos(t)) / (2 + np.cos(t))
exact = np.sort(np.add.outer(one_d, one_d).ravel())[:k]
membrane = np.sort(np.pi**2 * np.add.outer(np.arange(1, 5)**2, np.arange(1, 5)**2).ravel())[:k]
print(f"{K.shape[0]} unknowns, {info['iterations']} iterations, solve {info['timings']['solve']:.2f} s")
for j in range(k):
    print(f"mode {j}: lambda = {w[j]:.8f}  (discrete {exact[j]:.8f}, membrane {membrane[j]:.4f})")
print("M-orthonormal modes:", np.allclose(V.T @ (M @ V), np.eye(k), atol=1e-8))
