"""Dense blocks (start blocks, constraints, right-hand sides, results) between the caller's arrays and the
library's rows: NumPy on the host, CuPy on the device (no copy through the host where the rows stay on their
ranks), in the input's numbering for the caller and the operator's for the library."""
import numpy as np

from . import _mpi


def is_device(x):
    """A CUDA array (CuPy, or anything with __cuda_array_interface__)."""
    return hasattr(x, "__cuda_array_interface__")


def device_to_host(x):
    """The one place a device block is copied to the host (the tests refuse it where it must not happen)."""
    return x.get()


def _xp(device):
    if device:
        import cupy

        return cupy
    return np


def _problem(x, name, n, local_rows, complex_ok=False):
    """What is wrong with block `x` (None: nothing); its rows must be n (all) or this rank's. Complex values
    only where complex_ok (a complex matrix's cg)."""
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is None or dtype is None:
        return f"{name} must be an array, got {type(x).__name__}"
    if len(shape) not in (1, 2):
        return f"{name} must be one- or two-dimensional, got shape {tuple(shape)}"
    if dtype.kind not in ("fiubc" if complex_ok else "fiub"):
        kinds = "real or complex (complex128 is used)" if complex_ok else "real (float64 is used)"
        return f"{name} must be {kinds}, got dtype {dtype}"
    if shape[0] not in (n, local_rows):
        where = f" or this rank's {local_rows}" if local_rows != n else ""
        return f"{name} has {shape[0]} rows, but the matrix has {n}{where}"
    if len(shape) == 2 and shape[1] == 0:
        return f"{name} has no columns"
    xp = _xp(is_device(x))
    if dtype.kind in "fc" and not bool(xp.isfinite(x).all()):
        return f"{name} holds NaN or infinite values"
    return None


def check(comm, blocks, n, local_rows, complex_ok=False):
    """Checks each (block, name) that is not None; a ValueError on every rank where one rank's is wrong."""
    message = None
    for x, name in blocks:
        if x is not None and message is None:
            message = _problem(x, name, n, local_rows, complex_ok)
    _mpi.agree(comm, message)


def to_operator(x, numbering, matrix, n):
    """A checked block as this rank's rows in the operator's numbering, float64 (complex128 for a complex
    matrix), C-contiguous, 2-D, in the memory it came in."""
    device = is_device(x)
    xp = _xp(device)
    x = xp.asarray(x)
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    first, rows = numbering["input_first"], numbering["input_rows"]
    if x.shape[0] == n and rows != n:
        x = x[first:first + rows]
    x = xp.ascontiguousarray(x, dtype=matrix.dtype)
    if numbering["identity"]:
        return x
    if numbering["stay_on_rank"]:
        index = xp.asarray(np.asarray(numbering["input_row"], np.int64) - first)
        return xp.ascontiguousarray(x[index])
    host = np.ascontiguousarray(device_to_host(x) if device else x)
    moved = _reordered(matrix._handle.from_input_order, host)
    return xp.asarray(moved) if device else moved


def to_input(v, numbering, matrix):
    """The library's block (this rank's operator rows) as this rank's rows of the input's numbering."""
    device = is_device(v)
    xp = _xp(device)
    if numbering["identity"]:
        return v
    if numbering["stay_on_rank"]:
        out = xp.empty_like(v)
        out[xp.asarray(np.asarray(numbering["input_row"], np.int64) - numbering["input_first"])] = v
        return out
    host = np.ascontiguousarray(device_to_host(v) if device else v)
    moved = _reordered(matrix._handle.to_input_order, host)
    return xp.asarray(moved) if device else moved


def _reordered(order, host):
    """A host block's rows moved by the handle's `order` (real rows); complex rows as rows of twice as many reals."""
    if np.iscomplexobj(host):
        return np.ascontiguousarray(order(host.view(np.float64))).view(np.complex128)
    return order(host)


def gathered(v, comm):
    """Every rank's rows of `v`, in rank order, on every rank (through the host for device arrays; complex
    values travel as their pairs of float64)."""
    device = is_device(v)
    host = np.ascontiguousarray(device_to_host(v) if device else v)
    complex_values = np.iscomplexobj(host)
    all_rows = _mpi.allgather_rows(comm, host.view(np.float64) if complex_values else host)
    if complex_values:
        all_rows = all_rows.view(np.complex128)
    return _xp(True).asarray(all_rows) if device else all_rows


def to_host(v):
    return device_to_host(v) if is_device(v) else v
