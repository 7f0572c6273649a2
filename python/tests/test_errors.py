"""Bad input: one ValueError, with the same message, on every rank, and no hang."""
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import laplacian_1d, raises_everywhere

import blockeigs


def test_non_square(comm):
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(sp.random(5, 6, density=0.5, format="csr"), 1,
                                                               comm=comm))
    assert "5 x 6" in message and "square" in message


def test_non_symmetric(comm):
    A = laplacian_1d(30).tolil()
    A[3, 17] = 0.5
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A.tocsr(), 2, comm=comm))
    assert "not symmetric" in message and "A(3, 17) = 0.5" in message


def test_nan(comm):
    A = laplacian_1d(30)
    A.data[7] = np.nan
    message = raises_everywhere(comm, lambda: blockeigs.cg(A, np.ones(30), comm=comm))
    assert message == "A (csr_matrix 30 x 30): row 2, column 3 holds nan"


def test_nan_on_one_rank_only(comm):
    """A DistributedMatrix whose bad value is on the last rank's rows: every rank raises."""
    A = laplacian_1d(30)
    n, ranks = 30, comm.size
    begin, end = n * comm.rank // ranks, n * (comm.rank + 1) // ranks
    part = A[begin:end].tocsr()
    data = part.data.copy()
    if comm.rank == ranks - 1:
        data[0] = np.inf
    message = raises_everywhere(comm, lambda: blockeigs.DistributedMatrix.from_rows(comm, part.indptr, part.indices,
                                                                                    data, begin, n))
    assert message.endswith("holds inf")


def test_wrong_dtype(comm):
    message = raises_everywhere(comm, lambda: blockeigs.cg(laplacian_1d(20), np.ones(20) * 1j, comm=comm))
    assert "B must be real" in message
    X = np.ones((20, 2), dtype=np.complex128)
    assert "X must be real" in raises_everywhere(comm, lambda: blockeigs.lobpcg(laplacian_1d(20), 2, X=X, comm=comm))


def test_wrong_shape(comm):
    A = laplacian_1d(20)
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, Y=np.ones((7, 1)), comm=comm))
    assert "Y has 7 rows" in message
    message = raises_everywhere(comm, lambda: blockeigs.cg(A, np.ones((20, 2, 2)), comm=comm))
    assert "one- or two-dimensional" in message


def test_wrong_rows_on_one_rank(comm):
    """X with the wrong number of rows on one rank only: every rank raises."""
    A = laplacian_1d(20)
    rows = 20 if comm.rank != comm.size - 1 or comm.size == 1 else 3
    X = np.ones((rows if comm.size > 1 else 3, 1))
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 1, X=X, comm=comm))
    assert "X has 3 rows" in message


def test_k_too_large(comm):
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(laplacian_1d(6), 6, comm=comm))
    assert message == "k = 6 but the matrix has 6 rows: k must be smaller than the number of rows"


def test_bad_options(comm):
    A = laplacian_1d(20)
    assert "which" in raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, which="middle", comm=comm))
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, M="ilu", comm=comm))
    assert message == "blockeigs.lobpcg: eigensolver.preconditioner must be auto, none, jacobi, chebyshev or petsc, got 'ilu'"
    assert "M must be" in raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, M=3.5, comm=comm))
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, M={"type": "chebyshev", "degre": 4}, comm=comm))
    assert "degre" in message
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, M={"type": "chebyshev", "lower": 2}, comm=comm))
    assert "lower" in message


def test_options_are_the_configs(comm):
    """The keyword arguments go through the config's readers: a config's checks and messages, keyed by its keys."""
    A = laplacian_1d(20)
    cases = [
        (lambda: blockeigs.lobpcg(A, 2, tol=-1, comm=comm),
         "blockeigs.lobpcg: eigensolver.tolerance must be positive, got -1"),
        (lambda: blockeigs.lobpcg(A, 0, comm=comm), "blockeigs.lobpcg: eigensolver.k must be at least 1, got 0"),
        (lambda: blockeigs.lobpcg(A, 2, maxiter=2.5, comm=comm),
         "blockeigs.lobpcg: eigensolver.max_iterations must be an integer, got '2.5'"),
        (lambda: blockeigs.lobpcg(A, 4, block_size=3, comm=comm),
         "blockeigs.lobpcg: eigensolver.block_size must be 0 (automatic) or at least k = 4, got 3"),
        (lambda: blockeigs.lobpcg(A, "2", comm=comm),
         "blockeigs.lobpcg: eigensolver.k must be an integer, got \"2\" (a quoted string)"),
        (lambda: blockeigs.lobpcg(A, 2, backend="gpu", comm=comm),
         "blockeigs.lobpcg: execution.backend must be auto, cpu or cuda, got 'gpu' (did you mean cuda?)"),
        (lambda: blockeigs.cg(A, np.ones(20), rtol=0, comm=comm),
         "blockeigs.cg: block_cg.rtol must be positive, got 0"),
        (lambda: blockeigs.cg(A, np.ones(20), M={"type": "chebyshev", "degree": 0}, comm=comm),
         "blockeigs.cg: block_cg.preconditioner.degree must be at least 1, got 0"),
    ]
    for call, expected in cases:
        assert raises_everywhere(comm, call) == expected


def test_b_not_positive_definite(comm):
    A = laplacian_1d(20)
    B = -sp.identity(20, format="csr")
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, 2, B=B, comm=comm))
    assert message.startswith("B: ")


def test_ok_after_errors(comm):
    """The communicator is usable after the errors above (no rank left in a collective)."""
    w, _ = blockeigs.lobpcg(laplacian_1d(20), 1, tol=1e-9, comm=comm)
    assert w[0] > 0


def test_an_mpi4py_on_another_mpi_is_refused(comm):
    """Two MPI libraries in one process crash: importing blockeigs beside such an mpi4py says so instead."""
    from blockeigs._mpi import check_same_mpi

    check_same_mpi("Open MPI v4.1.6, package: Debian", "Open MPI v4.1.4, package: Debian OpenMPI")
    with pytest.raises(ImportError, match="two MPI libraries cannot share a process") as error:
        check_same_mpi("MPICH Version:      4.2.0\nMPICH Release date: ...", "Open MPI v4.1.4, package: Debian")
    assert "MPICH Version:      4.2.0" in str(error.value) and "Open MPI v4.1.4" in str(error.value)
