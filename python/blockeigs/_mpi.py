"""MPI for the package: initialisation, communicators and agreed errors.

With mpi4py installed, importing it initialises MPI (and finalises it at exit);
without it the extension initialises MPI itself where nobody has, so that one
process works without mpirun.
"""
import atexit

from . import _blockeigs

try:
    from mpi4py import MPI  # initialises MPI
except ImportError:  # no mpi4py: the extension initialises MPI where nobody has
    MPI = None
    if _blockeigs.initialize_mpi():
        atexit.register(_blockeigs.finalize_mpi)


def comm_handle(comm):
    """The integer handle of `comm` (None: MPI_COMM_WORLD; an mpi4py communicator; or an int handle)."""
    if comm is None:
        return _blockeigs.comm_world()
    if isinstance(comm, int):
        return comm
    if MPI is not None and isinstance(comm, MPI.Comm):
        if comm == MPI.COMM_NULL:
            raise ValueError("comm is MPI.COMM_NULL")
        return MPI._handleof(comm)
    raise TypeError(f"comm must be an mpi4py communicator or None, got {type(comm).__name__}")


def rank_and_size(handle):
    return _blockeigs.comm_rank(handle), _blockeigs.comm_size(handle)


def agree(handle, message):
    """Raises ValueError(message of the lowest rank that has one) on every rank where any rank has one."""
    _blockeigs.agree_on_input(handle, message or "")


def allgather_rows(handle, block):
    """Every rank's rows of a host block (rows x cols), stacked in rank order, on every rank."""
    return _blockeigs.allgather_rows(handle, block)
