#!/usr/bin/env python3
"""blockeigs from Python on one GPU, in one run: the package against the apps and against torch and CuPy.

  eigs: blockeigs.lobpcg on the 7-point Laplacian (CuPy CSR in, M="chebyshev") beside block-eigs' printed solve
        time on the same problem (bench/configs/eigs-laplacian-128.yaml with preconditioner chebyshev) and
        beside torch.lobpcg on the same matrix, asked for the same relative residual (its time to its cap is a
        lower bound where it does not converge).
  cg:   blockeigs.cg with 16 CuPy right-hand sides beside cupyx.scipy.sparse.linalg.cg column by column.

Each solver is warmed up once (CUDA context, handles, kernels' first loads) and then timed once.

usage: python_api.py --bin DIR [--grid 128] [--k 16] [--tol 1e-5] [--columns 16] [--rtol 1e-8]
                     [--torch-maxiter 500] [--config bench/configs/eigs-laplacian-128.yaml]
Needs PYTHONPATH to hold the built package (build/cuda/python) and torch, CuPy and SciPy.
"""
import argparse
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp


def laplacian_3d(n):
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    return (sp.kron(sp.kron(eye, eye), t) + sp.kron(sp.kron(eye, t), eye) + sp.kron(sp.kron(t, eye), eye)).tocsr()


def exact_smallest(n, k):
    one = np.sort(2 - 2 * np.cos(np.arange(1, n + 1) * np.pi / (n + 1)))[:k]
    sums = np.add.outer(np.add.outer(one, one), one).ravel()
    return np.sort(sums)[:k]


def sync():
    import cupy
    import torch
    torch.cuda.synchronize()
    cupy.cuda.Device().synchronize()


def timed(step):
    sync()
    start = time.perf_counter()
    out = step()
    sync()
    return out, time.perf_counter() - start


def account(info):
    t = info["timings"]
    return ", ".join(f"{name} {t[name]:.3f} s" for name in ("input", "distribution", "setup", "solve", "output"))


def app_solve_time(binary, config, overrides):
    cmd = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "1", binary, config]
    for o in overrides:
        cmd += ["--set", o]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 3):
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(f"{binary} failed with exit code {proc.returncode}")
    solve = float(re.search(r"solve time +([0-9.]+) s", proc.stdout).group(1))
    iterations = int(re.search(r"iterations +([0-9]+)", proc.stdout).group(1))
    return solve, iterations


def eigs(args, app, app_iterations):
    import cupy
    import cupyx.scipy.sparse as csp
    import torch

    import blockeigs

    a = laplacian_3d(args.grid)
    exact = exact_smallest(args.grid, args.k)
    ac = csp.csr_matrix(a)
    print(f"7-point Laplacian {args.grid}^3: {a.shape[0]} rows, {a.nnz} nonzeros; k = {args.k}, "
          f"relative tolerance {args.tol}, M = chebyshev")
    call = lambda maxiter: blockeigs.lobpcg(ac, args.k, M="chebyshev", tol=args.tol, maxiter=maxiter,
                                            return_info=True, backend="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(2)  # warm-up
    (w, V, info), wall = timed(lambda: call(5000))
    assert isinstance(V, cupy.ndarray)
    solve = info["timings"]["solve"]
    error = np.max(np.abs(w - exact) / exact)
    print(f"block-eigs (app):  solve {app:.3f} s, {app_iterations} iterations")
    print(f"blockeigs.lobpcg:  solve {solve:.3f} s, call {wall:.3f} s (set-up {info['timings']['setup']:.3f} s), "
          f"{info['iterations']} iterations, converged {bool(np.all(info['converged']))}, "
          f"eigenvalue error {error:.1e}")
    print(f"  solve / app's solve: {solve / app:.3f}x (bar <= 1.1x); call / app's solve: {wall / app:.3f}x")
    print("  the call's account: " + account(info))

    # torch.lobpcg: tol bounds ||r|| / ((||A|| + |lambda|) ||x||); tol * lambda_1 / (||A|| + lambda_1) asks for our
    # relative residual on the smallest pair (as compare_solvers.py does).
    at = torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                 torch.from_numpy(a.indices.astype(np.int64)), torch.from_numpy(a.data),
                                 size=a.shape, device="cuda", dtype=torch.float64)
    x0 = torch.from_numpy(np.random.default_rng(1).standard_normal((a.shape[0], args.k))).cuda()
    torch_tol = args.tol * exact[0] / (12.0 + exact[0])
    torch.lobpcg(at, k=args.k, X=x0.clone(), largest=False, niter=2, tol=torch_tol)  # warm-up
    try:
        (e, v), t = timed(lambda: torch.lobpcg(at, k=args.k, X=x0.clone(), largest=False,
                                               niter=args.torch_maxiter, tol=torch_tol))
        ev = e.cpu().numpy()
        vv = v.cpu().numpy()
        rel = np.linalg.norm(a @ vv - vv * ev[None, :], axis=0) / (np.abs(ev) * np.linalg.norm(vv, axis=0))
        done = bool(np.all(rel <= args.tol))
        print(f"torch.lobpcg:      {t:.3f} s (cap {args.torch_maxiter} iterations), converged {done}, "
              f"worst relative residual {np.max(rel):.1e}")
    except Exception as exc:  # torch raises on some ill-conditioned steps
        print(f"torch.lobpcg failed: {exc}")
        return
    print(f"  torch / blockeigs.lobpcg call: {t / wall:.1f}x (bar >= 10x{'' if done else '; torch not converged: a lower bound'})")


