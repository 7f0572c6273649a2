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


# --- CuPy sparse input: checked and split on the device, never copied to the host -------------------------------

@pytest.fixture
def matrix_not_copied(monkeypatch, no_host_copies):
    """A CuPy matrix's arrays must not reach the host: csr_matrix.get and cupy.asnumpy of anything longer than a
    few numbers (the row partition's searches bring 2 per rank) fail in the test."""
    import cupyx.scipy.sparse as csp

    def refuse(*args, **kwargs):
        raise AssertionError("a CuPy sparse matrix was copied to the host")

    asnumpy = cupy.asnumpy

    def small_only(a, *args, **kwargs):
        if getattr(a, "size", 0) > 16:
            raise AssertionError(f"an array of {a.size} values was copied to the host")
        return asnumpy(a, *args, **kwargs)

    monkeypatch.setattr(csp.csr_matrix, "get", refuse)
    monkeypatch.setattr(cupy, "asnumpy", small_only)


def test_cupy_matrix_stays_on_the_device(comm, matrix_not_copied):
    import cupyx.scipy.sparse as csp
    from blockeigs._matrix import as_matrix

    n, k = 200, 4
    A = as_matrix(csp.csr_matrix(laplacian_1d(n)), comm, "A")
    w, V, info = blockeigs.lobpcg(A, k, M="chebyshev", tol=1e-9, comm=comm, backend="cuda", return_info=True)
    assert A._handle.distributed_on_device, info["distribution"]
    assert on_device(V) and V.shape == (A.local_rows, k)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k], rtol=1e-8)


