"""Graphene's states near the Fermi level: a tight-binding Hamiltonian (complex Hermitian) and a window.

    PYTHONPATH=build/cpu/python /usr/bin/python3 examples/python/graphene.py [L1 L2 [E]]
    mpirun -np 2 ... the same (each rank holds the matrix; the eigenvectors are gathered)

A honeycomb lattice of L1 x L2 unit cells (sites A and B in each), nearest-neighbour hopping t = 1, and twisted
boundaries (a k-point, or a magnetic flux through the torus): crossing the boundary in direction d multiplies by
e^{i theta_d}. Each A site couples to the B sites of its own cell and of the cells at -a1 and -a2. The
Hamiltonian is complex Hermitian, and Bloch's theorem gives its spectrum: +-|1 + e^{-i k1} + e^{-i k2}| with
k_d = (2 pi n_d + theta_d) / L_d. block-eigs finds every state with |E| <= E (the Dirac cones near the Fermi
level) by a window (interval=(-E, E)): the density of states' estimate, then filtered subspace iteration; the
script checks them against the closed form.
"""
import sys

import numpy as np
import scipy.sparse as sp

import blockeigs

L1, L2 = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (36, 36)
E = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
theta = (0.7, 1.9)  # the twist in each direction
t = 1.0


def site(m1, m2, s):
    return 2 * ((m1 % L1) + L1 * (m2 % L2)) + s  # s = 0: A, s = 1: B


rows, cols, values = [], [], []
for m2 in range(L2):
    for m1 in range(L1):
        for d1, d2 in ((0, 0), (-1, 0), (0, -1)):  # A(m) to B(m + delta)
            phase = 1.0
            if m1 + d1 < 0:
                phase *= np.exp(-1j * theta[0])  # the B site across the boundary, seen from this side
            if m2 + d2 < 0:
                phase *= np.exp(-1j * theta[1])
            a, b = site(m1, m2, 0), site(m1 + d1, m2 + d2, 1)
            rows += [a, b]
            cols += [b, a]
            values += [-t * phase, np.conj(-t * phase)]
n = 2 * L1 * L2
H = sp.csr_matrix((np.array(values), (rows, cols)), shape=(n, n))

w, V, info = blockeigs.lobpcg(H, interval=(-E, E), tol=1e-10, gather=True, return_info=True)

k1 = (2 * np.pi * np.arange(L1) + theta[0]) / L1
k2 = (2 * np.pi * np.arange(L2) + theta[1]) / L2
f = np.abs(1 + np.exp(-1j * k1)[:, None] + np.exp(-1j * k2)[None, :]).ravel()
exact = np.sort(np.concatenate([-t * f, t * f]))
exact = exact[np.abs(exact) <= E]
expected, error_bar = info["window"]["expected"]
print(f"{n} sites, {len(w)} states in [-{E}, {E}] (the closed form: {len(exact)}; the density of states "
      f"estimated {expected:.1f} +- {error_bar:.1f}), {info['timings']['solve']:.2f} s")
if len(w) != len(exact):
    sys.exit("a state missed or repeated")
error = np.max(np.abs(w - exact) / np.maximum(np.abs(exact), 1e-300)) if len(w) else 0.0
residual = np.max(np.linalg.norm(H @ V - V * w, axis=0) / np.maximum(np.abs(w), 1e-300)) if len(w) else 0.0
print(f"largest relative error against the closed form {error:.1e}, largest relative residual {residual:.1e}")
sys.exit(0 if error <= 1e-9 else 1)
