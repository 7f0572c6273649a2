#!/usr/bin/env python3
"""check_account.py RESULT.h5

The run's account of time in a result file adds up: every time_setup_* and
the later phases are non-negative, the set-up phases sum to time_setup, and
all phases together (set-up, solve, checkpoints, gathering, writing, report)
come within 5% of time_wall, the time from the process's start; the
start-up's parts (the process's start to main, MPI_Init) were measured and
fit in it.
"""
import sys

import h5py


def main(path):
    attrs = h5py.File(path, "r").attrs
    setup = {k: float(v) for k, v in attrs.items() if k.startswith("time_setup_")}
    later = [float(attrs[k]) for k in ("time_solve_wall", "time_checkpoints", "time_output_gather",
                                       "time_output_write", "time_report")]
    wall, total_setup = float(attrs["time_wall"]), float(attrs["time_setup"])
    problems = []
    if len(setup) < 12:
        problems.append(f"only {len(setup)} set-up phases: {sorted(setup)}")
    if min(list(setup.values()) + later) < 0:
        problems.append(f"a negative phase: {setup} {later}")
    if abs(sum(setup.values()) - total_setup) > 1e-9 * max(1.0, total_setup):
        problems.append(f"the set-up phases sum to {sum(setup.values())}, time_setup is {total_setup}")
    to_main, mpi_init = float(attrs["time_startup_to_main"]), float(attrs["time_startup_mpi_init"])
    startup = setup.get("time_setup_startup", 0.0)
    if mpi_init <= 0 or to_main < 0 or max(to_main, mpi_init) > startup + 1e-3:  # each the maximum over ranks
        problems.append(f"start-up {startup:.4f} s: to main {to_main:.4f}, MPI_Init {mpi_init:.4f}")
    total = total_setup + sum(later)
    if wall <= 0 or abs(total - wall) > 0.05 * wall:
        problems.append(f"the phases sum to {total:.4f} s, the wall is {wall:.4f} s")
    for p in problems:
        print("check_account:", p)
    if not problems:
        print(f"account adds up: {total:.4f} s of phases, wall {wall:.4f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
