"""Matrix.from_replicated, the path of CuPy input, on host arrays (the CPU twin of the device checks): each rank
takes its balanced rows of a matrix every rank holds whole, with int32 or int64 indices; the results and the
messages for bad input are those of SciPy input (Matrix.from_rows), on every rank."""
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import laplacian_1d, laplacian_1d_eigenvalues, laplacian_2d, raises_everywhere

import blockeigs
from blockeigs import _blockeigs, _mpi


def replicated(comm, a, index_dtype, name="A"):
    """`a` (SciPy CSR) through from_replicated, on the host."""
    handle = _mpi.comm_handle(comm)
    first = _blockeigs.balanced_partition(np.ascontiguousarray(a.indptr, np.int64), _mpi.rank_and_size(handle)[1])
    n = a.shape[0]
    h = _blockeigs.Matrix.from_replicated(handle, n, np.ascontiguousarray(a.indptr, index_dtype),
                                          np.ascontiguousarray(a.indices, index_dtype),
                                          np.ascontiguousarray(a.data, np.float64), first,
                                          f"{name} ({type(a).__name__} {n} x {n})")
    return blockeigs.DistributedMatrix(h)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_same_pairs_as_scipy_input(comm, index_dtype):
    n, k = 120, 4
    A = replicated(comm, laplacian_1d(n), index_dtype)
    assert not A._handle.distributed_on_device
    w, V = blockeigs.lobpcg(A, k, M="jacobi", tol=1e-9, comm=comm, gather=True)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)
    assert V.shape == (n, k)


def test_empty_rank_and_one_row_per_rank(comm):
    """As many rows as ranks (one each) and fewer (a rank without rows): cg solves the diagonal system."""
    for n in (comm.size, max(1, comm.size - 1)):
        a = sp.diags(np.arange(1.0, n + 1), format="csr")
        A = replicated(comm, a, np.int32)
        B = np.ones((A.local_rows, 1))
        X = blockeigs.cg(A, B, rtol=1e-12, comm=comm, gather=True)
        np.testing.assert_allclose(X.reshape(-1), 1.0 / np.arange(1.0, n + 1), rtol=1e-10)


def bad_matrices():
    asym = laplacian_2d(6, 5).tolil()
    asym[17, 3] = 0.25
    nan = laplacian_1d(40)
    nan.data[50] = np.nan
    far = laplacian_1d(40)
    far.indices[-1] = 40  # row 39's last column
    unsorted = laplacian_1d(40)
    unsorted.indices[9], unsorted.indices[10] = unsorted.indices[10], unsorted.indices[9]  # row 3: 2, 4, 3
    return {"asymmetric": asym.tocsr(), "nan": nan, "column n": far, "unsorted": unsorted}


@pytest.mark.parametrize("kind", ["asymmetric", "nan", "column n", "unsorted"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_bad_input_same_message_as_scipy_input(comm, kind, index_dtype):
    a = bad_matrices()[kind]
    if kind == "unsorted":  # the host path sorts; the replicated path takes canonical arrays (CuPy's are made so)
        message = raises_everywhere(comm, lambda: replicated(comm, a, index_dtype))
        assert message == "A (csr_matrix 40 x 40): row 3 has columns out of order or repeated (4 then 3)"
        return
    expected = raises_everywhere(comm, lambda: blockeigs.lobpcg(a, 2, comm=comm))
    assert raises_everywhere(comm, lambda: replicated(comm, a, index_dtype)) == expected
