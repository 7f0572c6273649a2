"""blockeigs: block-eigs' LOBPCG and block CG for sparse symmetric matrices, from Python.

    import scipy.sparse as sp, blockeigs
    w, V = blockeigs.lobpcg(A, 8)                  # 8 smallest eigenpairs of a scipy.sparse matrix
    X = blockeigs.cg(A, B, M="jacobi")             # A X = B, many right-hand sides

Under ``mpirun -np N python script.py`` pass ``comm=`` (an mpi4py communicator; default COMM_WORLD): each
rank gets its rows of the results. CuPy inputs give CuPy results. See docs/python.md.
"""
from . import _mpi  # initialises MPI where nobody has
from ._api import NotConvergedError, NotConvergedWarning, cg, lobpcg
from ._blockeigs import version as _version
from ._blockeigs import cuda_compiled
from ._matrix import DistributedMatrix

__version__ = _version()
__all__ = ["lobpcg", "cg", "DistributedMatrix", "NotConvergedWarning", "NotConvergedError", "cuda_compiled",
           "__version__"]
