"""Complex Hermitian matrices from SciPy, NumPy and HDF5: the twisted (Bloch) Laplacian against its closed form,
complex64 widened, Hermitian checks naming the entries; LOBPCG's pencils (B complex or real), preconditioners and
constraints against dense references, and what complex values do not take refused by name."""
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from conftest import laplacian_1d, raises_everywhere, unless_no_partitioner

import blockeigs


def twisted_ring(n, theta):
    """The periodic 1-D Laplacian with the Bloch phase theta: 2 on the diagonal, -e^{i theta / n} on each link
    (i, i + 1 mod n) and its conjugate on (i + 1, i); eigenvalues 2 - 2 cos((2 pi j + theta) / n)."""
    link = -np.exp(1j * theta / n)
    rows = np.arange(n)
    S = sp.csr_matrix((np.full(n, link), (rows, (rows + 1) % n)), shape=(n, n))
    return (sp.identity(n, dtype=complex, format="csr") * 2 + S + S.conj().T).tocsr()


def twisted_ring_eigenvalues(n, theta):
    return np.sort(2 - 2 * np.cos((2 * np.pi * np.arange(n) + theta) / n))


def twisted_2d(nx, ny, tx, ty):
    """Kronecker sum of two twisted rings: eigenvalues are the sums of theirs (no two equal for these phases)."""
    A = sp.kron(sp.identity(ny), twisted_ring(nx, tx)) + sp.kron(twisted_ring(ny, ty), sp.identity(nx))
    return A.tocsr()


def twisted_2d_eigenvalues(nx, ny, tx, ty):
    return np.sort(np.add.outer(twisted_ring_eigenvalues(ny, ty), twisted_ring_eigenvalues(nx, tx)).ravel())


def check_hermitian_pairs(A, w, V, tol):
    """Residuals ||A v - w v|| <= tol |w| ||v|| (with some slack) and V^H V = I."""
    R = A @ V - V * w
    assert np.all(np.linalg.norm(R, axis=0) <= 10 * tol * np.abs(w) * np.linalg.norm(V, axis=0))
    np.testing.assert_allclose(V.conj().T @ V, np.eye(len(w)), atol=1e-8)


def test_twisted_laplacian_closed_form(comm):
    nx, ny, k, tol = 14, 11, 6, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    w, V, info = blockeigs.lobpcg(A, k, tol=tol, comm=comm, return_info=True, gather=True)
    np.testing.assert_allclose(w, twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)[:k], rtol=1e-9)
    assert V.dtype == np.complex128 and V.shape == (nx * ny, k)
    # Plane waves e^{2 pi i (jx x / nx + jy y / ny)}: past the constant one (jx = jy = 0) no phase makes them real
    # (for a real v up to a phase, |sum v_i^2| = ||v||^2).
    assert np.all(np.abs((V * V).sum(axis=0))[1:] < 0.5)
    check_hermitian_pairs(A, w, V, tol)
    assert info["converged"].all() and info["method"].startswith("chebyshev_filter (auto: complex values")
    assert info["preconditioner"].startswith("none")


def test_start_block(comm):
    """X: the pairs themselves (complex) converge at once to the same values; a real X is taken as complex; this
    rank's rows of X do as the whole X does."""
    nx, ny, k, tol = 14, 11, 6, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    w, V, info = blockeigs.lobpcg(A, k, tol=tol, comm=comm, return_info=True, gather=True)
    w2, V2, again = blockeigs.lobpcg(A, k, X=V, tol=tol, comm=comm, return_info=True, gather=True)
    np.testing.assert_allclose(w2, w, rtol=1e-10)
    check_hermitian_pairs(A, w2, V2, tol)
    assert again["iterations"] < info["iterations"], (again["iterations"], info["iterations"])
    w3 = blockeigs.lobpcg(A, k, X=np.ones((A.shape[0], 2)), tol=tol, comm=comm)[0]
    np.testing.assert_allclose(w3, w, rtol=1e-9)
    _, _, mine = blockeigs.lobpcg(A, k, tol=tol, comm=comm, return_info=True)
    first, last = mine["rows"]
    w4 = blockeigs.lobpcg(A, k, X=V[first:last], tol=tol, comm=comm)[0]
    np.testing.assert_allclose(w4, w, rtol=1e-10)


