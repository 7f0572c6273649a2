#!/usr/bin/env python3
"""check_pencil.py RESULT.h5 fem_p1 DIMS NX [NY [NZ]] --which END --k K --tolerance TOL [--skip J] [--constraints FILE:DATASET]
check_pencil.py RESULT.h5 graph path|cycle N --k K --tolerance TOL [--skip J] [--constraints FILE:DATASET]
check_pencil.py RESULT.h5 twisted NX NY NZ --phase TX TY TZ [--b-phase BX BY BZ | --b-fem-mass] --k K ...

Checks a block-eigs result file against closed forms, with the matrices
built here from their definitions (numpy), independently of block-eigs:

fem_p1: K x = lambda M x on the unit interval, square or cube, n interior
  nodes per direction, h = 1/(n + 1): K and M the tensor products of the 1D
  K = (1/h) tridiag(-1, 2, -1) and M = (h/6) tridiag(1, 4, 1) (K2 = K (x) M +
  M (x) K, M2 = M (x) M; 3D likewise), the eigenvalues sums of the 1D
  (6/h^2) (1 - cos(j pi h)) / (2 + cos(j pi h)).
graph: L = D - A of a path or a cycle of N vertices with the constant vector
  as a constraint: the eigenvalues 2 - 2 cos(pi j / N) (path) or
  2 - 2 cos(2 pi j / N) (cycle) from j = 1; the constant vector is orthogonal
  to every eigenvector (|1^T x| / (sqrt(N) ||x||) <= 1e-10), so 0 is never
  among them.
twisted: the complex Hermitian twisted (Bloch) Laplacian of an NX x NY x NZ
  periodic grid with phases TX TY TZ (links -exp(i t_d / n_d) to the upper
  neighbour, their conjugates to the lower); B the identity, another twisted
  Laplacian (--b-phase: positive definite where no phase is a multiple of
  2 pi) or the 3D P1 mass matrix of the same grid (--b-fem-mass, real); the
  eigenvalues from the dense Hermitian-definite problem (numpy: Cholesky of B,
  then eigvalsh), transposes conjugate throughout.

Both: the K wanted eigenvalues of the END (--skip J: after the J there
constrained away) to 1e-8 relative; the eigenvectors B-orthonormal
(X^T B X = I to 1e-10, B = M or I); residuals ||A x - lambda B x|| /
(|lambda| ||B x||), recomputed here, at most the tolerance (plus rounding);
the file's attributes name the problem. --constraints: every eigenvector is
B-orthogonal to that block's columns (to 1e-10, columns B-normalised).
Prints "pencil ok", or each problem and exits 1.
"""
import argparse
import sys

import h5py
import numpy as np


def attribute(f, name):
    if name not in f.attrs:
        return None
    value = f.attrs[name]
    return value.decode() if isinstance(value, bytes) else value


def tridiagonal(n, diagonal, off):
    return np.diag(np.full(n, diagonal)) + np.diag(np.full(n - 1, off), 1) + np.diag(np.full(n - 1, off), -1)


def fem_pencil(sizes):
    """K, M and all eigenvalues of the pencil; x numbered fastest (innermost Kronecker factor)."""
    stiffness, mass, values = [], [], np.zeros(1)
    for n in sizes:
        h = 1.0 / (n + 1)
        stiffness.append(tridiagonal(n, 2.0 / h, -1.0 / h))
        mass.append(tridiagonal(n, 4.0 * h / 6.0, h / 6.0))
        t = np.pi * np.arange(1, n + 1) * h
        one = 6.0 * (1.0 - np.cos(t)) / (h * h * (2.0 + np.cos(t)))
        values = (values[:, None] + one[None, :]).ravel()
    # kron with the last direction outermost: index x + nx (y + ny z).
    K = np.zeros((1, 1))
    M = np.ones((1, 1))
    for d in range(len(sizes)):
        K = np.kron(stiffness[d], M) + np.kron(mass[d], K) if d > 0 else stiffness[0]
        M = np.kron(mass[d], M) if d > 0 else mass[0]
    return K, M, np.sort(values)


def graph_laplacian(kind, n):
    A = np.zeros((n, n))
    for i in range(n - 1):
        A[i, i + 1] = A[i + 1, i] = 1
    if kind == "cycle":
        A[0, n - 1] = A[n - 1, 0] = 1
    L = np.diag(A.sum(axis=1)) - A
    step = (2.0 if kind == "cycle" else 1.0) * np.pi / n
    values = np.sort(4.0 * np.sin(0.5 * step * np.arange(n)) ** 2)
    return L, values


def twisted_laplacian(sizes, phases):
    """The periodic grid's Laplacian with Bloch phases, x numbered fastest (io/generators/twisted_laplacian)."""
    nx, ny, nz = sizes
    n = nx * ny * nz
    A = np.zeros((n, n), dtype=complex)
    strides = [1, nx, nx * ny]
    for i in range(n):
        A[i, i] += 6
        for d in range(3):
            at = i // strides[d] % sizes[d]
            up = i - at * strides[d] if at + 1 == sizes[d] else i + strides[d]
            down = i + (sizes[d] - 1) * strides[d] if at == 0 else i - strides[d]
            link = -np.exp(1j * phases[d] / sizes[d])
            A[i, up] += link
            A[i, down] += np.conj(link)
    return A


