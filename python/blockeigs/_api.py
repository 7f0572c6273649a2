"""blockeigs.lobpcg and blockeigs.cg: SciPy-shaped calls into block-eigs' solvers.

The options go to the library as the keys of a config's sections (eigensolver, block_cg, execution), read by the
readers that read a config file: the same defaults, checks and messages ("blockeigs.lobpcg: eigensolver.tolerance
must be positive, got -1"). An argument left at None takes the library's default."""
import time
import warnings

import numpy as np

from . import _blockeigs, _blocks, _mpi
from ._matrix import DistributedMatrix, as_matrix

# SciPy's spellings of the ends beside the config's.
_WHICH = {"SA": "smallest", "LA": "largest"}


class NotConvergedWarning(UserWarning):
    """A solve stopped before every pair (column) met its tolerance; its results are returned, marked."""


class NotConvergedError(RuntimeError):
    """strict=True and the solve did not converge; ``result`` holds what it returned."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def _preconditioner(M):
    """M as the config's preconditioner value: a name (none, jacobi, chebyshev) or a dict of its keys."""
    if M is None or isinstance(M, (str, dict)):
        return M
    raise ValueError(f"M must be None, 'jacobi', 'chebyshev' or a dict of preconditioner keys "
                     f"({{'type': 'chebyshev', 'degree': 8}}), got {type(M).__name__}; scipy's M (an operator) "
                     f"is not taken")


def _rows(rows, k):
    """A list of rows of k values as a len(rows) x k array (also for k = 0: an empty window)."""
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), k)


def _interval(interval):
    """interval as the config's [a, b] (two numbers; the config's reader checks them), or None."""
    if interval is None:
        return None
    try:
        a, b = interval
    except (TypeError, ValueError):
        raise ValueError(f"interval must be two numbers (a, b), got {interval!r}") from None
    return [v.item() if isinstance(v, np.generic) else v for v in (a, b)]


def _execution(backend, a):
    """The execution section's keys: the backend asked for, the matrix's partition and local order."""
    return {"backend": backend, "partition": a.partition, "local_order": a.local_order}


def _finish(result, stop, strict, what, comm):
    """Interrupted: KeyboardInterrupt on every rank; not converged: a warning (rank 0) or NotConvergedError."""
    if stop == "interrupted":
        raise KeyboardInterrupt(f"{what} interrupted (Ctrl-C); every rank stopped at the same iteration")
    if stop == "converged":
        return result
    message = f"{what} did not converge: stop reason {stop}"
    if strict:
        raise NotConvergedError(message, result)
    if _mpi.rank_and_size(comm)[0] == 0:
        warnings.warn(message, NotConvergedWarning, stacklevel=3)
    return result


def _keys(section):
    """A section's keys without those left at None (the library's defaults); NumPy scalars as Python's."""
    return {key: value.item() if isinstance(value, np.generic) else value
            for key, value in section.items() if value is not None}


class _Clock:
    """The call's account: seconds since the last lap, by phase (time.perf_counter, this rank's)."""

    def __init__(self):
        self.last = time.perf_counter()
        self.laps = {}

    def lap(self, name):
        now = time.perf_counter()
        self.laps[name] = self.laps.get(name, 0.0) + now - self.last
        self.last = now

    def timings(self, library):
        """The library's timings with the call's own phases beside them: input (the matrices taken as rows),
        distribution, library (set-up and solve, which the library's own `setup` and `solve` split), output
        (the result in the input's numbering and kind) and call (all of them)."""
        self.lap("output")
        out = dict(library)
        out.update(self.laps)
        out["call"] = sum(self.laps.values())
        return out


