"""Matrices: blockeigs.DistributedMatrix, and SciPy / CuPy sparse matrices made into one."""
import numpy as np

from . import _blockeigs, _mpi

_PARTITIONS = ("auto", "contiguous", "graph")
_LOCAL_ORDERS = ("auto", "none", "band")


def _check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")


class DistributedMatrix:
    """A symmetric (real) or Hermitian (complex) sparse matrix distributed by rows over the ranks of an MPI
    communicator.

    Each rank holds a contiguous block of rows (in rank order) of the input's
    numbering. The solvers may move and renumber its rows, real or complex
    (``partition``, ``local_order``, as the apps' ``execution.partition`` and
    ``execution.local_order``). Results come back in
    the input's numbering. The matrix is checked when it is made: finite values,
    columns in range, symmetric (entries equal within 1e-12 relative) or
    Hermitian (real and imaginary parts each within 1e-12 relative of the
    conjugate partner's, a real diagonal). Collective.
    """

    def __init__(self, handle, *, partition="auto", local_order="auto"):
        _check_choice("partition", partition, _PARTITIONS)
        _check_choice("local_order", local_order, _LOCAL_ORDERS)
        self._handle = handle
        self.partition = partition
        self.local_order = local_order
        self._arrays = None  # a device matrix's CuPy arrays, which the library reads in place

    @property
    def on_device(self):
        """Made from CuPy arrays (the library reads them in place): results come back as CuPy arrays."""
        return self._arrays is not None

    @classmethod
    def from_rows(cls, comm, indptr, indices, data, first_row, n, *, partition="auto", local_order="auto",
                  description=None):
        """This rank's rows ``[first_row, first_row + len(indptr) - 1)`` of an ``n x n`` matrix, CSR with
        global column indices (zero-based), real or complex values (complex: a Hermitian matrix). The ranks'
        ranges must follow each other in rank order from row 0 and cover all ``n`` rows; a rank may hold none.
        Collective."""
        handle = _mpi.comm_handle(comm)
        indptr = np.asarray(indptr)
        indices = np.asarray(indices)
        data = np.asarray(data)
        message = _csr_arrays_message(indptr, indices, data)
        _mpi.agree(handle, message)
        description = description or f"DistributedMatrix.from_rows ({n} x {n})"
        h = _blockeigs.Matrix.from_rows(handle, int(n), int(first_row), np.ascontiguousarray(indptr, np.int64),
                                        np.ascontiguousarray(indices, np.int64),
                                        np.ascontiguousarray(data, _value_dtype(data.dtype)), description)
        return cls(h, partition=partition, local_order=local_order)

    @classmethod
    def load(cls, comm, path, group="/A", *, partition="auto", local_order="auto"):
        """The matrix in an HDF5 file (datasets indptr, indices, data and attribute shape in ``group``; the
        apps' format, as h5sparse and anndata write it; complex data as h5py writes complex128), each rank
        reading its rows. Collective."""
        h = _blockeigs.Matrix.load(_mpi.comm_handle(comm), str(path), group)
        return cls(h, partition=partition, local_order=local_order)

    @property
    def dtype(self):
        """float64, or complex128 for a complex Hermitian matrix (complex64 input is widened)."""
        return np.dtype(np.complex128 if self._handle.complex else np.float64)

    @property
    def shape(self):
        n = self._handle.global_rows
        return (n, n)

    @property
    def nnz(self):
        return self._handle.global_nnz

    @property
    def first_row(self):
        """This rank's first row (the input's numbering)."""
        return self._handle.first_row

    @property
    def local_rows(self):
        """The number of rows this rank holds (the input's numbering)."""
        return self._handle.local_rows

    @property
    def description(self):
        return self._handle.description

    def __repr__(self):
        n = self._handle.global_rows
        return f"<DistributedMatrix {self.description}: {n} x {n}, {self.nnz} nonzeros>"


def _csr_arrays_message(indptr, indices, data):
    """What is wrong with CSR arrays' kinds and shapes (None: nothing)."""
    for name, a in (("indptr", indptr), ("indices", indices)):
        if a.ndim != 1:
            return f"{name} must be one-dimensional, got shape {a.shape}"
        if a.size and not np.issubdtype(a.dtype, np.integer):
            return f"{name} must hold integers, got {a.dtype}"
    if data.ndim != 1:
        return f"data must be one-dimensional, got shape {data.shape}"
    if data.size and not (np.issubdtype(data.dtype, np.floating) or np.issubdtype(data.dtype, np.integer)
                          or np.issubdtype(data.dtype, np.complexfloating)):
        return f"data must be real or complex numbers, got {data.dtype}"
    if indptr.size == 0:
        return "indptr must have at least one entry (0 for a rank with no rows)"
    if indices.shape != data.shape:
        return f"indices and data must have the same length, got {indices.size} and {data.size}"
    return None


def _value_dtype(dtype):
    """The library's values for an input's: complex128 for complex ones (complex64 widened), else float64."""
    return np.complex128 if np.dtype(dtype).kind == "c" else np.float64