def pencil_eigenvalues(A, B):
    """All eigenvalues of the Hermitian-definite pencil, ascending."""
    Linv = np.linalg.inv(np.linalg.cholesky(B))
    return np.linalg.eigvalsh(Linv @ A @ Linv.conj().T)


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("result")
    p.add_argument("family", choices=["fem_p1", "graph", "twisted"])
    p.add_argument("shape", nargs="+")
    p.add_argument("--which", choices=["smallest", "largest"], default="smallest")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--tolerance", type=float, required=True)
    p.add_argument("--skip", type=int, default=0)
    p.add_argument("--constraints")
    p.add_argument("--phase", type=float, nargs=3)
    p.add_argument("--b-phase", type=float, nargs=3)
    p.add_argument("--b-fem-mass", action="store_true")
    a = p.parse_args()

    problems = []
    f = h5py.File(a.result, "r")
    if a.family == "fem_p1":
        dims = int(a.shape[0])
        sizes = [int(s) for s in a.shape[1:1 + dims]]
        A, B, exact = fem_pencil(sizes)
        generalized = True
    elif a.family == "twisted":
        sizes = [int(s) for s in a.shape[:3]]
        A = twisted_laplacian(sizes, a.phase)
        generalized = a.b_phase is not None or a.b_fem_mass
        if a.b_phase is not None:
            B = twisted_laplacian(sizes, a.b_phase)
        elif a.b_fem_mass:
            B = fem_pencil(sizes)[1]
        else:
            B = np.eye(A.shape[0])
        exact = pencil_eigenvalues(A, B)
    else:
        A, exact = graph_laplacian(a.shape[0], int(a.shape[1]))
        B = np.eye(A.shape[0])
        exact = exact[1:]  # the constant vector's 0 is constrained away
        generalized = False
    if a.which == "largest":
        exact = exact[::-1]
    wanted = exact[a.skip:a.skip + a.k]

    values = f["eigenvalues"][:]
    X = f["eigenvectors"][:].reshape(A.shape[0], -1)
    if len(values) != a.k or X.shape[1] != a.k:
        problems.append(f"{len(values)} eigenvalues and {X.shape[1]} eigenvectors, expected {a.k}")
    else:
        error = np.abs(values - wanted) / np.abs(wanted)
        if not np.all(error <= 1e-8):
            worst = int(np.argmax(error))
            problems.append(f"eigenvalue {worst} is {values[worst]:.15e}, the closed form {wanted[worst]:.15e} "
                            f"(relative error {error[worst]:.2e} > 1e-8)")
        gram = X.conj().T @ B @ X
        off = float(np.max(np.abs(gram - np.eye(a.k))))
        if not off <= 1e-10:
            problems.append(f"X^H B X differs from I by {off:.2e} (> 1e-10)")
        R = A @ X - (B @ X) * values[None, :]
        relative = np.linalg.norm(R, axis=0) / (np.abs(values) * np.linalg.norm(B @ X, axis=0))
        slack = 1.01 * a.tolerance + 64 * np.finfo(float).eps * np.linalg.norm(A, 2) / np.min(np.abs(values))
        if not np.all(relative <= slack):
            problems.append(f"relative residuals up to {np.max(relative):.2e}, above the tolerance {a.tolerance:g}")
        if a.family == "graph":
            ones = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
            along = np.abs(ones @ X) / np.linalg.norm(X, axis=0)
            if not np.all(along <= 1e-10):
                problems.append(f"an eigenvector has a component {np.max(along):.2e} along the constant vector")
        if a.constraints:
            file, dataset = a.constraints.rsplit(":", 1)
            with h5py.File(file, "r") as c:
                Y = c[dataset][:].reshape(A.shape[0], -1)
            Y = Y / np.sqrt(np.real(np.einsum("ij,ij->j", Y.conj(), B @ Y)))[None, :]
            along = float(np.max(np.abs(Y.conj().T @ B @ X)))
            if not along <= 1e-10:
                problems.append(f"the eigenvectors are not B-orthogonal to {a.constraints}: |Y^T B X| up to {along:.2e}")

    expected = {"problem": "generalized" if generalized else "standard",
                "eigenvectors": "B-orthonormal" if generalized else "orthonormal"}
    if a.family == "graph":
        expected["constraints"] = "constant"
    for name, value in expected.items():
        if attribute(f, name) != value:
            problems.append(f"attribute {name} is {attribute(f, name)!r}, expected {value!r}")
    if generalized and not attribute(f, "matrix_b"):
        problems.append("no attribute matrix_b")
    if not bool(f.attrs.get("all_converged", False)):
        problems.append("the run did not converge")

    print(f"{a.family} {' '.join(a.shape)}, {a.which} {a.k} (after {a.skip}): eigenvalues "
          f"{', '.join(f'{v:.10g}' for v in values[:4])}{' ...' if len(values) > 4 else ''}")
    for problem in problems:
        print("problem:", problem)
    if not problems:
        print("pencil ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