def lobpcg(A, k=None, *, B=None, M=None, Y=None, X=None, which="smallest", tol=None, maxiter=None, comm=None,
           backend="auto", return_info=False, gather=False, strict=False, block_size=None, seed=None, method=None,
           recompute_interval=None, interval=None, count=None, slices=None, slice_groups=None):
    """The k extreme eigenpairs of A x = lambda x (or A x = lambda B x) by LOBPCG, or every eigenpair in an interval.

    A, B: SciPy or CuPy sparse matrices (or dense arrays) that every rank holds whole, or DistributedMatrix.
    B must be symmetric positive definite. A may be complex Hermitian (complex128; complex64 is widened): B then
    Hermitian positive definite (real or complex), X and Y real or complex, V complex128; a window of it is
    counted by the density. A CuPy sparse A is checked and split into the
    operator on the device, never copied to the host (each rank's rows stay in the input's order; a CuPy B is
    copied to the host once). M: None, "jacobi", "chebyshev" or a dict of the config's
    preconditioner keys ({"type": "chebyshev", "degree": 8, "lower": 0.05, "jacobi": True,
    "precision": "fp32"}). Y: constraints (n x m or this rank's rows): the eigenvectors are kept
    (B-)orthogonal to its columns. X: a start block (n x 1..block_size or this rank's rows).
    which: "smallest" or "largest". tol: relative residual ||A x - lambda B x|| <= tol |lambda| ||B x||
    (None: the library's default). maxiter, block_size, seed: the config's eigensolver.max_iterations, block_size
    and seed (None: the library's defaults, docs/config.md). method: "lobpcg", "chebyshev_filter" (Chebyshev-filtered
    subspace iteration, for many pairs of a standard problem without constraints or a preconditioner) or None
    (auto: the filter from 64 pairs where it applies); info["method"] says which ran and why. recompute_interval:
    the config's eigensolver.recompute_interval (LOBPCG's A X and A P from products every this many iterations).
    interval: (a, b) instead of k (and which, block_size, method, M, B, X, Y): every eigenpair with
    a <= lambda <= b of a standard problem, by the window solver (the density of states, then polynomial-filtered
    subspace iteration on slices; eigensolver.interval); count ("auto", "inertia", "density"), slices and
    slice_groups are the config's eigensolver.count, slices and slice_groups; info["window"] holds the counts (certified by inertia where the build
    has PETSc with MUMPS and count allows), the density's estimate and each slice's account. An empty window
    returns no pairs. A window's solve does not stop at Ctrl-C.

    Returns (w, V) or (w, V, info): w the k eigenvalues (ascending for smallest, descending for largest);
    V this rank's rows of the eigenvectors in the input's numbering (all rows with gather=True), NumPy for
    host input and CuPy for device input. A solve that does not converge warns (NotConvergedWarning) and
    returns its pairs, marked in info["converged"]; strict=True raises NotConvergedError instead. Input
    errors raise ValueError on every rank. Collective over the matrix's communicator.
    """
    if (k is None) == (interval is None):
        raise ValueError("give k (the k extreme pairs) or interval=(a, b) (every pair in [a, b]), one of them")
    eigensolver = {"k": k, "tolerance": tol, "max_iterations": maxiter, "block_size": block_size, "seed": seed,
                   "preconditioner": _preconditioner(M), "method": method, "recompute_interval": recompute_interval,
                   "interval": _interval(interval), "count": count, "slices": slices,
                   "slice_groups": slice_groups}
    if interval is None:
        eigensolver["which"] = _WHICH.get(which, which)
    clock = _Clock()
    a = as_matrix(A, comm, "A")
    device = a.on_device or any(x is not None and _blocks.is_device(x) for x in (X, Y))
    b = as_matrix(B, comm, "B") if B is not None else None
    clock.lap("input")
    numbering = a._handle.distribute(_execution(backend, a), "blockeigs.lobpcg")
    clock.lap("distribution")
    handle = a._handle.comm
    n = a.shape[0]
    _blocks.check(handle, [(X, "X")], n, a.local_rows, complex_ok=a.dtype.kind == "c")
    _blocks.check(handle, [(Y, "Y")], n, a.local_rows, complex_ok=a.dtype.kind == "c")
    x = _blocks.to_operator(X, numbering, a, n) if X is not None else None
    y = _blocks.to_operator(Y, numbering, a, n) if Y is not None else None
    r = _blockeigs.lobpcg(a._handle, b._handle if b is not None else None, _keys(eigensolver),
                          _execution(backend, a), "blockeigs.lobpcg", x, y, True)
    k = len(r["eigenvalues"])
    clock.lap("library")
    V = _blocks.to_input(r["eigenvectors"], numbering, a)
    if not device:
        V = _blocks.to_host(V)
    if gather:
        V = _blocks.gathered(V, handle)
    w = np.asarray(r["eigenvalues"])
    info = {
        "iterations": r["iterations"],
        "eigenvalues": w,
        "residual_norms": np.asarray(r["residual_norms"]),
        "relative_residuals": np.asarray(r["relative_residuals"]),
        "converged": np.asarray(r["converged"], dtype=bool),
        "stop": r["stop"],
        "history": {"eigenvalues": _rows(r["history_eigenvalues"], k),
                    "residual_norms": _rows(r["history_residual_norms"], k)},
        "timings": clock.timings(r["timings"]),
        "block_size": r["block_size"],
        "preconditioner": r["preconditioner"],
        "method": r["method"],
        "distribution": a._handle.distribution_summary(),
        "rows": (0, n) if gather else (numbering["input_first"], numbering["input_first"] + numbering["input_rows"]),
    }
    if "window" in r:
        info["window"] = r["window"]
    result = (w, V, info) if return_info else (w, V)
    what = f"lobpcg (k = {k})" if interval is None else f"lobpcg (interval [{interval[0]}, {interval[1]}])"
    return _finish(result, r["stop"], strict, what, handle)


