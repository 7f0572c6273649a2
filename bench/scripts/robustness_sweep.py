#!/usr/bin/env python3
"""block-eigs on the symmetric SuiteSparse matrices of ../shared/data, against
dense references (numpy's eigvalsh), on the CPU backend.

For each matrix up to --max-rows rows: by default the k smallest without and
with the Jacobi preconditioner, and the k largest, with the backward test.
Reports iterations, whether every pair converged, the exit code, the wall
seconds of the run, the largest relative residual the app prints, and the
largest eigenvalue error relative to ||A||_2 (the backward test's scale) and to
the eigenvalue itself (which the backward test does not bound for
|lambda| << ||A||).

usage: robustness_sweep.py --bin build/cpu/apps [--data DIR] [--k 8] [--np 2]
                           [--tol 1e-6] [--maxiter 5000] [--max-rows 6000]
                           [--preconditioners none,jacobi,chebyshev[,chebyshev-nojacobi]]
                           [--ends smallest,largest] [--k-smallest 6] [--k-largest 4]
                           [--test backward|relative] [--seed 1]
                           [--matrices A,B] [--exclude C,D]
                           [--out TABLE.md] [--raw RUNS.jsonl] [--resume]
                           [--logs DIR] [--ref-cache DIR] [--timeout S]

--bin is the folder holding block-eigs (or the binary itself).

Without --preconditioners and --ends the cases are the original three
(smallest/none, smallest/jacobi, largest/none); with either, every end of
--ends (default smallest,largest) is run with every choice of
--preconditioners (default none,jacobi). Jacobi is skipped where a diagonal
entry is not positive, and chebyshev (whose default scales by D^-1/2) where a
diagonal entry is zero; both show as skipped. chebyshev-nojacobi is
{type: chebyshev, jacobi: false}: the polynomial in A itself.

The per-run table goes to stdout. --out also writes a Markdown table with one
row per matrix and a cell per end and choice (iterations / converged /
seconds / max error relative to |lambda|), followed by a summary per end
(which choice wins on iterations and on seconds among converged runs, the
failures, and the runs that report convergence with an eigenvalue error above
the tolerance relative to |lambda|); it is rewritten after every matrix.
--raw appends one JSON record per run; with --resume, runs already in that
file with the same parameters are not run again. --logs keeps each run's
config, stdout and stderr. --ref-cache keeps the dense reference eigenvalues
(.npy per matrix).

The environment is passed on to mpirun as it is (set OMP_NUM_THREADS etc.
before calling).
"""
import argparse
import csv
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.io
import scipy.sparse

# the choices of --preconditioners and what each puts in the config
PRECONDITIONERS = {
    "none": "none",
    "jacobi": "jacobi",
    "chebyshev": "chebyshev",  # every key at its default: the polynomial in D^-1/2 A D^-1/2
    "chebyshev-nojacobi": "{type: chebyshev, jacobi: false}",  # the polynomial in A itself
}

LEGACY_CASES = [("smallest", "none"), ("smallest", "jacobi"), ("largest", "none")]

# a row of the app's table of pairs:
#   pair  eigenvalue  residual  rel. residual  converged  [tests passed]
PAIR_RE = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(yes|NO)\b.*$", re.M)


def load(path):
    with gzip.open(path, "rb") as f:
        a = scipy.io.mmread(f)
    return a.tocsr().astype(np.float64)


def reference(a, name, cache):
    """All eigenvalues, ascending. Rows with no off-diagonal entry (bcsstk16 has
    74 rows that are just 1 on the diagonal) are split off first: their diagonal
    entries are exact eigenvalues, which eigvalsh on the whole dense matrix
    blurs by rounding of the order of eps ||A|| (up to 1.3e-5 at eigenvalue 1
    for bcsstk16, whose ||A|| is 4.9e9); eigvalsh runs on the rest."""
    if cache:
        f = os.path.join(cache, name + ".eigvalsh-split.npy")
        if os.path.exists(f):
            return np.load(f)
    off = (a - scipy.sparse.diags(a.diagonal())).tocsr()
    off.eliminate_zeros()
    alone = np.diff(off.indptr) == 0
    rest = np.where(~alone)[0]
    ref = np.sort(np.concatenate([a.diagonal()[alone],
                                  np.linalg.eigvalsh(a[rest][:, rest].toarray()) if len(rest) else []]))
    if cache:
        os.makedirs(cache, exist_ok=True)
        np.save(f, ref)
    return ref


