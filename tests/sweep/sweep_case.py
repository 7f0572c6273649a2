#!/usr/bin/env python3
"""sweep_case.py REFERENCES.tsv DATA_DIR NAME WHICH PRECONDITIONER WORK_DIR -- MPIRUN... BLOCK_EIGS [--set ...]
   sweep_case.py --self-test WORK_DIR

One case of the robustness sweep (tests/sweep): block-eigs on DATA_DIR/NAME.mtx.gz, the 8 smallest or
largest eigenpairs under the default relative test (tolerance 1e-6), with the preconditioner given,
checked against the dense reference eigenvalues in REFERENCES.tsv (make_references.py):
- exit 0: every pair converged, and each Ritz value is the reference eigenvalue of its rank to the
  tolerance, |theta_i - lambda_i| <= tol |theta_i| (a relative residual bounds the distance to some
  eigenvalue; to the one of its rank only if none was missed): never a wrong pair;
- exit 3 (not converged): the pairs returned are no further from the wanted end than the last iterate's
  (the history's last row) by more than the larger of the two residual norms of each pair, and each is
  on its side of the reference (Ritz values of the i-th pair bound lambda_i from the unwanted side);
- anything else fails.
Exits 77 (a skip for ctest) where the matrix is absent, and says so. --self-test checks that the checks
fail on made-up result files with a wrong pair or a worse return.
"""
import csv
import os
import subprocess
import sys

import h5py
import numpy as np

K, TOLERANCE, MAX_ITERATIONS = 8, 1e-6, 1000
SKIP = 77


def attribute(f, name):
    value = f.attrs.get(name, "absent")
    return value.decode() if isinstance(value, bytes) else str(value)


def reference(path, name):
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["name"] == name:
                return (int(row["rows"]), float(row["norm"]), np.array([float(v) for v in row["smallest"].split(",")]),
                        np.array([float(v) for v in row["largest"].split(",")]))
    sys.exit(f"sweep: no reference for {name} in {path} (tests/sweep/make_references.py makes them)")


def run(command, data, name, which, preconditioner, work):
    os.makedirs(work, exist_ok=True)
    config, result = os.path.join(work, "case.yaml"), os.path.join(work, "case.h5")
    with open(config, "w") as f:
        f.write(f"matrix:\n  matrix_market: {{file: {os.path.join(data, name + '.mtx.gz')}}}\n"
                f"eigensolver: {{k: {K}, which: {which}, preconditioner: {preconditioner}, "
                f"tolerance: {TOLERANCE}, max_iterations: {MAX_ITERATIONS}, seed: 1}}\n"
                f"execution: {{backend: cpu}}\noutput: {{monitor: false, path: {result}}}\n")
    if os.path.exists(result):
        os.remove(result)
    proc = subprocess.run(command + [config], capture_output=True, text=True)
    print(proc.stdout + proc.stderr)
    return proc.returncode, result


