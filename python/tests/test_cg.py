"""blockeigs.cg against scipy.sparse.linalg.spsolve."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from conftest import laplacian_2d, suitesparse

import blockeigs


@pytest.mark.parametrize("M", [None, "jacobi", "chebyshev"])
def test_many_right_hand_sides(comm, M):
    A = laplacian_2d(13, 9)
    n = A.shape[0]
    B = np.random.default_rng(3).standard_normal((n, 4))
    X, info = blockeigs.cg(A, B, M=M, rtol=1e-10, comm=comm, return_info=True, gather=True)
    np.testing.assert_allclose(X, spla.spsolve(A.tocsc(), B), rtol=1e-7, atol=1e-9)
    assert info["converged"].all() and info["stop"] == "converged"
    assert np.all(info["relative_residuals"] <= 1e-9)
    assert info["history"].shape[1] == 4


def test_one_vector_and_start(comm):
    A = suitesparse("bcsstk06")
    n = A.shape[0]
    b = np.arange(n, dtype=float) / n
    x = blockeigs.cg(A, b, M="jacobi", rtol=1e-10, maxiter=20000, comm=comm, gather=True)
    assert x.shape == (n,)
    exact = spla.spsolve(A.tocsc(), b)
    np.testing.assert_allclose(x, exact, rtol=1e-6, atol=1e-8 * np.abs(exact).max())
    x2, info = blockeigs.cg(A, b, X0=exact, M="jacobi", rtol=1e-10, comm=comm, return_info=True, gather=True)
    assert info["total_iterations"] <= 2


def test_local_rows_in_and_out(comm):
    """Right-hand sides given as this rank's rows come back as this rank's rows."""
    A = laplacian_2d(10, 10)
    n = A.shape[0]
    B = np.random.default_rng(5).standard_normal((n, 2))
    _, info = blockeigs.cg(A, B, comm=comm, return_info=True)
    begin, end = info["rows"]
    X = blockeigs.cg(A, B[begin:end], rtol=1e-10, comm=comm)
    assert X.shape == (end - begin, 2)
    np.testing.assert_allclose(X, spla.spsolve(A.tocsc(), B)[begin:end], rtol=1e-7, atol=1e-9)


def test_not_converged(comm):
    A = laplacian_2d(20, 20)
    B = np.ones((400, 1))
    with pytest.raises(blockeigs.NotConvergedError):
        blockeigs.cg(A, B, rtol=1e-12, maxiter=2, comm=comm, strict=True)
