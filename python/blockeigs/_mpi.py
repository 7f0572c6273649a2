"""MPI for the package: initialisation, communicators and agreed errors.

With mpi4py installed, importing it initialises MPI (and finalises it at exit);
without it the extension initialises MPI itself where nobody has, so that one
process works without mpirun.
"""
import atexit

from . import _blockeigs



def _family(library):
    """"Open MPI", "MPICH", "Intel MPI", ... of an MPI_Get_library_version text."""
    for name in ("Open MPI", "MPICH", "Intel", "MVAPICH", "Microsoft MPI"):
        if name in library:
            return name
    return library.split(",")[0].strip()


def check_same_mpi(theirs, ours):
    """Raises ImportError where mpi4py's MPI is another library than the extension's: two MPI libraries in one
    process resolve each other's symbols and crash."""
    if _family(theirs) != _family(ours):
        raise ImportError(
            f"mpi4py in this Python uses {theirs.splitlines()[0].strip()}, but blockeigs was built with "
            f"{ours.splitlines()[0].strip()}: two MPI libraries cannot share a process. Install an mpi4py built "
            "with the same MPI (Debian's python3-mpi4py, or `pip install --no-binary mpi4py mpi4py` with its "
            "mpicc), or set sys.modules['mpi4py'] = None before importing blockeigs to run one process without "
            "mpi4py.")


try:
    from mpi4py import MPI  # initialises MPI
except ImportError:  # no mpi4py: the extension initialises MPI where nobody has
    MPI = None
    if _blockeigs.initialize_mpi():
        atexit.register(_blockeigs.finalize_mpi)
else:
    check_same_mpi(MPI.Get_library_version(), _blockeigs.mpi_library())


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