def test_largest_and_each_ranks_rows(comm):
    n, k, tol = 97, 4, 1e-9
    A = twisted_ring(n, 2.3)
    w, V, info = blockeigs.lobpcg(A, k, which="largest", tol=tol, comm=comm, return_info=True,
                                  method="chebyshev_filter")
    np.testing.assert_allclose(w, twisted_ring_eigenvalues(n, 2.3)[::-1][:k], rtol=1e-8)
    begin, end = info["rows"]
    assert V.shape == (end - begin, k)
    whole = np.vstack([piece for piece in comm.allgather(V)])
    check_hermitian_pairs(A, w, whole, tol)


def test_complex64_and_dense_input_widened(comm):
    n, k = 40, 3
    A = twisted_ring(n, 0.7)
    expected = twisted_ring_eigenvalues(n, 0.7)[:k]
    w64 = blockeigs.lobpcg(A.astype(np.complex64), k, tol=1e-9, comm=comm)[0]
    np.testing.assert_allclose(w64, np.linalg.eigvalsh(A.astype(np.complex64).toarray().astype(complex))[:k],
                               rtol=1e-8)
    w = blockeigs.lobpcg(A.toarray(), k, tol=1e-9, comm=comm)[0]
    np.testing.assert_allclose(w, expected, rtol=1e-8)


def test_distributed_from_rows_with_an_empty_rank(comm):
    """Each rank's rows as CSR with complex data; the last rank holds none where there are several."""
    n, k = 60, 3
    A = twisted_ring(n, 1.1)
    holders = max(comm.size - 1, 1)
    begin = n * min(comm.rank, holders) // holders
    end = n * min(comm.rank + 1, holders) // holders
    part = A[begin:end].tocsr()
    D = blockeigs.DistributedMatrix.from_rows(comm, part.indptr, part.indices, part.data, begin, n)
    assert D.dtype == np.complex128 and D.local_rows == end - begin
    w, V = blockeigs.lobpcg(D, k, tol=1e-10, comm=comm, gather=True)
    np.testing.assert_allclose(w, twisted_ring_eigenvalues(n, 1.1)[:k], rtol=1e-9)
    check_hermitian_pairs(A, w, V, 1e-10)


def test_load_complex_hdf5(comm, tmp_path_factory):
    h5py = pytest.importorskip("h5py")
    n, k = 50, 3
    A = twisted_ring(n, 2.9)
    path = None
    if comm.rank == 0:
        path = str(tmp_path_factory.mktemp("h5") / "twisted.h5")
        with h5py.File(path, "w") as f:
            g = f.create_group("A")
            g["indptr"] = A.indptr.astype(np.int64)
            g["indices"] = A.indices.astype(np.int64)
            g["data"] = A.data  # complex128: h5py's compound of r and i
            g.attrs["shape"] = np.array([n, n], dtype=np.int64)
    path = comm.bcast(path)
    D = blockeigs.DistributedMatrix.load(comm, path, "/A")
    assert D.dtype == np.complex128
    w = blockeigs.lobpcg(D, k, tol=1e-9, comm=comm)[0]
    np.testing.assert_allclose(w, twisted_ring_eigenvalues(n, 2.9)[:k], rtol=1e-8)


def _not_hermitian(kind):
    A = twisted_ring(12, 0.5).tolil()
    if kind == "imaginary diagonal":
        A[4, 4] = 2 + 0.5j
    elif kind == "real part":
        A[3, 4] = A[3, 4] + 1e-6
    else:  # not the conjugate: the partner of A(7, 6) equals it instead
        A[6, 7] = A[7, 6]
    return A.tocsr()


@pytest.mark.parametrize("kind, expected", [("imaginary diagonal", "A(4, 4) has the imaginary part 0.5"),
                                            ("real part", "Re A(3, 4) = "),
                                            ("not conjugate", "Im A(6, 7) = ")])
def test_not_hermitian_names_the_entry(comm, kind, expected):
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(_not_hermitian(kind), 2, comm=comm))
    assert "is not Hermitian" in message and expected in message, message