def cg(A, B, *, M=None, rtol=None, maxiter=None, X0=None, comm=None, return_info=False, gather=False,
       strict=False, atol=None, backend="auto"):
    """Solves A X = B for a symmetric (or complex Hermitian) positive definite A and one or many right-hand sides
    by block CG.

    A: as for lobpcg (a CuPy sparse A stays on the device); a complex A takes real or complex B and X0 (used as
    complex128) and returns complex128 X. B: n x s (or n) right-hand sides, or this rank's rows of them. X0: a start, B's shape
    (None: zeros). Each column stops at ||b_j - A x_j|| <= max(rtol ||b_j||, atol). M: as for lobpcg.
    rtol, atol, maxiter: the config's block_cg.rtol, atol and max_iterations (None: the library's defaults,
    docs/config.md).

    Returns X (B's shape and kind: NumPy or CuPy; this rank's rows in the input's numbering, all rows with
    gather=True) or (X, info). Not converging warns (strict=True raises NotConvergedError). Collective.
    """
    block_cg = {"rtol": rtol, "atol": atol, "max_iterations": maxiter, "preconditioner": _preconditioner(M)}
    clock = _Clock()
    a = as_matrix(A, comm, "A")
    clock.lap("input")
    numbering = a._handle.distribute(_execution(backend, a), "blockeigs.cg")
    clock.lap("distribution")
    handle = a._handle.comm
    n = a.shape[0]
    if B is None:
        raise ValueError("B (the right-hand sides) is required")
    _blocks.check(handle, [(B, "B"), (X0, "X0")], n, a.local_rows, complex_ok=a.dtype.kind == "c")
    one_column = len(B.shape) == 1
    if X0 is not None and tuple(X0.shape[1:]) != tuple(B.shape[1:]):
        raise ValueError(f"X0 has shape {tuple(X0.shape)} but B has {tuple(B.shape)}: they must match")
    device = a.on_device or _blocks.is_device(B)
    rhs = _blocks.to_operator(B, numbering, a, n)
    x0 = _blocks.to_operator(X0, numbering, a, n) if X0 is not None else None
    r = _blockeigs.cg(a._handle, rhs, x0, _keys(block_cg), _execution(backend, a), "blockeigs.cg", True)
    clock.lap("library")
    X = _blocks.to_input(r["solution"], numbering, a)
    if not device:
        X = _blocks.to_host(X)
    if gather:
        X = _blocks.gathered(X, handle)
    if one_column:
        X = X.reshape(-1)
    norms = np.asarray(r["rhs_norms"])
    safe = np.where(norms > 0, norms, 1.0)
    info = {
        "iterations": np.asarray(r["iterations"]),
        "total_iterations": r["total_iterations"],
        "converged": np.asarray(r["converged"], dtype=bool),
        "rhs_norms": norms,
        "residual_norms": np.asarray(r["residual_norms"]),
        "true_residual_norms": np.asarray(r["true_residual_norms"]),
        "relative_residuals": np.asarray(r["true_residual_norms"]) / safe,
        "stop": r["stop"],
        "history": np.asarray(r["history"]).reshape(-1, norms.size),
        "timings": clock.timings(r["timings"]),
        "preconditioner": r["preconditioner"],
        "distribution": a._handle.distribution_summary(),
        "rows": (0, n) if gather else (numbering["input_first"], numbering["input_first"] + numbering["input_rows"]),
    }
    result = (X, info) if return_info else X
    return _finish(result, r["stop"], strict, f"cg ({norms.size} right-hand side(s))", handle)