def cg(args):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla

    import blockeigs

    a = laplacian_3d(args.grid)
    ac = csp.csr_matrix(a)
    b = cupy.asarray(np.random.default_rng(1).standard_normal((a.shape[0], args.columns)))
    print(f"block CG: {args.columns} right-hand sides, rtol {args.rtol}, no preconditioner")
    call = lambda maxiter: blockeigs.cg(ac, b, rtol=args.rtol, maxiter=maxiter, return_info=True, backend="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(2)  # warm-up
    (x, info), wall = timed(lambda: call(10000))
    assert isinstance(x, cupy.ndarray)
    worst = float(cupy.max(cupy.linalg.norm(b - ac @ x, axis=0) / cupy.linalg.norm(b, axis=0)))
    print(f"blockeigs.cg:      call {wall:.3f} s (solve {info['timings']['solve']:.3f} s), worst true relative "
          f"residual {worst:.1e}")
    print("  the call's account: " + account(info))

    def one(j, maxiter):
        try:
            return cla.cg(ac, b[:, j], rtol=args.rtol, maxiter=maxiter)
        except TypeError:  # older CuPy: tol
            return cla.cg(ac, b[:, j], tol=args.rtol, maxiter=maxiter)

    one(0, 5)  # warm-up
    solutions, t = timed(lambda: [one(j, 10000)[0] for j in range(args.columns)])
    worst_cupy = max(float(cupy.linalg.norm(b[:, j] - ac @ solutions[j]) / cupy.linalg.norm(b[:, j]))
                     for j in range(args.columns))
    print(f"cupyx cg columns:  {t:.3f} s, worst true relative residual {worst_cupy:.1e}")
    print(f"  cupyx / blockeigs.cg call: {t / wall:.1f}x (bar >= 5x)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True, help="folder of block-eigs")
    p.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "..", "configs",
                                                    "eigs-laplacian-128.yaml"))
    p.add_argument("--grid", type=int, default=128)
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--columns", type=int, default=16)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--torch-maxiter", type=int, default=500)
    args = p.parse_args()
    # The app first: a process that has initialised MPI (blockeigs' import) starts no mpirun of its own.
    app, app_iterations = app_solve_time(os.path.join(args.bin, "block-eigs"), args.config,
                                         ["eigensolver.preconditioner=chebyshev", f"eigensolver.k={args.k}",
                                          f"eigensolver.tolerance={args.tol}"])
    # One process: no mpi4py (one built on another MPI than blockeigs' would refuse the import).
    sys.modules.setdefault("mpi4py", None)
    eigs(args, app, app_iterations)
    cg(args)


if __name__ == "__main__":
    main()