def _is_cupy_sparse(a):
    return type(a).__module__.startswith("cupyx.scipy.sparse")


def _balanced_first_rows(indptr, ranks):
    """RowPartition::balanced on device offsets: where each rank's rows start, by binary searches on the device
    (only 2 * ranks numbers come to the host). The same split as _blockeigs.balanced_partition."""
    import cupy

    n = indptr.size - 1
    if ranks == 1:
        return [0, n]
    cost = indptr.astype(cupy.int64) + cupy.arange(n + 1, dtype=cupy.int64)  # cost of rows [0, r)
    total = int(cost[-1])
    targets = np.array([total * p / ranks for p in range(1, ranks)])
    # The first row whose prefix cost reaches each rank's share (exact in float64 below 2^53).
    lo = cupy.asnumpy(cupy.searchsorted(cost.astype(cupy.float64), cupy.asarray(targets), side="left"))
    lo = lo.astype(np.int64)
    near = cupy.asnumpy(cost[cupy.asarray(np.stack([np.maximum(lo - 1, 0), lo]))])  # cost[lo - 1], cost[lo]
    first = [0]
    for p in range(1, ranks):
        b = int(max(lo[p - 1], first[-1]))
        if b > first[-1]:  # then b == lo: the boundary on whichever side of the target is closer
            below, above = targets[p - 1] - near[0, p - 1], near[1, p - 1] - targets[p - 1]
            if below < above:
                b -= 1
        first.append(b)
    return first + [n]


def _device_matrix(a, comm, name):
    """A CuPy CSR matrix that every rank holds whole, taken where it is: checked on the device and split there
    into each rank's operator rows (no copy of its arrays to the host; a non-canonical matrix is first
    copied, sorted and summed on the device, float32, complex64 and bool values widened there)."""
    import cupy

    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} is {a.shape[0]} x {a.shape[1]}: lobpcg and cg need a square matrix")
    if a.dtype.kind not in "fbc":
        raise ValueError(f"{name} must be real or complex (float64 or complex128 is used), got dtype {a.dtype}")
    a = a.tocsr()
    description = f"{name} ({type(a).__name__} {a.shape[0]} x {a.shape[1]})"
    if not a.has_canonical_format:  # columns sorted and unique within rows, as the host path makes them
        a = a.copy()
        a.sum_duplicates()
    indptr, indices, data = a.indptr, a.indices, a.data
    if indptr.dtype != indices.dtype or indptr.dtype not in (np.int32, np.int64):
        indptr, indices = indptr.astype(cupy.int64), indices.astype(cupy.int64)
    data = cupy.ascontiguousarray(data, dtype=_value_dtype(data.dtype))
    handle = _mpi.comm_handle(comm)
    first = _balanced_first_rows(indptr, _mpi.rank_and_size(handle)[1])
    cupy.cuda.get_current_stream().synchronize()  # the library's stream reads what CuPy's wrote
    h = _blockeigs.Matrix.from_replicated(handle, a.shape[0], indptr, indices, data, first, description)
    m = DistributedMatrix(h)
    m._arrays = (indptr, indices, data)  # the library reads them in place: kept alive with the matrix
    return m


def as_matrix(a, comm, name):
    """`a` as a DistributedMatrix: itself, or a SciPy / CuPy sparse matrix or a dense array that every rank
    holds whole, real or complex, of which each rank keeps its rows (the apps' split, balanced by nonzeros
    plus rows). A CuPy matrix stays on the device (_device_matrix)."""
    if isinstance(a, DistributedMatrix):
        return a
    import scipy.sparse as sp

    if _is_cupy_sparse(a):
        return _device_matrix(a, comm, name)
    if not sp.issparse(a):
        if hasattr(a, "__cuda_array_interface__"):
            a = a.get()
        arr = np.asarray(a)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a square matrix, got an array of shape {arr.shape}")
        a = sp.csr_matrix(arr)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} is {a.shape[0]} x {a.shape[1]}: lobpcg and cg need a square matrix")
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_
            or np.issubdtype(a.dtype, np.complexfloating)):
        raise ValueError(f"{name} must be real or complex (float64 or complex128 is used), got dtype {a.dtype}")
    a = a.tocsr()
    handle = _mpi.comm_handle(comm)
    rank, ranks = _mpi.rank_and_size(handle)
    n = a.shape[0]
    indptr = np.ascontiguousarray(a.indptr, np.int64)
    first = _blockeigs.balanced_partition(indptr, ranks)
    begin, end = first[rank], first[rank + 1]
    rows = indptr[begin:end + 1] - indptr[begin]
    cols = np.ascontiguousarray(a.indices[indptr[begin]:indptr[end]], np.int64)
    vals = np.ascontiguousarray(a.data[indptr[begin]:indptr[end]], _value_dtype(a.dtype))
    description = f"{name} ({type(a).__name__} {n} x {n})"
    h = _blockeigs.Matrix.from_rows(handle, n, int(begin), rows, cols, vals, description)
    return DistributedMatrix(h)
