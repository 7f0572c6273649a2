#!/usr/bin/env python3
"""with_sigusr1_blocked.py COMMAND...: runs COMMAND with SIGUSR1 blocked, as a
launcher that inherited such a mask runs mpirun (which then forwards nothing)."""
import os
import signal
import sys

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
os.execvp(sys.argv[1], sys.argv[1:])
