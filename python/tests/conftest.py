"""Fixtures of the blockeigs tests: they run as they are at 1 process and under `mpirun -np 3` (every rank runs
every test; collective calls must be reached by all ranks, so a test skips on all ranks or none)."""
import gzip
import os
import pathlib

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

try:
    from mpi4py import MPI
except ImportError:  # one process without mpi4py: the tests' communicator is a stand-in blockeigs takes as None
    MPI = None

import blockeigs  # noqa: E402  (MPI and the module load before the first test)


class OneProcess:
    """COMM_WORLD of a run without mpi4py (one process): what the tests ask of a communicator."""
    rank, size = 0, 1

    def allgather(self, x):
        return [x]

    def bcast(self, x, root=0):
        return x


if MPI is None:
    WORLD = OneProcess()
    _comm_handle = blockeigs._mpi.comm_handle
    blockeigs._mpi.comm_handle = lambda comm: _comm_handle(None if comm is WORLD else comm)
else:
    WORLD = MPI.COMM_WORLD

DATA_DIR = pathlib.Path(os.environ.get("BLOCKEIGS_DATA_DIR") or
                        pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "matrices")


@pytest.fixture
def comm():
    return WORLD


def laplacian_1d(n):
    """tridiag(-1, 2, -1): eigenvalues 2 - 2 cos(pi j / (n + 1)), j = 1..n."""
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")


def laplacian_1d_eigenvalues(n):
    return 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))


def laplacian_2d(nx, ny):
    return (sp.kron(sp.identity(ny), laplacian_1d(nx)) + sp.kron(laplacian_1d(ny), sp.identity(nx))).tocsr()


def suitesparse(name):
    """A matrix of ../shared/data/matrices (BLOCKEIGS_DATA_DIR) as CSR, or a skip (on every rank alike)."""
    path = DATA_DIR / f"{name}.mtx.gz"
    if not path.is_file():
        pytest.skip(f"{path} not found (set BLOCKEIGS_DATA_DIR)")
    with gzip.open(path) as f:
        return sp.csr_matrix(scipy.io.mmread(f)).astype(np.float64)


def messages_everywhere(comm, error):
    """Every rank's message of `error` (None where a rank raised nothing)."""
    return comm.allgather(None if error is None else str(error))


def unless_no_partitioner(call):
    """call(), or a skip where the build has no PT-Scotch for partition="graph" (the GPU machine's)."""
    try:
        return call()
    except ValueError as error:
        if "graph needs PT-Scotch" in str(error):
            pytest.skip("built without PT-Scotch")
        raise


def raises_everywhere(comm, call):
    """Runs `call`; asserts that every rank raised ValueError with the same message, and returns it."""
    error = None
    try:
        call()
    except ValueError as e:
        error = e
    messages = messages_everywhere(comm, error)
    assert all(m is not None for m in messages), f"ValueError on some ranks only: {messages}"
    assert len(set(messages)) == 1, f"different messages on the ranks: {messages}"
    return messages[0]