def test_cupy_cg_stays_on_the_device(comm, matrix_not_copied):
    import cupyx.scipy.sparse as csp

    A = laplacian_2d(20, 20)
    n = A.shape[0]
    B = cupy.asarray(np.random.default_rng(5).standard_normal((n, 16)))
    X, info = blockeigs.cg(csp.csr_matrix(A), B, M="jacobi", rtol=1e-10, comm=comm, return_info=True)
    assert "device input" in info["distribution"]
    assert on_device(X)
    first, last = info["rows"]
    np.testing.assert_allclose(X.get(), spla.spsolve(A.tocsc(), B.get())[first:last], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_cupy_values_widened_on_the_device(comm, dtype):
    import cupyx.scipy.sparse as csp
    import scipy.sparse as sp

    a = (laplacian_1d(30) if dtype == "float32" else sp.identity(30, format="csr")).astype(dtype)
    X = blockeigs.cg(csp.csr_matrix(a), cupy.ones(30), rtol=1e-12, comm=comm, gather=True)
    np.testing.assert_allclose(X.get(), np.linalg.solve(a.toarray().astype(np.float64), np.ones(30)), rtol=1e-9)


def test_cupy_unsorted_duplicates_and_empty_rank(comm):
    """Columns out of order and repeated (summed, as for SciPy input); fewer rows than ranks."""
    import cupyx.scipy.sparse as csp

    n = 2
    indptr = cupy.asarray([0, 3, 5], dtype=cupy.int32)
    indices = cupy.asarray([1, 0, 0, 1, 0], dtype=cupy.int32)  # row 0: (0, 1 + 3), (1, -1); row 1: (1, 4), (0, -1)
    data = cupy.asarray([-1.0, 1.0, 3.0, 4.0, -1.0])
    A = csp.csr_matrix((data, indices, indptr), shape=(n, n))
    X = blockeigs.cg(A, cupy.asarray([3.0, 3.0]), rtol=1e-12, comm=comm, gather=True)
    np.testing.assert_allclose(X.get(), np.linalg.solve([[4.0, -1.0], [-1.0, 4.0]], [3.0, 3.0]), rtol=1e-12)


def test_cupy_pencil(comm):
    """B as CuPy too (its rows go to the host for the pencil's checks)."""
    import cupyx.scipy.sparse as csp
    import scipy.sparse as sp

    n, k = 100, 3
    M = sp.diags(np.full(n, 2.0), format="csr")
    w, V = blockeigs.lobpcg(csp.csr_matrix(laplacian_1d(n)), k, B=csp.csr_matrix(M), tol=1e-9, comm=comm)
    np.testing.assert_allclose(w, laplacian_1d_eigenvalues(n)[:k] / 2, rtol=1e-8)
    assert isinstance(V, cupy.ndarray)


def _bad_cupy_inputs():
    from test_replicated import bad_matrices

    return bad_matrices()


@pytest.mark.parametrize("kind", ["asymmetric", "nan", "column n", "unsorted"])
def test_bad_cupy_input_same_message_as_scipy_input(comm, kind):
    import cupyx.scipy.sparse as csp
    from conftest import raises_everywhere

    a = _bad_cupy_inputs()[kind]
    d = csp.csr_matrix((cupy.asarray(a.data), cupy.asarray(a.indices), cupy.asarray(a.indptr)), shape=a.shape)
    # "unsorted" swaps two column indices of row 3: sorted on the device as the host path sorts SciPy's, the
    # matrix is then asymmetric (A(3, 4) = 2, A(4, 3) = -1), the same message on both paths.
    expected = raises_everywhere(comm, lambda: blockeigs.lobpcg(a, 2, comm=comm))
    assert raises_everywhere(comm, lambda: blockeigs.lobpcg(d, 2, comm=comm)) == expected


@pytest.mark.parametrize("ranks", [1, 2, 3, 4, 7])
def test_device_row_split_is_the_library_split(ranks):
    """_balanced_first_rows (binary searches on the device offsets) gives _blockeigs.balanced_partition's split:
    a Laplacian's offsets, uneven rows with empty ones, fewer rows than ranks."""
    from blockeigs import _blockeigs
    from blockeigs._matrix import _balanced_first_rows

    lengths = np.random.default_rng(ranks).integers(0, 9, 301)
    for indptr in (laplacian_2d(13, 11).indptr, np.concatenate([[0], np.cumsum(lengths)]), np.zeros(4)):
        indptr = np.asarray(indptr, np.int64)
        expected = [int(f) for f in _blockeigs.balanced_partition(indptr, ranks)]
        assert [int(f) for f in _balanced_first_rows(cupy.asarray(indptr), ranks)] == expected


# --- Complex Hermitian CuPy input: checked and split on the device in place, complex eigenvectors there -------

def test_cupy_complex_matrix_stays_on_the_device(comm, matrix_not_copied):
    import cupyx.scipy.sparse as csp
    from blockeigs._matrix import as_matrix
    from test_complex import twisted_2d, twisted_2d_eigenvalues

    nx, ny, k, tol = 23, 17, 6, 1e-10
    host = twisted_2d(nx, ny, 0.9, 1.7)
    A = as_matrix(csp.csr_matrix(host), comm, "A")
    w, V, info = blockeigs.lobpcg(A, k, tol=tol, comm=comm, backend="cuda", return_info=True)
    assert A._handle.distributed_on_device and "device input" in info["distribution"], info["distribution"]
    assert on_device(V) and V.dtype == cupy.complex128 and V.shape == (A.local_rows, k)
    np.testing.assert_allclose(w, twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)[:k], rtol=1e-9)
    whole = np.vstack(comm.allgather(V.get()))
    R = host @ whole - whole * w
    assert np.all(np.linalg.norm(R, axis=0) <= 10 * tol * np.abs(w))
    np.testing.assert_allclose(whole.conj().T @ whole, np.eye(k), atol=1e-8)