def errors(rec, ref, norm):
    """Largest eigenvalue error relative to norm(A) and to |lambda|, of the
    values sorted toward the wanted end against the reference's."""
    k, which = rec["k"], rec["which"]
    if len(rec.get("values") or []) != k:
        return None, None
    values = sorted(rec["values"], reverse=(which == "largest"))
    want = ref[:k] if which == "smallest" else ref[::-1][:k]
    return (max(abs(v - w) for v, w in zip(values, want)) / norm,
            max(abs(v - w) / abs(w) if w != 0 else abs(v) for v, w in zip(values, want)))


def run(binary, nprocs, config_text, workdir, timeout=None):
    config = os.path.join(workdir, "sweep.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(nprocs), binary, config]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        code = "timeout"
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    seconds = time.perf_counter() - start
    pairs = [(float(m.group(2)), float(m.group(4)), m.group(5) == "yes") for m in PAIR_RE.finditer(out)]
    iterations = re.search(r"^iterations (\d+)", out, re.M)
    wall = re.search(r"^wall\s+(\S+) s", out, re.M)
    return {
        "exit": code,
        "values": [p[0] for p in pairs],
        "rel_residuals": [p[1] for p in pairs],
        "iterations": int(iterations.group(1)) if iterations else -1,
        "converged": "; all converged" in out,
        "noted": "\nnote: " in out,
        "seconds": seconds,
        "app_wall": float(wall.group(1)) if wall else None,
        "stdout": out,
        "stderr": err,
    }


def fmt_seconds(s):
    return f"{s:.1f}" if s < 100 else f"{s:.0f}"


def cell(rec):
    if rec is None:
        return ""
    if rec.get("skipped"):
        return f"skipped ({rec['skipped']})"
    if rec.get("rel_error") is None:
        return f"exit {rec['exit']}, no table"
    conv = "yes" if rec["converged"] else f"no (exit {rec['exit']})"
    return f"{rec['iterations']} / {conv} / {fmt_seconds(rec['seconds'])} / {rec['rel_error']:.1e}"


def summary(records, cases, tol):
    """Per end: wins among converged runs, failures, wrong answers."""
    lines = []
    ends = []
    for which, _ in cases:
        if which not in ends:
            ends.append(which)
    by_matrix = {}
    for r in records:
        by_matrix.setdefault(r["matrix"], {})[(r["which"], r["preconditioner"])] = r
    wrong = []
    for which in ends:
        choices = [p for w, p in cases if w == which]
        if len(choices) < 2:
            continue
        wins_it = {p: 0 for p in choices}
        wins_s = {p: 0 for p in choices}
        ties_it = 0
        failed = {p: 0 for p in choices}
        ran = {p: 0 for p in choices}
        none_converged = []
        for m, recs in by_matrix.items():
            conv = {}
            for p in choices:
                r = recs.get((which, p))
                if r is None or r.get("skipped"):
                    continue
                ran[p] += 1
                if r["converged"] and r["exit"] == 0:
                    conv[p] = r
                else:
                    failed[p] += 1
            if not conv:
                if any(recs.get((which, p)) and not recs[(which, p)].get("skipped") for p in choices):
                    none_converged.append(m)
                continue
            best_it = min(r["iterations"] for r in conv.values())
            winners = [p for p, r in conv.items() if r["iterations"] == best_it]
            if len(winners) > 1:
                ties_it += 1
            for p in winners:
                wins_it[p] += 1
            best_s = min(conv.values(), key=lambda r: r["seconds"])
            wins_s[best_s["preconditioner"]] += 1
        lines.append(f"**{which}** ({', '.join(choices)}):")
        lines.append("")
        lines.append("| choice | runs | not converged | fewest iterations | fewest seconds |")
        lines.append("|---|---|---|---|---|")
        for p in choices:
            lines.append(f"| {p} | {ran[p]} | {failed[p]} | {wins_it[p]} | {wins_s[p]} |")
        lines.append("")
        lines.append(f"(wins counted among converged runs of a matrix; {ties_it} matrices tie on iterations, "
                     f"each tied choice counted; no choice converged on: {', '.join(none_converged) or 'none'})")
        lines.append("")
    for r in records:
        if not r.get("skipped") and r.get("converged") and r.get("rel_error") is not None and r["rel_error"] > tol:
            wrong.append(f"- {r['matrix']} {r['which']}/{r['preconditioner']}: reports converged, "
                         f"max eigenvalue error {r['rel_error']:.2e} of |lambda| "
                         f"(max rel. residual {r['max_rel_residual']:.1e})")
    lines.append(f"Converged runs with an eigenvalue error above {tol:g} |lambda|: "
                 + ("none" if not wrong else str(len(wrong))))
    lines.extend(wrong)
    return "\n".join(lines) + "\n"


def write_table(path, args, cases, records, rows_done, header_lines):
    cols = [f"{w} {p}" for w, p in cases]
    by_key = {(r["matrix"], r["which"], r["preconditioner"]): r for r in records}
    out = list(header_lines)
    out.append("")
    out.append("Cells: iterations / converged / seconds (wall, mpirun) / max |error| / |lambda| "
               "(against numpy.linalg.eigvalsh).")
    out.append("")
    out.append("| matrix | n | " + " | ".join(cols) + " |")
    out.append("|---|---|" + "---|" * len(cols))
    for name, n in rows_done:
        out.append(f"| {name} | {n} | " + " | ".join(cell(by_key.get((name, w, p))) for w, p in cases) + " |")
    out.append("")
    out.append(summary(records, cases, args.tol))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out))
    os.replace(tmp, path)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="folder holding block-eigs, or the binary")
    ap.add_argument("--data", default=os.path.join(here, "../../../shared/data/matrices"))
    ap.add_argument("--k", type=int, default=8, help="pairs at either end (default 8)")
    ap.add_argument("--k-smallest", type=int, help="pairs at the smallest end (default --k)")
    ap.add_argument("--k-largest", type=int, help="pairs at the largest end (default --k)")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--test", choices=["backward", "relative"], default="backward",
                    help="eigensolver.convergence_test (default backward)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--maxiter", type=int, default=5000)
    ap.add_argument("--max-rows", type=int, default=6000)
    ap.add_argument("--preconditioners", help="comma-separated, of: " + ",".join(PRECONDITIONERS))
    ap.add_argument("--ends", help="comma-separated: smallest,largest")
    ap.add_argument("--matrices", help="only these matrices (comma-separated names), in this order")
    ap.add_argument("--exclude", help="leave these matrices out (comma-separated names)")
    ap.add_argument("--out", help="write the Markdown table (one row per matrix) here")
    ap.add_argument("--raw", help="append one JSON record per run to this file")
    ap.add_argument("--resume", action="store_true", help="reuse runs of --raw with the same parameters")
    ap.add_argument("--logs", help="keep each run's config, stdout and stderr in this folder")
    ap.add_argument("--ref-cache", help="keep the dense reference eigenvalues in this folder")
    ap.add_argument("--timeout", type=float, help="seconds a run may take (default: no limit)")
    args = ap.parse_args()
    binary = args.bin if os.path.isfile(args.bin) else os.path.join(args.bin, "block-eigs")
    ksm = args.k_smallest if args.k_smallest is not None else args.k
    klg = args.k_largest if args.k_largest is not None else args.k

    if args.preconditioners is None and args.ends is None:
        cases = LEGACY_CASES
    else:
        precs = (args.preconditioners or "none,jacobi").split(",")
        ends = (args.ends or "smallest,largest").split(",")
        for p in precs:
            if p not in PRECONDITIONERS:
                ap.error(f"unknown preconditioner {p}")
        for e in ends:
            if e not in ("smallest", "largest"):
                ap.error(f"unknown end {e}")
        cases = [(e, p) for e in ends for p in precs]

    rows = []
    with open(os.path.join(args.data, "INDEX.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if r["symmetry"] == "symmetric" and int(r["rows"]) <= args.max_rows:
                rows.append(r)
    if args.matrices:
        want = args.matrices.split(",")
        by_name = {r["name"]: r for r in rows}
        missing = [m for m in want if m not in by_name]
        if missing:
            ap.error(f"not among the selected matrices: {', '.join(missing)}")
        rows = [by_name[m] for m in want]
    if args.exclude:
        drop = set(args.exclude.split(","))
        rows = [r for r in rows if r["name"] not in drop]

    def params(name, which, precond):
        return {"matrix": name, "which": which, "preconditioner": precond,
                "k": ksm if which == "smallest" else klg, "test": args.test, "tol": args.tol,
                "maxiter": args.maxiter, "seed": args.seed, "np": args.np,
                "binary": os.path.abspath(binary)}

    previous = {}
    if args.resume and args.raw and os.path.exists(args.raw):
        with open(args.raw) as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    key = json.dumps({k: rec.get(k) for k in params("", "", "")}, sort_keys=True)
                    previous[key] = rec
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)

    header_lines = [
        f"# LOBPCG sweep: {', '.join(f'{w}/{p}' for w, p in cases)}",
        "",
        f"- command: `{' '.join([os.path.basename(sys.executable)] + sys.argv)}`",
        f"- binary {os.path.abspath(binary)}, {args.np} MPI ranks, CPU backend, {args.test} test, tolerance "
        f"{args.tol:g}, seed {args.seed}, at most {args.maxiter} iterations; k = {ksm} smallest, {klg} largest",
        f"- environment: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')}, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}",
    ]

    print("| matrix | n | case | exit | iterations | all converged | seconds | max rel. residual | "
          "max error / norm(A) | max error / abs(lambda) | unresolved note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    records = []
    rows_done = []
    for r in rows:
        path = os.path.join(args.data, r["name"] + ".mtx.gz")
        a = load(path)
        ref = reference(a, r["name"], args.ref_cache)
        norm = max(abs(ref[0]), abs(ref[-1]))
        diag = a.diagonal()
        for which, precond in cases:
            k = ksm if which == "smallest" else klg
            p = params(r["name"], which, precond)
            skip = None
            if precond == "jacobi" and np.any(diag <= 0):
                skip = "diagonal not positive"  # Jacobi needs a positive diagonal
            elif precond == "chebyshev" and np.any(diag == 0):
                skip = "zero on the diagonal"  # its default Jacobi scaling needs a nonzero diagonal
            if skip:
                rec = dict(p, skipped=skip)
                records.append(rec)
                print(f"| {r['name']} | {a.shape[0]} | {which}/{precond} | skipped: {skip} | | | | | | | |",
                      flush=True)
                continue
            key = json.dumps(p, sort_keys=True)
            if key in previous:
                rec = dict(previous[key])
                rec["abs_error"], rec["rel_error"] = errors(rec, ref, norm)  # against this reference
            else:
                config = f"""matrix:
  matrix_market: {{file: {os.path.abspath(path)}}}
eigensolver:
  k: {k}
  which: {which}
  tolerance: {args.tol}
  convergence_test: {args.test}
  max_iterations: {args.maxiter}
  preconditioner: {PRECONDITIONERS[precond]}
  seed: {args.seed}
execution:
  backend: cpu
output:
  monitor: false
"""
                with tempfile.TemporaryDirectory() as work:
                    res = run(binary, args.np, config, work, args.timeout)
                if args.logs:
                    stem = os.path.join(args.logs, f"{r['name']}.{which}.{precond}")
                    with open(stem + ".yaml", "w") as f:
                        f.write(config)
                    with open(stem + ".out", "w") as f:
                        f.write(res["stdout"])
                    with open(stem + ".err", "w") as f:
                        f.write(res["stderr"])
                rec = dict(p, exit=res["exit"], iterations=res["iterations"], converged=res["converged"],
                           noted=res["noted"], seconds=res["seconds"], app_wall=res["app_wall"],
                           values=res["values"], n=a.shape[0])
                if len(res["values"]) == k:
                    rec["max_rel_residual"] = max(res["rel_residuals"])
                else:
                    rec["max_rel_residual"] = None
                    sys.stderr.write(res["stdout"][-2000:] + res["stderr"][-2000:])
                rec["abs_error"], rec["rel_error"] = errors(rec, ref, norm)
                if args.raw:
                    with open(args.raw, "a") as f:
                        f.write(json.dumps(rec) + "\n")
            records.append(rec)
            if rec["rel_error"] is None:
                print(f"| {r['name']} | {a.shape[0]} | {which}/{precond} | {rec['exit']} | - | - | "
                      f"{rec['seconds']:.1f} | - | no table | | |", flush=True)
                continue
            if rec["converged"]:
                worst = max(worst, rec["abs_error"])
            print(f"| {r['name']} | {a.shape[0]} | {which}/{precond} | {rec['exit']} | {rec['iterations']} | "
                  f"{'yes' if rec['converged'] else 'no'} | {rec['seconds']:.1f} | {rec['max_rel_residual']:.1e} | "
                  f"{rec['abs_error']:.1e} | {rec['rel_error']:.1e} | {'yes' if rec['noted'] else ''} |",
                  flush=True)
        rows_done.append((r["name"], a.shape[0]))
        if args.out:
            write_table(args.out, args, cases, records, rows_done, header_lines)
    print(f"\nlargest error among converged runs: {worst:.1e} of norm(A)")


if __name__ == "__main__":
    main()
