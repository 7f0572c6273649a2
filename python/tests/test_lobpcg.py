"""blockeigs.lobpcg against closed forms and scipy: standard and generalized problems, constraints, start blocks."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from conftest import laplacian_1d, laplacian_1d_eigenvalues, laplacian_2d, suitesparse

import blockeigs


def check_pairs(A, w, V, tol, B=None):
    """Residuals ||A v - w B v|| <= tol |w| ||B v|| (with some slack) and (B-)orthonormal columns."""
    A = sp.csr_matrix(A)
    BV = V if B is None else B @ V
    R = A @ V - BV * w
    assert np.all(np.linalg.norm(R, axis=0) <= 10 * tol * np.abs(w) * np.linalg.norm(BV, axis=0))
    np.testing.assert_allclose(V.T @ BV, np.eye(len(w)), atol=1e-8)


def test_version():
    assert blockeigs.__version__.count(".") == 2


def test_laplacian_1d_closed_form(comm):
    n, k = 120, 4
    w, V, info = blockeigs.lobpcg(laplacian_1d(n), k, tol=1e-9, comm=comm, return_info=True, gather=True)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)
    assert V.shape == (n, k)
    check_pairs(laplacian_1d(n), w, V, 1e-9)
    assert info["converged"].all() and info["stop"] == "converged"
    assert info["iterations"] > 0 and len(info["history"]["eigenvalues"]) >= info["iterations"]
    assert info["timings"]["solve"] > 0 and info["timings"]["setup"] >= 0


def test_rows_of_each_rank_in_input_numbering(comm):
    n, k = 90, 3
    A = laplacian_1d(n)
    w, V, info = blockeigs.lobpcg(A, k, tol=1e-9, comm=comm, return_info=True)
    begin, end = info["rows"]
    assert V.shape == (end - begin, k)
    pieces = comm.allgather((begin, V))
    assert [p[0] for p in pieces] == sorted(p[0] for p in pieces)
    whole = np.vstack([p[1] for p in pieces])
    check_pairs(A, w, whole, 1e-9)


def test_largest_2d_laplacian_against_eigsh(comm):
    A = laplacian_2d(14, 11)
    w, V = blockeigs.lobpcg(A, 5, which="largest", tol=1e-9, comm=comm, gather=True)
    reference = np.sort(spla.eigsh(A, 5, which="LA")[0])[::-1]
    np.testing.assert_allclose(w, reference, rtol=1e-8)
    check_pairs(A, w, V, 1e-9)


@pytest.mark.parametrize("name, M, which", [("bcsstk06", None, "largest"), ("662_bus", "jacobi", "smallest"),
                                            ("bcsstk06", "chebyshev", "smallest"),
                                            ("bcsstk06", {"type": "chebyshev", "degree": 12, "precision": "fp64"},
                                             "smallest")])
def test_suitesparse_against_eigsh(comm, name, M, which):
    A = suitesparse(name)
    k, tol = 4, 1e-8
    w, V, info = blockeigs.lobpcg(A, k, M=M, which=which, tol=tol, maxiter=3000, comm=comm, return_info=True,
                                  gather=True, strict=True)
    if which == "smallest":
        reference = np.sort(spla.eigsh(A, k, sigma=0, which="LM")[0])
    else:
        reference = np.sort(spla.eigsh(A, k, which="LA")[0])[::-1]
    np.testing.assert_allclose(w, reference, rtol=10 * tol)
    check_pairs(A, w, V, tol)
    if M is not None:
        assert info["preconditioner"].startswith("jacobi" if M == "jacobi" else "chebyshev")


def mass_1d(n):
    """P1 mass matrix of the unit interval with n interior nodes (h = 1 / (n + 1)): tridiag(1, 4, 1) h / 6."""
    h = 1.0 / (n + 1)
    return sp.diags([np.ones(n - 1), 4 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr") * (h / 6)


def test_generalized_pencil(comm):
    n, k = 80, 4
    h = 1.0 / (n + 1)
    K = laplacian_1d(n) / h
    Mass = mass_1d(n)
    w, V = blockeigs.lobpcg(K, k, B=Mass, tol=1e-9, comm=comm, gather=True)
    reference = scipy.linalg.eigh(K.toarray(), Mass.toarray(), eigvals_only=True)[:k]
    np.testing.assert_allclose(w, reference, rtol=1e-8)
    check_pairs(K, w, V, 1e-9, B=Mass)


def path_graph_laplacian(n):
    L = laplacian_1d(n).tolil()
    L[0, 0] = L[n - 1, n - 1] = 1
    return L.tocsr()


@pytest.mark.parametrize("local_rows", [False, True])
def test_constraints(comm, local_rows):
    """The path graph's Laplacian with Y = ones: the smallest eigenvalues after 0, 2 - 2 cos(pi j / n)."""
    n, k = 60, 3
    L = path_graph_laplacian(n)
    Y = np.ones((n, 1))
    if local_rows:  # this rank's rows only: the balanced split of a matrix every rank holds
        _, V0, info = blockeigs.lobpcg(L, 1, Y=Y, comm=comm, return_info=True)
        begin, end = info["rows"]
        Y = Y[begin:end]
    w, V = blockeigs.lobpcg(L, k, Y=Y, tol=1e-9, comm=comm, gather=True)
    np.testing.assert_allclose(w, 2 - 2 * np.cos(np.pi * np.arange(1, k + 1) / n), rtol=1e-8)
    np.testing.assert_allclose(np.ones(n) @ V, 0, atol=1e-8)


def test_start_block(comm):
    n, k = 100, 3
    A = laplacian_1d(n)
    exact = np.linalg.eigh(A.toarray())[1][:, :k]
    w, V, info = blockeigs.lobpcg(A, k, X=exact + 1e-6, tol=1e-8, M="none", comm=comm, return_info=True)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)
    assert info["iterations"] <= 5


def test_not_converged_warns_and_strict_raises(comm):
    A = laplacian_1d(400)
    if comm.rank == 0:
        with pytest.warns(blockeigs.NotConvergedWarning, match="iteration_limit"):
            w, V, info = blockeigs.lobpcg(A, 4, tol=1e-12, maxiter=3, comm=comm, return_info=True)
    else:
        w, V, info = blockeigs.lobpcg(A, 4, tol=1e-12, maxiter=3, comm=comm, return_info=True)
    assert not info["converged"].all() and info["stop"] == "iteration_limit"
    with pytest.raises(blockeigs.NotConvergedError) as e:
        blockeigs.lobpcg(A, 4, tol=1e-12, maxiter=3, comm=comm, strict=True)
    assert len(e.value.result) == 2


def test_same_result_without_comm(comm):
    """comm=None is MPI_COMM_WORLD."""
    A = laplacian_1d(50)
    w1, _ = blockeigs.lobpcg(A, 2, tol=1e-9)
    w2, _ = blockeigs.lobpcg(A, 2, tol=1e-9, comm=comm)
    np.testing.assert_array_equal(w1, w2)


def test_the_call_accounts_for_its_time(comm):
    """info["timings"]: the call's phases add up to it, and the library's set-up and solve lie within its share."""
    A = laplacian_2d(12, 11)
    _, _, info = blockeigs.lobpcg(A, 3, tol=1e-8, comm=comm, return_info=True)
    t = info["timings"]
    parts = [t[name] for name in ("input", "distribution", "library", "output")]
    assert all(p >= 0 for p in parts)
    assert abs(sum(parts) - t["call"]) <= 1e-9 * max(1.0, t["call"])
    assert t["setup"] + t["solve"] <= t["library"] * 1.01 + 1e-3