def check(code, result, rows, norm, want, which):
    if code not in (0, 3):
        return [f"exit {code}: neither converged (0) nor not converged (3)"]
    with h5py.File(result, "r") as f:
        theta, residuals = f["/eigenvalues"][:], f["/residual_norms"][:]
        converged = f["/converged"][:].astype(bool)
        last_theta, last_residuals = f["/history/eigenvalues"][-1], f["/history/residual_norms"][-1]
        size = f["/eigenvectors"].shape[0]
        print(f"stop: {attribute(f, 'stop')}; best iterate restored: {attribute(f, 'best_iterate_restored')}; "
              f"{len(f['/history/eigenvalues'])} rows of history")
    if size != rows:
        return [f"the result has {size} rows, the reference {rows}"]
    rounding = 1e4 * np.finfo(float).eps * norm
    sign = 1.0 if which == "smallest" else -1.0  # away from the wanted end
    problems = []
    print(f"{'pair':>4}  {'eigenvalue':>22}  {'reference':>22}  {'rel. error':>10}  {'last iterate':>22}  converged")
    for i in range(K):
        error = abs(theta[i] - want[i])
        print(f"{i:4d}  {theta[i]:22.15e}  {want[i]:22.15e}  {error / abs(want[i]):10.2e}  {last_theta[i]:22.15e}  "
              f"{'yes' if converged[i] else 'NO'}")
        if code == 0:
            if error > 1.01 * TOLERANCE * abs(theta[i]) + rounding:
                problems.append(f"exit 0 with pair {i} at {theta[i]:.15e}, not the reference {want[i]:.15e}")
            continue
        if sign * (theta[i] - want[i]) < -rounding:
            problems.append(f"pair {i} at {theta[i]:.15e} is beyond the reference {want[i]:.15e} on the wanted side")
        if sign * (theta[i] - last_theta[i]) > max(residuals[i], last_residuals[i]) + rounding:
            problems.append(f"pair {i} returned at {theta[i]:.15e}, worse than the last iterate's {last_theta[i]:.15e} "
                            f"by more than the residuals ({residuals[i]:.2e}, {last_residuals[i]:.2e})")
    if code == 0 and not converged.all():
        problems.append("exit 0 with pairs not converged")
    if code == 3 and converged.all():
        problems.append("exit 3 with every pair converged")
    return problems


def write_result(path, theta, residuals, converged, history_theta, history_residuals):
    with h5py.File(path, "w") as f:
        f["/eigenvalues"], f["/residual_norms"], f["/converged"] = theta, residuals, converged
        f["/history/eigenvalues"], f["/history/residual_norms"] = history_theta, history_residuals
        f["/eigenvectors"] = np.zeros((20, K))


def self_test(work):
    """The checks fail where they should: made-up result files of a 20-row matrix with eigenvalues 1..20."""
    os.makedirs(work, exist_ok=True)
    path, want = os.path.join(work, "self_test.h5"), np.arange(1.0, K + 1)
    small, yes = np.full(K, 1e-9), np.ones(K, dtype=np.int8)
    skipped = np.arange(2.0, K + 2)  # the smallest eigenvalue missed
    cases = [  # exit code, returned values, last iterate's, converged, whether the check must pass
        (0, want, want, yes, True),
        (0, skipped, skipped, yes, False),
        (3, want + 0.5, want + 0.5, 0 * yes, True),
        (3, want + 0.5, want + 0.1, 0 * yes, False),  # returned worse than the last iterate
        (3, want - 0.5, want - 0.5, 0 * yes, False),  # below the reference: not a Ritz value of A
        (0, want, want, 0 * yes, False),
    ]
    for i, (code, theta, last, converged, passes) in enumerate(cases):
        write_result(path, theta, small, converged, np.vstack([last + 1, last]), np.vstack([small, small]))
        if (not check(code, path, 20, 20.0, want, "smallest")) != passes:
            sys.exit(f"sweep self-test: case {i} {'failed' if passes else 'passed'}")
    print("sweep: self-test ok")


def main(argv):
    if argv[0] == "--self-test":
        return self_test(argv[1])
    split = argv.index("--")
    references, data, name, which, preconditioner, work = argv[:split]
    command = argv[split + 1:]
    if not os.path.exists(os.path.join(data, name + ".mtx.gz")):
        print(f"sweep: SKIPPED: no {os.path.join(data, name + '.mtx.gz')} (../shared/data/matrices of the source tree)")
        sys.exit(SKIP)
    rows, norm, smallest, largest = reference(references, name)
    code, result = run(command, data, name, which, preconditioner, work)
    problems = check(code, result, rows, norm, smallest if which == "smallest" else largest, which)
    if problems:
        sys.exit("sweep: FAILED: " + "; ".join(problems))
    print(f"sweep: ok ({'converged to the reference' if code == 0 else 'not converged, no worse than its last iterate'})")


if __name__ == "__main__":
    main(sys.argv[1:])