def test_pencils_against_dense_references(comm):
    """A x = lambda B x with B complex Hermitian positive definite or real (held as complex): SciPy's dense eigh's
    values, V^H B V = I."""
    nx, ny, k, tol = 12, 9, 5, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    n = nx * ny
    for B in (twisted_2d(nx, ny, -1.3, 0.6) + 0.5 * sp.identity(n, format="csr"),
              sp.diags(np.linspace(1.0, 2.0, n)).tocsr()):
        exact = scipy.linalg.eigh(A.toarray(), B.toarray(), eigvals_only=True)
        w, V = blockeigs.lobpcg(A, k, B=B, tol=tol, comm=comm, gather=True)
        np.testing.assert_allclose(w, exact[:k], rtol=1e-9)
        np.testing.assert_allclose(V.conj().T @ (B @ V), np.eye(k), atol=1e-9)
        R = A @ V - (B @ V) * w
        assert np.all(np.linalg.norm(R, axis=0) <= 10 * tol * np.abs(w) * np.linalg.norm(B @ V, axis=0))


def test_preconditioners_and_constraints(comm):
    """Jacobi and Chebyshev give the closed form's pairs; the next pairs with the first ones as constraints Y."""
    nx, ny, tol = 14, 11, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    exact = twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)
    for M in ("jacobi", "chebyshev"):
        w, V, info = blockeigs.lobpcg(A, 5, M=M, tol=tol, comm=comm, return_info=True, gather=True)
        np.testing.assert_allclose(w, exact[:5], rtol=1e-9)
        assert info["preconditioner"].startswith(M), info["preconditioner"]
        check_hermitian_pairs(A, w, V, tol)
    w3, V3 = blockeigs.lobpcg(A, 3, tol=tol, comm=comm, gather=True)
    w, V = blockeigs.lobpcg(A, 4, Y=V3, tol=tol, comm=comm, gather=True)
    np.testing.assert_allclose(w, exact[3:7], rtol=1e-9)
    assert np.max(np.abs(V3.conj().T @ V)) < 1e-9


def test_complex_b_with_a_real_a_is_refused(comm):
    B = twisted_ring(30, 0.4) + sp.identity(30, format="csr")
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(laplacian_1d(30), 2, B=B, comm=comm))
    assert "holds complex values and A" in message, message


def test_window(comm):
    """Every pair of a complex Hermitian matrix in an interval: the closed form's, each once; count "inertia"
    refused for complex values."""
    nx, ny, tol = 14, 11, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    exact = twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)
    exact = exact[(exact >= 1.0) & (exact <= 1.6)]
    w, V, info = blockeigs.lobpcg(A, interval=(1.0, 1.6), tol=tol, slices=2, comm=comm, return_info=True,
                                  gather=True)
    np.testing.assert_allclose(w, exact, rtol=1e-9)
    assert V.dtype == np.complex128 and V.shape == (nx * ny, len(exact))
    check_hermitian_pairs(A, w, V, tol)
    assert info["window"]["count"] == len(exact) and "complex values" in info["window"]["count_method"]
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(A, interval=(1.0, 1.6), count="inertia", comm=comm))
    assert "count 'inertia' takes real matrices" in message, message


@pytest.mark.parametrize("partition, local_order", [("graph", "band"), ("contiguous", "band")])
def test_rows_moved(comm, partition, local_order):
    """Complex rows moved by a graph partition and ordered by band (or only ordered): the same
    pairs, V and cg's X in the input's numbering, a start block X taken in it too."""
    nx, ny, k, tol = 14, 11, 4, 1e-10
    A = twisted_2d(nx, ny, 0.9, 1.7)
    perm = np.random.default_rng(3).permutation(nx * ny)  # a random numbering: the rows have somewhere to go
    P = A[perm][:, perm].tocsr()
    n = nx * ny
    begin, end = n * comm.rank // comm.size, n * (comm.rank + 1) // comm.size
    local = P[begin:end]
    D = blockeigs.DistributedMatrix.from_rows(comm, local.indptr, local.indices, local.data, begin, n,
                                              partition=partition, local_order=local_order)
    w, V, info = unless_no_partitioner(lambda: blockeigs.lobpcg(D, k, tol=tol, comm=comm, return_info=True,
                                                                gather=True))
    np.testing.assert_allclose(w, twisted_2d_eigenvalues(nx, ny, 0.9, 1.7)[:k], rtol=1e-9)
    check_hermitian_pairs(P, w, V, tol)
    w2, V2 = blockeigs.lobpcg(D, k, tol=tol, X=V[begin:end], comm=comm)  # V as a start: the same pairs
    np.testing.assert_allclose(w2, w, rtol=1e-9)
    B = np.exp(1j * np.arange(n))[:, None] * np.ones((1, 2))
    X = blockeigs.cg(D, B[begin:end], rtol=1e-10, comm=comm)
    X_all = np.vstack(comm.allgather(X))
    assert X_all.dtype == np.complex128
    np.testing.assert_allclose(P @ X_all, B, atol=1e-8)


