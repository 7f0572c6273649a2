"""Ctrl-C (SIGINT on rank 0) stops the iteration on every rank, which all raise KeyboardInterrupt."""
import os
import signal
import threading

import numpy as np
import pytest
from conftest import laplacian_1d

import blockeigs


def test_sigint_stops_every_rank(comm):
    A = laplacian_1d(20000)  # unpreconditioned to 1e-10: many thousands of iterations
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)) if comm.rank == 0 else None
    if timer:
        timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            blockeigs.lobpcg(A, 4, tol=1e-10, maxiter=20000, comm=comm)
    finally:
        if timer:
            timer.cancel()
    w, _ = blockeigs.lobpcg(laplacian_1d(30), 1, tol=1e-9, comm=comm)  # the ranks still agree afterwards
    assert np.isfinite(w[0])
