#!/usr/bin/env python3
"""block-eigs on the symmetric SuiteSparse matrices of ../shared/data, against
dense references (numpy's eigvalsh), on the CPU backend.

For each matrix up to --max-rows rows: the k smallest without and with the
Jacobi preconditioner, and the k largest, with the backward test. Reports
iterations, whether every pair converged, the exit code, and the largest
eigenvalue error relative to ||A||_2 (the backward test's scale) and to the
eigenvalue itself (which the backward test does not bound for |lambda| << ||A||).

usage: robustness_sweep.py --bin build/cpu/apps [--data DIR] [--k 8] [--np 2]
                           [--tol 1e-6] [--maxiter 5000] [--max-rows 6000]
"""
import argparse
import csv
import gzip
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io


def load(path):
    with gzip.open(path, "rb") as f:
        a = scipy.io.mmread(f)
    return a.tocsr().astype(np.float64)


def run(binary, nprocs, config_text, workdir):
    config = os.path.join(workdir, "sweep.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(nprocs), binary, config]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    values = [float(m.group(1)) for m in re.finditer(r"^\s+\d+\s+(\S+)\s+\S+\s+\S+\s+(?:yes|NO)$",
                                                      proc.stdout, re.M)]
    iterations = re.search(r"^iterations (\d+)", proc.stdout, re.M)
    all_converged = "; all converged" in proc.stdout
    noted = "\nnote: " in proc.stdout
    return proc.returncode, values, int(iterations.group(1)) if iterations else -1, all_converged, noted, proc


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", default=os.path.join(here, "../../../shared/data/matrices"))
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--maxiter", type=int, default=5000)
    ap.add_argument("--max-rows", type=int, default=6000)
    args = ap.parse_args()
    binary = os.path.join(args.bin, "block-eigs")

    rows = []
    with open(os.path.join(args.data, "INDEX.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if r["symmetry"] == "symmetric" and int(r["rows"]) <= args.max_rows:
                rows.append(r)
    print("| matrix | n | case | exit | iterations | all converged | max error / norm(A) | max error / abs(lambda) | unresolved note |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for r in rows:
        path = os.path.join(args.data, r["name"] + ".mtx.gz")
        a = load(path)
        ref = np.linalg.eigvalsh(a.toarray())
        norm = max(abs(ref[0]), abs(ref[-1]))
        cases = [("smallest", "none"), ("smallest", "jacobi"), ("largest", "none")]
        for which, precond in cases:
            if precond == "jacobi" and np.any(a.diagonal() <= 0):
                continue  # Jacobi needs a positive diagonal
            config = f"""matrix:
  matrix_market: {{file: {path}}}
eigensolver:
  k: {args.k}
  which: {which}
  tolerance: {args.tol}
  convergence_test: backward
  max_iterations: {args.maxiter}
  preconditioner: {precond}
  seed: 1
execution:
  backend: cpu
output:
  monitor: false
"""
            with tempfile.TemporaryDirectory() as work:
                code, values, its, conv, noted, proc = run(binary, args.np, config, work)
            if len(values) != args.k:
                print(f"| {r['name']} | {a.shape[0]} | {which}/{precond} | {code} | - | - | no table | | |")
                sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-2000:])
                continue
            want = ref[: args.k] if which == "smallest" else ref[::-1][: args.k]
            err = max(abs(v - w) for v, w in zip(values, want)) / norm
            rel = max(abs(v - w) / abs(w) if w != 0 else abs(v) for v, w in zip(values, want))
            worst = max(worst, err) if conv else worst
            print(f"| {r['name']} | {a.shape[0]} | {which}/{precond} | {code} | {its} | "
                  f"{'yes' if conv else 'no'} | {err:.1e} | {rel:.1e} | {'yes' if noted else ''} |", flush=True)
    print(f"\nlargest error among converged runs: {worst:.1e} of norm(A)")


if __name__ == "__main__":
    main()
