#!/usr/bin/env python3
"""Plot the convergence history in a block-eigs or block-cg result file.

usage: plot_history.py RESULTS.h5 [OUTPUT.png]

block-eigs files: residual norm ||A x - lambda x|| per eigenpair (one line each)
against the iteration, log scale. block-cg files: relative residual per
right-hand side. Iterations are numbered as the run's monitor numbered them:
block-eigs from 0 (the start block's residuals), block-cg from 1, a resumed
run on from the iteration it resumed after (the file's resumed_from_iteration). Needs h5py and matplotlib (python3-h5py and python3-matplotlib,
which scripts/setup.sh installs).
"""
import argparse
import os
import sys


def parse_arguments(argv):
    """The result file and the picture's name; --help and unknown options answered before any import."""
    parser = argparse.ArgumentParser(
        prog="plot_history.py", description="\n\n".join(__doc__.split("\n\n")[i] for i in (0, 2)),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", metavar="RESULTS.h5", help="a block-eigs or block-cg result file")
    parser.add_argument("output", metavar="OUTPUT.png", nargs="?",
                        help="the picture (default: RESULTS-history.png beside the file)")
    return parser.parse_args(argv)


ARGUMENTS = parse_arguments(sys.argv[1:])

# The modules come from Debian's python3 (scripts/setup.sh installs them). A
# python3 earlier on the PATH (pyenv, conda, a venv) may lack them: then run
# again under /usr/bin/python3 if that has them, else say what to install.
SYSTEM_PYTHON = "/usr/bin/python3"
try:
    import h5py
    import matplotlib
except ImportError as missing:
    here = os.path.realpath(sys.executable) if sys.executable else ""
    if (os.environ.get("BLOCKEIGS_PLOT_REEXEC") != "1" and os.access(SYSTEM_PYTHON, os.X_OK)
            and here != os.path.realpath(SYSTEM_PYTHON)):
        os.environ["BLOCKEIGS_PLOT_REEXEC"] = "1"  # at most once
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write(f"plot_history.py: needs the Python modules h5py and matplotlib ({missing}); "
                     "on Debian: apt-get install python3-h5py python3-matplotlib (scripts/setup.sh does), "
                     "then run it with /usr/bin/python3\n")
    sys.exit(2)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    path = ARGUMENTS.results
    out = ARGUMENTS.output or path.rsplit(".", 1)[0] + "-history.png"
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"{path}: cannot read it as an HDF5 file ({e})")
    with f:
        app = f.attrs.get("app", b"")
        app = app.decode() if isinstance(app, bytes) else str(app)
        resumed_after = int(f.attrs.get("resumed_from_iteration", 0))
        if "history/residual_norms" in f:
            history = f["history/residual_norms"][()]
            label, ylabel = "pair", "residual norm ||A x - lambda x||"
            first = resumed_after  # row 0: the test of the start block (or of the checkpoint's)
        elif "history/relative_residuals" in f:
            history = f["history/relative_residuals"][()]
            label, ylabel = "column", "relative residual ||b - A x|| / ||b||"
            first = resumed_after + 1  # row 0: the first step's residuals
        else:
            sys.exit(f"{path}: no /history/residual_norms or /history/relative_residuals")
    if history.ndim == 1:
        history = history[:, None]
    fig, ax = plt.subplots(figsize=(8, 5))
    iterations = range(first, first + history.shape[0])
    for j in range(history.shape[1]):
        column = history[:, j]
        shown = [(i, v) for i, v in zip(iterations, column) if v > 0]  # 0: column already finished
        if shown:
            ax.semilogy([i for i, _ in shown], [v for _, v in shown], label=f"{label} {j}", linewidth=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{app or 'block-eigs'}: {path}")
    ax.grid(True, which="both", alpha=0.3)
    if history.shape[1] <= 20:
        ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out} (iterations {first}-{first + history.shape[0] - 1})")


if __name__ == "__main__":
    main()
