"""Each kind of input: SciPy formats and dense arrays, DistributedMatrix from rows and from HDF5, graph partitions."""
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import laplacian_1d, laplacian_1d_eigenvalues, laplacian_2d

import blockeigs


@pytest.mark.parametrize("kind", ["csr", "csc", "coo", "csr_array", "dense", "int"])
def test_scipy_kinds(comm, kind):
    n, k = 40, 3
    A = laplacian_1d(n)
    A = {"csr": A, "csc": A.tocsc(), "coo": A.tocoo(), "csr_array": sp.csr_array(A) if hasattr(sp, "csr_array") else A,
         "dense": A.toarray(), "int": A.astype(np.int32)}[kind]
    w, _ = blockeigs.lobpcg(A, k, tol=1e-9, comm=comm)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)


def my_rows(comm, A):
    """Rows split unevenly over the ranks, the last rank holding none where there are several."""
    n = A.shape[0]
    ranks = comm.size
    cuts = [0] + [int(n * (r + 1) / max(ranks - 1, 1)) for r in range(max(ranks - 1, 1))] + [n]
    cuts = cuts[:ranks] + [n]
    begin, end = cuts[comm.rank], cuts[comm.rank + 1]
    part = A[begin:end]
    return part.indptr, part.indices, part.data, begin


@pytest.mark.parametrize("partition, local_order", [("auto", "auto"), ("contiguous", "none"), ("graph", "band")])
def test_from_rows(comm, partition, local_order):
    nx, k = 12, 4
    A = laplacian_2d(nx, nx)
    rng = np.random.default_rng(0)
    perm = rng.permutation(A.shape[0])  # scattered numbering: a graph partition moves rows
    A = A[perm][:, perm].tocsr()
    indptr, indices, data, first = my_rows(comm, A)
    D = blockeigs.DistributedMatrix.from_rows(comm, indptr, indices, data, first, A.shape[0], partition=partition,
                                              local_order=local_order)
    assert D.shape == A.shape and D.nnz == A.nnz and D.first_row == first
    w, V, info = blockeigs.lobpcg(D, k, tol=1e-9, comm=comm, return_info=True)
    assert info["rows"] == (first, first + len(indptr) - 1)
    V_all = np.vstack(comm.allgather(V))
    R = A @ V_all - V_all * w
    assert np.all(np.linalg.norm(R, axis=0) <= 1e-8 * w)
    X = blockeigs.cg(D, np.ones((len(indptr) - 1, 2)), rtol=1e-10, comm=comm)
    X_all = np.vstack(comm.allgather(X))
    np.testing.assert_allclose(A @ X_all, np.ones((A.shape[0], 2)), atol=1e-8)


def test_load_hdf5(comm, tmp_path_factory):
    h5py = pytest.importorskip("h5py")
    n, k = 64, 3
    A = laplacian_1d(n)
    path = None
    if comm.rank == 0:
        path = str(tmp_path_factory.mktemp("h5") / "lap.h5")
        with h5py.File(path, "w") as f:
            g = f.create_group("A")
            g["indptr"] = A.indptr.astype(np.int64)
            g["indices"] = A.indices.astype(np.int32)
            g["data"] = A.data
            g.attrs["shape"] = np.array([n, n], dtype=np.int64)
    path = comm.bcast(path)
    D = blockeigs.DistributedMatrix.load(comm, path, "/A")
    assert D.shape == (n, n) and D.nnz == A.nnz
    w, V = blockeigs.lobpcg(D, k, tol=1e-9, comm=comm, gather=True)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)


def test_numpy_blocks_any_float_kind(comm):
    """Y: known pairs to deflate (float64), X: a float32 start; the next pairs come out."""
    n, k = 50, 2
    A = laplacian_1d(n)
    Y = np.linalg.eigh(A.toarray())[1][:, :2]
    X = np.random.default_rng(1).standard_normal((n, 3)).astype(np.float32)
    w, V = blockeigs.lobpcg(A, k, X=X, Y=Y, tol=1e-9, comm=comm, gather=True)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[2:4], rtol=1e-8)
    np.testing.assert_allclose(Y.T @ V, 0, atol=1e-8)
