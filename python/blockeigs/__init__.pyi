# Type stubs of the blockeigs package (python/blockeigs/_api.py, _matrix.py).
from typing import Any, Literal, Mapping, Sequence, TypeAlias, overload

import numpy as np
import numpy.typing as npt

__version__: str
__all__: list[str]

Comm: TypeAlias = Any  # an mpi4py communicator (mpi4py.MPI.Comm) or None for MPI_COMM_WORLD
Array: TypeAlias = Any  # numpy.ndarray or cupy.ndarray
Matrix: TypeAlias = Any  # scipy.sparse matrix/array, cupyx.scipy.sparse matrix, dense array or DistributedMatrix
Preconditioner: TypeAlias = None | Literal["jacobi", "chebyshev"] | Mapping[str, Any]
Partition: TypeAlias = Literal["auto", "contiguous", "graph"]
LocalOrder: TypeAlias = Literal["auto", "none", "band"]
Backend: TypeAlias = Literal["auto", "cpu", "cuda"]

class NotConvergedWarning(UserWarning): ...

class NotConvergedError(RuntimeError):
    result: tuple[Any, ...] | Any
    def __init__(self, message: str, result: Any) -> None: ...

def cuda_compiled() -> bool: ...

class DistributedMatrix:
    partition: Partition
    local_order: LocalOrder
    @classmethod
    def from_rows(cls, comm: Comm, indptr: npt.ArrayLike, indices: npt.ArrayLike, data: npt.ArrayLike,
                  first_row: int, n: int, *, partition: Partition = "auto", local_order: LocalOrder = "auto",
                  description: str | None = None) -> DistributedMatrix: ...
    @classmethod
    def load(cls, comm: Comm, path: str, group: str = "/A", *, partition: Partition = "auto",
             local_order: LocalOrder = "auto") -> DistributedMatrix: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def nnz(self) -> int: ...
    @property
    def first_row(self) -> int: ...
    @property
    def local_rows(self) -> int: ...
    @property
    def description(self) -> str: ...

@overload
def lobpcg(A: Matrix, k: int | None = None, *, B: Matrix | None = None, M: Preconditioner = None, Y: Array | None = None,
           X: Array | None = None, which: Literal["smallest", "largest", "SA", "LA"] = "smallest",
           tol: float | None = None, maxiter: int | None = None, comm: Comm = None, backend: Backend = "auto",
           return_info: Literal[False] = False, gather: bool = False, strict: bool = False, block_size: int | None = None,
           seed: int | None = None, method: Literal["lobpcg", "chebyshev_filter"] | None = None,
           recompute_interval: int | None = None, interval: tuple[float, float] | None = None,
           count: Literal["auto", "inertia", "density"] | None = None,
           slices: int | None = None, slice_groups: int | None = None) -> tuple[np.ndarray, Array]: ...
@overload
def lobpcg(A: Matrix, k: int | None = None, *, B: Matrix | None = None, M: Preconditioner = None, Y: Array | None = None,
           X: Array | None = None, which: Literal["smallest", "largest", "SA", "LA"] = "smallest",
           tol: float | None = None, maxiter: int | None = None, comm: Comm = None, backend: Backend = "auto",
           return_info: Literal[True], gather: bool = False, strict: bool = False, block_size: int | None = None,
           seed: int | None = None, method: Literal["lobpcg", "chebyshev_filter"] | None = None,
           recompute_interval: int | None = None, interval: tuple[float, float] | None = None,
           count: Literal["auto", "inertia", "density"] | None = None,
           slices: int | None = None, slice_groups: int | None = None) -> tuple[np.ndarray, Array, dict[str, Any]]: ...
@overload
def cg(A: Matrix, B: Array, *, M: Preconditioner = None, rtol: float | None = None, maxiter: int | None = None,
       X0: Array | None = None, comm: Comm = None, return_info: Literal[False] = False, gather: bool = False,
       strict: bool = False, atol: float | None = None, backend: Backend = "auto") -> Array: ...
@overload
def cg(A: Matrix, B: Array, *, M: Preconditioner = None, rtol: float | None = None, maxiter: int | None = None,
       X0: Array | None = None, comm: Comm = None, return_info: Literal[True], gather: bool = False,
       strict: bool = False, atol: float | None = None, backend: Backend = "auto") -> tuple[Array, dict[str, Any]]: ...
