#!/usr/bin/env python3
"""check_resume.py APP REF.h5 STOPPED.h5 CHECKPOINT.h5 RESUMED.h5

Checks a kill-and-resume of APP (block-eigs or block-cg) against the same
problem run without interruption: the interrupted run's result file is
marked interrupted and not converged, the checkpoint is APP's, and the
resumed run converged to the same answer (eigenvalues, or the solution X, to
1e-10 relative) in at most 110% of the uninterrupted run's iterations (or one
more, for runs of a few iterations).
"""
import sys

import h5py
import numpy as np


def attribute(f, name):
    value = f.attrs[name]
    return value.decode() if isinstance(value, bytes) else value


def main(app, ref_path, stopped_path, checkpoint_path, resumed_path):
    ref, stopped, checkpoint, resumed = (h5py.File(p, "r") for p in
                                         (ref_path, stopped_path, checkpoint_path, resumed_path))
    problems = []
    if "interrupted" not in stopped.attrs or bool(stopped.attrs["all_converged"]):
        problems.append("the interrupted run's file is not marked interrupted and unconverged")
    if attribute(checkpoint, "checkpoint_of") != app:
        problems.append(f"the checkpoint is {attribute(checkpoint, 'checkpoint_of')}'s, not {app}'s")
    if "problem" in ref.attrs and attribute(checkpoint, "problem") != attribute(ref, "problem"):
        problems.append(f"the checkpoint records the {attribute(checkpoint, 'problem')} problem, the run "
                        f"solved the {attribute(ref, 'problem')} one")
    if not bool(resumed.attrs["all_converged"]):
        problems.append("the resumed run did not converge")
    if app == "block-eigs":
        a, b = ref["eigenvalues"][:], resumed["eigenvalues"][:]
        error = float(np.max(np.abs(a - b) / np.abs(a)))
        total, whole = int(resumed["iterations"][0]), int(ref["iterations"][0])
    else:
        a, b = ref["X"][:], resumed["X"][:]
        error = float(np.max(np.linalg.norm(a - b, axis=0) / np.linalg.norm(a, axis=0)))
        total, whole = int(resumed.attrs["total_iterations"]), int(ref.attrs["total_iterations"])
    if not error <= 1e-10:
        problems.append(f"the resumed answer differs by {error:.3e} (relative), more than 1e-10")
    went_on_from = int(resumed.attrs["resumed_from_iteration"])
    if went_on_from != int(attribute(checkpoint, "iteration")) or went_on_from <= 0:
        problems.append(f"resumed from iteration {went_on_from}, the checkpoint's is {attribute(checkpoint, 'iteration')}")
    # 110%, or one iteration more where that is more: the filter's runs take a handful of iterations, and its
    # resumed run filters the checkpoint's block once more before it tests it.
    if total > max(1.1 * whole, whole + 1):
        problems.append(f"{total} iterations in all, more than 110% of the uninterrupted {whole} (or one more)")
    print(f"{app}: checkpoint at iteration {went_on_from}, {total} iterations in all against {whole} "
          f"uninterrupted, answers within {error:.1e}")
    for p in problems:
        print("problem:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