def test_cg_petsc_refused(comm):
    A = twisted_ring(30, 0.4)
    petsc = {"type": "petsc", "options": "-pc_type jacobi"}
    message = raises_everywhere(comm, lambda: blockeigs.cg(A, np.ones(30), M=petsc, comm=comm))
    assert "type petsc is not offered" in message, message
    # A real matrix keeps refusing complex blocks.
    message = raises_everywhere(comm, lambda: blockeigs.lobpcg(laplacian_1d(30), 2, X=np.ones((30, 2)) * 1j,
                                                               comm=comm))
    assert "X must be real" in message, message


def test_cg_on_a_hermitian_positive_definite_matrix(comm):
    """Block CG on the twisted Laplacian (Hermitian positive definite for these phases): complex and real right-hand
    sides (a vector and a block, a zero column among them), X0, this rank's rows and all of them."""
    A = twisted_2d(12, 9, 0.9, 1.7)
    n = A.shape[0]
    rng = np.random.default_rng(3)
    B = rng.standard_normal((n, 3)) + 1j * rng.standard_normal((n, 3))
    B[:, 1] = 0
    X, info = blockeigs.cg(A, B, rtol=1e-11, comm=comm, gather=True, return_info=True)
    assert X.dtype == np.complex128 and info["converged"].all() and info["preconditioner"] == "none"
    np.testing.assert_allclose(A @ X, B, atol=1e-9 * np.abs(B).max())
    assert info["iterations"][1] == 0
    x = blockeigs.cg(A, np.ones(n), X0=np.full(n, 0.5 + 0.5j), rtol=1e-11, comm=comm)
    whole = np.concatenate(comm.allgather(x))
    assert x.ndim == 1 and x.dtype == np.complex128 and whole.shape == (n,)
    np.testing.assert_allclose(A @ whole, np.ones(n), atol=1e-9)


def test_cg_indefinite_hermitian_refused(comm):
    A = (twisted_ring(40, 0.6) - 0.5 * sp.identity(40, format="csr")).tocsr()  # eigenvalues from -0.5 to 3.5
    message = raises_everywhere(comm, lambda: blockeigs.cg(A, np.ones(40), comm=comm))
    assert "not positive definite" in message and "p^H A p" in message, message


@pytest.mark.parametrize("M", ["jacobi", "chebyshev", {"type": "chebyshev", "degree": 6, "precision": "fp32"}])
def test_cg_preconditioned(comm, M):
    """Jacobi and a Chebyshev polynomial of the Hermitian matrix (real coefficients), in fp64 and over the complex fp32
    copy: the same solution, Chebyshev in fewer iterations."""
    A = twisted_2d(12, 9, 0.9, 1.7)
    n = A.shape[0]
    B = np.exp(1j * np.arange(n * 2).reshape(n, 2))
    X, info = blockeigs.cg(A, B, M=M, rtol=1e-11, comm=comm, gather=True, return_info=True)
    plain = blockeigs.cg(A, B, rtol=1e-11, comm=comm, return_info=True)[1]
    np.testing.assert_allclose(A @ X, B, atol=1e-9)
    assert info["preconditioner"].startswith(M if isinstance(M, str) else "chebyshev")
    if M != "jacobi":
        assert info["total_iterations"] < plain["total_iterations"]
