"""blockeigs.lobpcg(A, interval=(a, b)): every eigenpair in a window, against the closed form and a dense reference;
an empty window; the window's account in info; the arguments it refuses."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from conftest import laplacian_1d, laplacian_2d, suitesparse

import blockeigs


def laplacian_3d(n):
    one = laplacian_1d(n)
    eye = sp.identity(n)
    return (sp.kron(sp.kron(eye, eye), one) + sp.kron(sp.kron(eye, one), eye) + sp.kron(sp.kron(one, eye), eye)).tocsr()


def laplacian_3d_eigenvalues(n):
    one = 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
    return np.sort((one[:, None, None] + one[None, :, None] + one[None, None, :]).ravel())


def test_window_of_a_cube_laplacian(comm):
    A = laplacian_3d(14)
    exact = laplacian_3d_eigenvalues(14)
    wanted = exact[(exact >= 1.0) & (exact <= 1.5)]
    assert len(wanted) == 46
    w, V, info = blockeigs.lobpcg(A, interval=(1.0, 1.5), tol=1e-9, comm=comm, return_info=True, gather=True)
    np.testing.assert_allclose(w, wanted, rtol=1e-9)  # every value once, with its multiplicity
    residuals = np.linalg.norm(A @ V - V * w, axis=0)
    assert np.all(residuals <= 10 * 1e-9 * np.abs(w))
    np.testing.assert_allclose(V.T @ V, np.eye(len(w)), atol=1e-8)
    window = info["window"]
    assert window["interval"] == (1.0, 1.5) and window["count"] == 46
    assert window["certified"] in (None, 46)  # by inertia where the build has MUMPS
    assert abs(window["expected"][0] - 46) < 23 and window["expected"][1] >= 0
    assert sum(s["found"] for s in window["slices"]) == 46
    assert info["method"].startswith("window") and info["stop"] == "converged"


def test_window_count_by_density_and_two_slices(comm):
    A = laplacian_2d(30, 24)
    exact = np.linalg.eigvalsh(A.toarray())
    a, b = 0.5, 0.9
    wanted = exact[(exact >= a) & (exact <= b)]
    w, V, info = blockeigs.lobpcg(A, interval=[np.float64(a), b], tol=1e-9, count="density", slices=2, comm=comm,
                                  return_info=True)
    np.testing.assert_allclose(w, wanted, rtol=1e-9)
    assert info["window"]["certified"] is None and info["window"]["count_method"].startswith("density")
    assert len(info["window"]["slices"]) == 2
    # Side by side on two groups of ranks where there are two ranks or more (slice_groups: auto), else in turn.
    groups = min(2, comm.size)
    assert info["window"]["slice_groups"] == groups
    assert [s["group"] for s in info["window"]["slices"]] == [0, groups - 1]
    begin, end = info["rows"]
    assert V.shape == (end - begin, len(wanted))


def test_window_of_a_suitesparse_matrix_against_lapack(comm):
    A = suitesparse("nos3")
    exact = scipy.linalg.eigvalsh(A.toarray())
    a, b = exact[99] - 1e-9 * abs(exact[99]), exact[139] + 1e-9 * abs(exact[139])
    w = blockeigs.lobpcg(A, interval=(a, b), tol=1e-9, comm=comm)[0]
    np.testing.assert_allclose(w, exact[99:140], rtol=1e-8)


def test_an_empty_window_returns_no_pairs(comm):
    A = laplacian_1d(200)
    gap = 2 - 2 * np.cos(np.pi * np.array([10, 11]) / 201)
    w, V, info = blockeigs.lobpcg(A, interval=(gap[0] + 1e-6, gap[1] - 1e-6), comm=comm, return_info=True)
    assert len(w) == 0 and V.shape[1] == 0
    assert info["window"]["count"] == 0 and info["stop"] == "converged"


def test_window_refusals(comm):
    A = laplacian_1d(60)
    with pytest.raises(ValueError, match="give k .* or interval"):
        blockeigs.lobpcg(A, comm=comm)
    with pytest.raises(ValueError, match="give k .* or interval"):
        blockeigs.lobpcg(A, 4, interval=(0.1, 0.2), comm=comm)
    with pytest.raises(ValueError, match="interval must be two numbers"):
        blockeigs.lobpcg(A, interval=0.5, comm=comm)
    with pytest.raises(ValueError, match=r"eigensolver.interval must be \[a, b\] with a < b"):
        blockeigs.lobpcg(A, interval=(0.3, 0.1), comm=comm)
    with pytest.raises(ValueError, match="interval is not taken with B"):
        blockeigs.lobpcg(A, interval=(0.1, 0.2), B=sp.identity(60, format="csr"), comm=comm)
    with pytest.raises(ValueError, match="eigensolver.count must be auto, inertia or density"):
        blockeigs.lobpcg(A, interval=(0.1, 0.2), count="exact", comm=comm)
