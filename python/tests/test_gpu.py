"""CuPy in, CuPy out, without a copy through the host (GPU machine; skipped without CuPy, a GPU or a CUDA build)."""
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from conftest import laplacian_1d, laplacian_1d_eigenvalues, laplacian_2d

import blockeigs

cupy = pytest.importorskip("cupy")
try:
    _gpus = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver
    _gpus = 0
pytestmark = pytest.mark.skipif(not (_gpus > 0 and blockeigs.cuda_compiled()),
                                reason="needs a GPU and a CUDA build of blockeigs")


def on_device(a):
    """The array's memory is device memory (cudaMemoryTypeDevice)."""
    ptr = a.__cuda_array_interface__["data"][0]
    return isinstance(a, cupy.ndarray) and cupy.cuda.runtime.pointerGetAttributes(ptr).type == 2


@pytest.fixture
def no_host_copies(monkeypatch):
    """The package's device-to-host copies (blockeigs._blocks.device_to_host, the only one) fail in the test; the
    library copies device blocks only on the device (facade.cpp)."""
    import blockeigs._blocks

    def refuse(x):
        raise AssertionError("a device array was copied to the host")

    monkeypatch.setattr(blockeigs._blocks, "device_to_host", refuse)


def test_cupy_csr_in_cupy_out(comm):
    import cupyx.scipy.sparse as csp

    n, k = 200, 4
    A = csp.csr_matrix(laplacian_1d(n))
    w, V = blockeigs.lobpcg(A, k, M="chebyshev", tol=1e-9, comm=comm, backend="cuda")
    assert isinstance(V, cupy.ndarray) and on_device(V)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)


@pytest.mark.parametrize("local_order", ["none", "band"])
def test_blocks_stay_on_the_device(comm, no_host_copies, local_order):
    n, k = 150, 3
    A = make_matrix(comm, laplacian_1d(n), local_order)
    rows = A.local_rows
    exact = np.linalg.eigh(laplacian_1d(n).toarray())[1]
    first = A.first_row
    Y = cupy.asarray(exact[first:first + rows, :1])  # this rank's rows, host to device before the check
    X = cupy.asarray(np.random.default_rng(2).standard_normal((rows, k)))
    w, V = blockeigs.lobpcg(A, k, X=X, Y=Y, tol=1e-9, comm=comm, backend="cuda")
    assert on_device(V) and V.shape == (rows, k)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[1:k + 1], rtol=1e-8)


def make_matrix(comm, A, local_order):
    n, ranks = A.shape[0], comm.size
    begin, end = n * comm.rank // ranks, n * (comm.rank + 1) // ranks
    part = A[begin:end].tocsr()
    return blockeigs.DistributedMatrix.from_rows(comm, part.indptr, part.indices, part.data, begin, n,
                                                 partition="contiguous", local_order=local_order)


def test_cg_sixteen_cupy_columns(comm):
    A = laplacian_2d(30, 30)
    n = A.shape[0]
    B = cupy.asarray(np.random.default_rng(4).standard_normal((n, 16)))
    X = blockeigs.cg(A, B, M="jacobi", rtol=1e-10, comm=comm, gather=True)
    assert isinstance(X, cupy.ndarray)
    np.testing.assert_allclose(X.get(), spla.spsolve(A.tocsc(), B.get()), rtol=1e-7, atol=1e-9)


def test_cg_no_host_copies(comm, no_host_copies):
    A = make_matrix(comm, laplacian_2d(20, 20), "none")
    B = cupy.ones((A.local_rows, 3))
    X0 = cupy.zeros((A.local_rows, 3))
    X = blockeigs.cg(A, B, X0=X0, rtol=1e-10, comm=comm, backend="cuda")
    assert on_device(X) and X.shape == (A.local_rows, 3)