def test_cupy_complex_window(comm, matrix_not_copied):
    """A window of a complex CuPy matrix: split on the device in place (its group operators too), every pair of
    the closed form's in the window, CuPy eigenvectors."""
    import cupyx.scipy.sparse as csp
    from blockeigs._matrix import as_matrix
    from test_complex import twisted_2d, twisted_2d_eigenvalues

    nx, ny, tol = 23, 17, 1e-10
    host = twisted_2d(nx, ny, 0.9, 1.7)
    exact = twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)
    exact = exact[(exact >= 1.0) & (exact <= 1.4)]
    A = as_matrix(csp.csr_matrix(host), comm, "A")
    w, V, info = blockeigs.lobpcg(A, interval=(1.0, 1.4), tol=tol, slices=2, comm=comm, backend="cuda",
                                  return_info=True)
    assert A._handle.distributed_on_device and "device input" in info["distribution"], info["distribution"]
    assert on_device(V) and V.dtype == cupy.complex128 and V.shape == (A.local_rows, len(exact))
    np.testing.assert_allclose(w, exact, rtol=1e-9)
    whole = np.vstack(comm.allgather(V.get()))
    assert np.all(np.linalg.norm(host @ whole - whole * w, axis=0) <= 10 * tol * np.abs(w))


def test_cupy_complex_rows_moved(comm):
    """A complex CuPy matrix asked to be partitioned: its rows copied to the host once, moved, and the pairs in
    the input's numbering (CuPy out)."""
    import cupyx.scipy.sparse as csp
    from test_complex import twisted_2d, twisted_2d_eigenvalues

    nx, ny, k, tol = 23, 17, 5, 1e-10
    host = twisted_2d(nx, ny, 0.9, 1.7)
    perm = np.random.default_rng(5).permutation(nx * ny)
    host = host[perm][:, perm].tocsr()
    from blockeigs._matrix import as_matrix

    D = as_matrix(csp.csr_matrix(host), comm, "A")
    D.partition, D.local_order = "graph", "band"
    from conftest import unless_no_partitioner

    w, V = unless_no_partitioner(lambda: blockeigs.lobpcg(D, k, tol=tol, comm=comm, backend="cuda"))
    assert on_device(V) and V.dtype == cupy.complex128
    np.testing.assert_allclose(w, twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)[:k], rtol=1e-9)
    whole = np.vstack(comm.allgather(V.get()))
    assert np.all(np.linalg.norm(host @ whole - whole * w, axis=0) <= 10 * tol * np.abs(w))


def test_cupy_complex64_widened_on_the_device(comm):
    import cupyx.scipy.sparse as csp
    from test_complex import twisted_ring

    a = twisted_ring(60, 2.1).astype(np.complex64)
    w = blockeigs.lobpcg(csp.csr_matrix(a), 3, tol=1e-9, comm=comm)[0]
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.toarray().astype(np.complex128))[:3], rtol=1e-8)


@pytest.mark.parametrize("kind", ["imaginary diagonal", "real part", "not conjugate"])
def test_bad_complex_cupy_input_same_message_as_scipy_input(comm, kind):
    import cupyx.scipy.sparse as csp
    from conftest import raises_everywhere
    from test_complex import _not_hermitian

    a = _not_hermitian(kind)
    expected = raises_everywhere(comm, lambda: blockeigs.lobpcg(a, 2, comm=comm))
    assert raises_everywhere(comm, lambda: blockeigs.lobpcg(csp.csr_matrix(a), 2, comm=comm)) == expected


def test_cupy_complex_cg_stays_on_the_device(comm, matrix_not_copied):
    import cupyx.scipy.sparse as csp
    from test_complex import twisted_2d

    host = twisted_2d(21, 16, 0.9, 1.7)
    n = host.shape[0]
    rng = np.random.default_rng(6)
    B = cupy.asarray(rng.standard_normal((n, 4)) + 1j * rng.standard_normal((n, 4)))
    X, info = blockeigs.cg(csp.csr_matrix(host), B, rtol=1e-11, comm=comm, return_info=True)
    assert "device input" in info["distribution"] and info["converged"].all()
    assert on_device(X) and X.dtype == cupy.complex128
    first, last = info["rows"]
    np.testing.assert_allclose((csp.csr_matrix(host[first:last]) @ cupy.asarray(np.vstack(comm.allgather(X.get()))))
                               .get(), B.get()[first:last], atol=1e-9 * float(cupy.abs(B).max()))
