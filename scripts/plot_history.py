#!/usr/bin/env python3
"""Plot the convergence history in a block-eigs or block-cg result file.

usage: plot_history.py RESULTS.h5 [OUTPUT.png]

block-eigs files: residual norm ||A x - lambda x|| per eigenpair (one line each)
against the iteration, log scale. block-cg files: relative residual per
right-hand side. Needs h5py and matplotlib (python3-h5py and python3-matplotlib,
which scripts/setup.sh installs).
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else path.rsplit(".", 1)[0] + "-history.png"
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"{path}: cannot read it as an HDF5 file ({e})")
    with f:
        app = f.attrs.get("app", b"")
        app = app.decode() if isinstance(app, bytes) else str(app)
        if "history/residual_norms" in f:
            history = f["history/residual_norms"][()]
            label, ylabel = "pair", "residual norm ||A x - lambda x||"
        elif "history/relative_residuals" in f:
            history = f["history/relative_residuals"][()]
            label, ylabel = "column", "relative residual ||b - A x|| / ||b||"
        else:
            sys.exit(f"{path}: no /history/residual_norms or /history/relative_residuals")
    if history.ndim == 1:
        history = history[:, None]
    fig, ax = plt.subplots(figsize=(8, 5))
    iterations = range(1, history.shape[0] + 1)
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
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
