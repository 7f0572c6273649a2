#!/usr/bin/env python3
"""Side by side on one GPU, same matrix, same tolerance, one script run:

  eigs:   block-eigs  vs  torch.lobpcg  vs  cupyx.scipy.sparse.linalg.lobpcg
  eigs-cpu: block-eigs on the CPU backend  vs  scipy.sparse.linalg.lobpcg, on the same cores (no GPU needed)
  cg:     block-cg    vs  cupyx.scipy.sparse.linalg.cg, one column at a time
  pencil: block-eigs on K x = lambda M x (fem_p1 3D)  vs  block-eigs on K x = lambda x (the same
          grid, the stiffness alone)  vs  torch.lobpcg(K, B=M) given the same test (compare_pencil)

and then the same with the Chebyshev polynomial preconditioner (degree
--cheb-degree, interval [lower b, b], Jacobi-scaled unless --cheb-no-jacobi,
in --cheb-precision, by default the apps' auto; --cheb-also-precision adds
rows of ours in the other precisions it names, fp32,fp64 for instance):
block-eigs and block-cg build it themselves; CuPy's lobpcg and cg get the same
polynomial, on the interval block-eigs/block-cg printed, as a LinearOperator
(our recurrence in CuPy), so the ratio measures the implementation, not the
algorithm. torch.lobpcg takes its preconditioner (iK) only as a tensor, and
p(A) is dense, so torch runs unpreconditioned only.

The matrix is the 7-point Laplacian on an N^3 grid (Dirichlet), whose
eigenvalues are known in closed form, so every solver's eigenvalue error is
reported. Each library's own stopping test differs, so each is given the
tolerance that asks for what we ask (documented below) and then every result
is re-checked here with the same measure: ||A x - lambda x|| / (|lambda| ||x||).

usage: compare_solvers.py eigs|eigs-cpu|cg|pencil --bin DIR [--grid 128] [--k 16] [--tol 1e-5]
                          [--columns 16] [--rtol 1e-8] [--maxiter N]
                          [--cheb-degree 0 (auto)] [--cheb-lower 0 (auto)] [--cheb-no-jacobi] [--skip-chebyshev]
                          [--cheb-precision auto|fp32|fp64] [--cheb-also-precision fp64[,fp32]]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp


def laplacian_3d(n):
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    # x fastest, like our generator (the spectrum does not depend on the order)
    a = sp.kron(sp.kron(eye, eye), t) + sp.kron(sp.kron(eye, t), eye) + sp.kron(sp.kron(t, eye), eye)
    return a.tocsr()


def exact_smallest(n, k):
    one = 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
    m = min(n, k + 2)
    sums = (one[:m, None, None] + one[None, :m, None] + one[None, None, :m]).ravel()
    return np.sort(sums)[:k]


def fem_p1_3d(n):
    """fem_p1's trilinear stiffness K and mass M on the unit cube, n interior nodes per direction, as block-eigs
    generates them (io/fem_p1.hpp): integer stencils summed first, so the face couplings of K are exact zeros."""
    h = 1.0 / (n + 1)
    kk = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    mm = sp.diags([np.ones(n - 1), 4 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csr")
    k = (sp.kron(sp.kron(mm, mm), kk) + sp.kron(sp.kron(mm, kk), mm) + sp.kron(sp.kron(kk, mm), mm)).tocsr()
    m = sp.kron(sp.kron(mm, mm), mm).tocsr()
    for x in (k, m):
        x.sum_duplicates()
        x.eliminate_zeros()
    return (k * (h / 36.0)).tocsr(), (m * (h ** 3 / 216.0)).tocsr()


def fem_p1_modes(n, k):
    """The lowest modes of the cube: (kappa, mu), K and M's eigenvalues on the same sine vector
    (K x = kappa x, M x = mu x), from the 1D ones (2 - 2cos t)/h and h (2 + cos t)/3; the pencil's is kappa / mu.
    The k lowest of the pencil, in its order; the k lowest of K alone: np.sort(kappa of every mode)[:k]."""
    h = 1.0 / (n + 1)
    m = min(n, k + 2)
    t = np.pi * np.arange(1, m + 1) * h
    kap, mu = (2 - 2 * np.cos(t)) / h, h * (2 + np.cos(t)) / 3
    K = (kap[:, None, None] * mu[None, :, None] * mu[None, None, :] + mu[:, None, None] * kap[None, :, None] * mu[None, None, :]
         + mu[:, None, None] * mu[None, :, None] * kap[None, None, :]).ravel()
    M = (mu[:, None, None] * mu[None, :, None] * mu[None, None, :]).ravel()
    order = np.argsort(K / M)[:k]
    return K[order], M[order], np.sort(K)[:k]


def run_ours(binary, config, nprocs=1, overrides=()):
    # Unbound, as the Python solvers run: Open MPI's default binds a lone rank to
    # core 0, whose interrupts lengthened the host's share of an H200 solve by
    # ~0.05 s (docs/benchmarks/solvers.md).
    cmd = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(nprocs), binary, config]
    for o in overrides:
        cmd += ["--set", o]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 3):
        print(proc.stdout, proc.stderr, file=sys.stderr)
        raise SystemExit(f"{binary} failed with exit code {proc.returncode}")
    return proc.stdout, wall, proc.returncode


def chebyshev_setting(args, precision=None):
    jacobi = "false" if args.cheb_no_jacobi else "true"
    degree = args.cheb_degree or "auto"
    lower = args.cheb_lower or "auto"
    precision = precision or args.cheb_precision
    return f"{{type: chebyshev, degree: {degree}, lower: {lower}, jacobi: {jacobi}, precision: {precision}}}"


def also_precisions(args):
    return [p for p in (args.cheb_also_precision or "").split(",") if p and p != "none"]


def printed_degree(out):
    return int(re.search(r"chebyshev, degree ([0-9]+)", out).group(1))


def printed_precision(out):
    """The precision the polynomial ran in (the 'precond' line: "in fp32 (auto)")."""
    m = re.search(r"chebyshev, degree [0-9]+(?: \(auto\))?, in (fp32|fp64)", out)
    return m.group(1) if m else "fp64"


def printed_interval(out):
    """The interval and shift our app built the polynomial on (its 'precond' line)."""
    m = re.search(r"1/x on \[([-0-9.e+]+), ([-0-9.e+]+)\](?: \(lower auto\))? of (s I - )?", out)
    shift = re.search(r", s = ([-0-9.e+]+)", out)
    return float(m.group(1)), float(m.group(2)), (float(shift.group(1)) if m.group(3) else 0.0)


def chebyshev_linear_operator(xp, la, a_dev, diag, lo, hi, degree, shift=0.0):
    """M = D^-1/2 p(B) D^-1/2 applied as block-eigs applies it (solver/precond/chebyshev_preconditioner.cpp):
    B = S for the smallest end, shift I - S for the largest, S = D^-1/2 A D^-1/2 (D = I without Jacobi)."""
    theta, delta = (lo + hi) / 2, (hi - lo) / 2
    sigma = theta / delta
    sign = -1.0 if shift else 1.0
    dinv = 1.0 / diag

    def apply(r):
        vector = r.ndim == 1
        r = r.reshape(r.shape[0], -1)
        q = r.copy()
        e = dinv[:, None] * r / theta
        w = e.copy()
        rho = 1 / sigma
        for _ in range(degree):
            q -= sign * (a_dev @ e)
            if shift:
                q -= shift * diag[:, None] * e
            nxt = 1 / (2 * sigma - rho)
            e = nxt * rho * e + (2 * nxt / delta) * dinv[:, None] * q
            w += e
            rho = nxt
        return w.ravel() if vector else w

    n = a_dev.shape[0]
    return la.LinearOperator((n, n), matvec=apply, matmat=apply, dtype=xp.float64)


def sync():
    import cupy
    import torch
    torch.cuda.synchronize()
    cupy.cuda.Device().synchronize()


def relative_residuals(matvec, vectors, values):
    r = matvec(vectors) - vectors * values[None, :]
    return np.linalg.norm(r, axis=0) / (np.abs(values) * np.linalg.norm(vectors, axis=0))


def compare_eigs(args):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    import torch

    n = args.grid
    a = laplacian_3d(n)
    exact = exact_smallest(n, args.k)
    rows = a.shape[0]
    print(f"7-point Laplacian {n}^3: {rows} rows, {a.nnz} nonzeros; k = {args.k}, relative tolerance {args.tol}")
    results = []

    # block-eigs (its own timer: solve only, the matrix already on the GPU)
    out, wall, code = run_ours(os.path.join(args.bin, "block-eigs"), args.config)
    solve = float(re.search(r"solve time +([0-9.]+) s", out).group(1))
    iters = int(re.search(r"iterations +([0-9]+)", out).group(1))
    table = re.findall(r"^ *(\d+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +(yes|NO)", out, re.M)
    ours_values = np.array([float(t[1]) for t in table])
    ours_rel = np.array([float(t[3]) for t in table])
    results.append(("block-eigs", solve, iters, ours_values, ours_rel, code == 0))
    # The others get up to twice our iteration count (at least 200): if they have not
    # converged by then, their time is a lower bound on what they would need.
    maxiter = min(args.maxiter, max(200, 2 * iters))
    print(f"block-eigs: {solve:.3f} s, {iters} iterations; others capped at {maxiter} iterations")
    print("block-eigs: " + re.search(r"^solve time.*$", out, re.M).group(0))

    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((rows, args.k))
    indptr, indices, data = a.indptr, a.indices, a.data

    # torch.lobpcg: tol is its backward-error bound ||r|| / ((||A|| + |lambda|) ||x||); ask for
    # tol * lambda_1 / (||A|| + lambda_1) so that it demands our relative residual on the smallest pair.
    at = torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)), torch.from_numpy(indices.astype(np.int64)),
                                 torch.from_numpy(data), size=a.shape, device="cuda", dtype=torch.float64)
    xt = torch.from_numpy(x0).cuda()
    try:
        torch.lobpcg(at, k=args.k, X=xt.clone(), largest=False, niter=1)
    except Exception as exc:  # older builds want COO
        print("torch.lobpcg with CSR failed, using COO:", exc)
        at = at.to_sparse_coo().coalesce()
    norm_a = 12.0
    torch_tol = args.tol * exact[0] / (norm_a + exact[0])
    torch.lobpcg(at, k=args.k, X=xt.clone(), largest=False, niter=2, tol=torch_tol)  # warm-up
    sync()
    start = time.perf_counter()
    try:
        e, v = torch.lobpcg(at, k=args.k, X=xt.clone(), largest=False, niter=maxiter, tol=torch_tol)
        sync()
        t = time.perf_counter() - start
        ev = e.cpu().numpy()
        rel = relative_residuals(lambda y: (at @ torch.from_numpy(y).cuda()).cpu().numpy(), v.cpu().numpy(), ev)
        results.append(("torch.lobpcg", t, maxiter, ev, rel, bool(np.all(rel <= args.tol))))
    except Exception as exc:  # torch raises on some ill-conditioned steps
        results.append(("torch.lobpcg", time.perf_counter() - start, 0, np.full(args.k, np.nan), np.full(args.k, np.nan), False))
        print("torch.lobpcg failed:", exc)

    if args.skip_cupy:
        return print_eigs_table(args, exact, results)
    # cupyx lobpcg (scipy's algorithm): tol is an absolute bound on ||r|| for unit x;
    # tol * lambda_1 demands our relative residual on the smallest pair.
    ac = csp.csr_matrix((cupy.asarray(data), cupy.asarray(indices), cupy.asarray(indptr)), shape=a.shape)
    xc = cupy.asarray(x0)
    cla.lobpcg(ac, xc.copy(), largest=False, maxiter=2, tol=args.tol * exact[0])  # warm-up
    sync()
    start = time.perf_counter()
    w, v = cla.lobpcg(ac, xc.copy(), largest=False, maxiter=maxiter, tol=args.tol * exact[0])
    sync()
    t = time.perf_counter() - start
    wv = cupy.asnumpy(w)
    order = np.argsort(wv)
    wv = wv[order]
    vv = cupy.asnumpy(v)[:, order]
    rel = relative_residuals(lambda y: cupy.asnumpy(ac @ cupy.asarray(y)), vv, wv)
    results.append(("cupyx lobpcg", t, maxiter, wv, rel, bool(np.all(rel <= args.tol))))
    if not args.skip_chebyshev:
        compare_eigs_chebyshev(args, a, ac, x0, exact, results)
    print_eigs_table(args, exact, results)


def compare_eigs_cpu(args):
    """block-eigs on the CPU backend against SciPy's lobpcg on the same cores, unpreconditioned. Ours is timed
    twice: its solve, and mpirun's wall (set-up, the output and mpirun included) against SciPy's call alone."""
    import scipy.sparse.linalg as sla

    n = args.grid
    a = laplacian_3d(n)
    exact = exact_smallest(n, args.k)
    print(f"7-point Laplacian {n}^3: {a.shape[0]} rows, {a.nnz} nonzeros; k = {args.k}, relative tolerance {args.tol}")
    out, wall, code = run_ours(os.path.join(args.bin, "block-eigs"), args.config, overrides=["execution.backend=cpu"])
    solve = float(re.search(r"solve time +([0-9.]+) s", out).group(1))
    iters = int(re.search(r"iterations +([0-9]+)", out).group(1))
    table = re.findall(r"^ *(\d+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +(yes|NO)", out, re.M)
    results = [("block-eigs (cpu)", solve, iters, np.array([float(t[1]) for t in table]),
                np.array([float(t[3]) for t in table]), code == 0)]
    print(re.search(r"^threads.*$", out, re.M).group(0))
    maxiter = min(args.maxiter, max(200, 2 * iters))
    x0 = np.random.default_rng(1).standard_normal((a.shape[0], args.k))
    # SciPy's tol bounds ||r|| for unit x: tol * lambda_1 asks for our relative residual on the smallest pair.
    start = time.perf_counter()
    w, v, history = sla.lobpcg(a, x0, largest=False, maxiter=maxiter, tol=args.tol * exact[0],
                               retResidualNormsHistory=True)
    t = time.perf_counter() - start
    order = np.argsort(w)
    w, v = w[order], v[:, order]
    rel = relative_residuals(lambda y: a @ y, v, w)
    results.append(("scipy lobpcg", t, len(history), w, rel, bool(np.all(rel <= args.tol))))
    print(f"block-eigs: solve {solve:.3f} s, mpirun's wall {wall:.3f} s, {iters} iterations "
          f"({1e3 * solve / iters:.0f} ms each); SciPy {t:.3f} s ({t / wall:.1f}x our wall), {len(history)} iterations "
          f"({1e3 * t / len(history):.0f} ms each; capped at {maxiter})")
    print_eigs_table(args, exact, results)


def compare_eigs_chebyshev(args, a, ac, x0, exact, results):
    """block-eigs and cupyx lobpcg with the same Chebyshev polynomial."""
    import cupy
    import cupyx.scipy.sparse.linalg as cla

    first, out = len(results), None
    for precision in [args.cheb_precision] + also_precisions(args):
        if out is not None and precision == printed_precision(out):
            continue  # the first row ran in it already
        run = run_ours(os.path.join(args.bin, "block-eigs"), args.config,
                       overrides=[f"eigensolver.preconditioner={chebyshev_setting(args, precision)}"])
        ours_chebyshev_row(run, results)
        out = out or run[0]  # CuPy gets the polynomial of the first
    iters = results[first][2]
    degree = printed_degree(out)
    if args.skip_cupy:
        return
    lo, hi, shift = printed_interval(out)
    diag = cupy.asarray(a.diagonal()) if not args.cheb_no_jacobi else cupy.ones(a.shape[0])
    m = chebyshev_linear_operator(cupy, cla, ac, diag, lo, hi, degree, shift)
    maxiter = min(args.maxiter, max(200, 2 * iters))
    xc = cupy.asarray(x0)
    cla.lobpcg(ac, xc.copy(), M=m, largest=False, maxiter=2, tol=args.tol * exact[0])  # warm-up
    sync()
    start = time.perf_counter()
    w, v = cla.lobpcg(ac, xc.copy(), M=m, largest=False, maxiter=maxiter, tol=args.tol * exact[0])
    sync()
    t = time.perf_counter() - start
    wv = cupy.asnumpy(w)
    order = np.argsort(wv)
    wv = wv[order]
    vv = cupy.asnumpy(v)[:, order]
    rel = relative_residuals(lambda y: cupy.asnumpy(ac @ cupy.asarray(y)), vv, wv)
    results.append((f"cupyx lobpcg, same polynomial (cap {maxiter})", t, maxiter, wv, rel,
                    bool(np.all(rel <= args.tol))))


def ours_chebyshev_row(run, results):
    """block-eigs with the polynomial: its table row, named by degree and precision."""
    out, wall, code = run
    solve = float(re.search(r"solve time +([0-9.]+) s", out).group(1))
    iters = int(re.search(r"iterations +([0-9]+)", out).group(1))
    table = re.findall(r"^ *(\d+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +(yes|NO)", out, re.M)
    name = f"block-eigs, chebyshev {printed_degree(out)}, {printed_precision(out)}"
    results.append((name, solve, iters, np.array([float(t[1]) for t in table]),
                    np.array([float(t[3]) for t in table]), code == 0))
    print(f"{name}: {re.search(r'^precond .*$', out, re.M).group(0)}")
    print(f"{name}: " + re.search(r"^solve time.*$", out, re.M).group(0))


def print_eigs_table(args, exact, results):
    print()
    print("| solver | solve time (s) | iterations (cap for others) | max eigenvalue rel. error | max rel. residual | all <= tol | speedup of block-eigs |")
    print("|---|---|---|---|---|---|---|")
    chebyshev_ref = next((t for name, t, *_ in results if name.startswith("block-eigs, chebyshev")), None)
    for name, t, it, values, rel, ok in results:
        # rows with the polynomial are measured against block-eigs with it
        ref = chebyshev_ref if ("chebyshev" in name or "same polynomial" in name) else results[0][1]
        err = np.max(np.abs(values[: args.k] - exact) / exact) if len(values) >= args.k else float("nan")
        print(f"| {name} | {t:.3f} | {it} | {err:.2e} | {np.nanmax(rel):.2e} | {'yes' if ok else 'NO'} | {t / ref:.1f}x |")


def cupy_cg(cla, a, b, rtol, maxiter, callback):
    # CuPy follows SciPy's rename of tol to rtol in newer versions.
    try:
        return cla.cg(a, b, rtol=rtol, maxiter=maxiter, callback=callback)
    except TypeError:
        return cla.cg(a, b, tol=rtol, maxiter=maxiter, callback=callback)


def cupy_cg_columns(cla, cupy, ac, b, rtol, maxiter, m=None):
    """cupyx cg column by column (optionally preconditioned); seconds, iteration counts, worst true residual."""
    def one(j, cap, count):
        kwargs = {"maxiter": cap, "callback": lambda xk: count.__setitem__(0, count[0] + 1)}
        if m is not None:
            kwargs["M"] = m
        try:
            return cla.cg(ac, b[:, j], rtol=rtol, **kwargs)
        except TypeError:
            return cla.cg(ac, b[:, j], tol=rtol, **kwargs)

    one(0, 5, [0])  # warm-up
    sync()
    start = time.perf_counter()
    counts, solutions = [], []
    for j in range(b.shape[1]):
        count = [0]
        x, info = one(j, maxiter, count)
        counts.append(count[0])
        solutions.append(x)
    sync()
    t = time.perf_counter() - start
    worst = max(float(cupy.linalg.norm(b[:, j] - ac @ solutions[j]) / cupy.linalg.norm(b[:, j]))
                for j in range(b.shape[1]))
    return t, counts, worst


def compare_cg(args):
    import cupy
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla

    n = args.grid
    a = laplacian_3d(n)
    rows = a.shape[0]
    print(f"7-point Laplacian {n}^3: {rows} rows; {args.columns} random right-hand sides, rtol {args.rtol}")
    out, wall, code = run_ours(os.path.join(args.bin, "block-cg"), args.config)
    solve = float(re.search(r"time ([0-9.]+) s", out).group(1))
    iters = int(re.search(r"iterations ([0-9]+);", out).group(1))
    true_rel = [float(x) for x in re.findall(r"yes +[-0-9.e+]+ +[-0-9.e+]+ +([-0-9.e+]+)", out)]
    print("block-cg: " + re.search(r"^iterations .*$", out, re.M).group(0))

    ac = csp.csr_matrix((cupy.asarray(a.data), cupy.asarray(a.indices), cupy.asarray(a.indptr)), shape=a.shape)
    rng = np.random.default_rng(1)
    b = cupy.asarray(rng.uniform(-1, 1, (rows, args.columns)))
    counts, solutions = [], []
    cupy_cg(cla, ac, b[:, 0], args.rtol, 5, None)  # warm-up
    sync()
    start = time.perf_counter()
    for j in range(args.columns):
        count = [0]
        x, info = cupy_cg(cla, ac, b[:, j], args.rtol, 10 * args.maxiter,
                          lambda xk: count.__setitem__(0, count[0] + 1))
        counts.append(count[0])
        solutions.append(x)
    sync()
    t = time.perf_counter() - start
    worst = max(float(cupy.linalg.norm(b[:, j] - ac @ solutions[j]) / cupy.linalg.norm(b[:, j]))
                for j in range(args.columns))
    print()
    print("| solver | solve time (s) | iterations | max true rel. residual | speedup of block-cg |")
    print("|---|---|---|---|---|")
    print(f"| block-cg | {solve:.3f} | {iters} (block) | {max(true_rel) if true_rel else float('nan'):.2e} | 1.0x |")
    print(f"| cupyx cg, one column at a time | {t:.3f} | {sum(counts)} total, {min(counts)}-{max(counts)} per column | {worst:.2e} | {t / solve:.1f}x |")
    if args.skip_chebyshev:
        return
    rows = []
    for precision in [args.cheb_precision] + also_precisions(args):
        if rows and precision == printed_precision(rows[0][4]):
            continue  # the first row ran in it already
        out, wall, code = run_ours(os.path.join(args.bin, "block-cg"), args.config,
                                   overrides=[f"block_cg.preconditioner={chebyshev_setting(args, precision)}"])
        name = f"block-cg, chebyshev {printed_degree(out)}, {printed_precision(out)}"
        ptrue = [float(x) for x in re.findall(r"yes +[-0-9.e+]+ +[-0-9.e+]+ +([-0-9.e+]+)", out)]
        rows.append((name, float(re.search(r"time ([0-9.]+) s", out).group(1)),
                     int(re.search(r"iterations ([0-9]+);", out).group(1)), max(ptrue) if ptrue else float("nan"), out))
        print(f"{name}: " + re.search(r"^precond .*$", out, re.M).group(0))
        print(f"{name}: " + re.search(r"^iterations .*$", out, re.M).group(0))
    out, psolve = rows[0][4], rows[0][1]
    degree = printed_degree(out)
    lo, hi, _ = printed_interval(out)
    diag = cupy.asarray(a.diagonal()) if not args.cheb_no_jacobi else cupy.ones(rows)
    m = chebyshev_linear_operator(cupy, cla, ac, diag, lo, hi, degree)
    pt, pcounts, pworst = cupy_cg_columns(cla, cupy, ac, b, args.rtol, 10 * args.maxiter, m)
    for name, rsolve, riters, rtrue, _ in rows:
        print(f"| {name} | {rsolve:.3f} | {riters} (block) | {rtrue:.2e} | {solve / rsolve:.1f}x over block-cg |")
    print(f"| cupyx cg, same polynomial, one column at a time | {pt:.3f} | {sum(pcounts)} total, "
          f"{min(pcounts)}-{max(pcounts)} per column | {pworst:.2e} | {pt / psolve:.1f}x (vs {rows[0][0]}) |")


def parse_ours(out):
    solve = float(re.search(r"solve time +([0-9.]+) s", out).group(1))
    iters = int(re.search(r"iterations +([0-9]+)", out).group(1))
    table = re.findall(r"^ *(\d+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +(yes|NO)", out, re.M)
    return solve, iters, np.array([float(t[1]) for t in table]), np.array([float(t[3]) for t in table])


def compare_pencil(args):
    """K x = lambda M x on the 3D fem_p1 grid: block-eigs with B, block-eigs on K x = lambda x alone (what B
    costs: within 2x is the target), and torch.lobpcg(K, B=M) given the same test (at least 4x slower is the target).

    torch's test (torch/_lobpcg.py): ||r|| < tol_t ||x|| (A_norm + lambda B_norm), with A_norm = ||K X0|| / ||X0||
    and B_norm = ||M X0|| / ||X0|| (Frobenius) from its start block X0. Ours: ||r|| <= tol |lambda| ||M x||. The
    wanted x are sine modes, eigenvectors of K and M alike (K x = kappa x, M x = mu x, lambda = kappa / mu), so
    ours reads ||r|| <= tol kappa ||x||, and tol_t = min_j tol kappa_j / (A_norm + lambda_j B_norm) asks at least
    that of every pair. Every result is re-checked here with our measure."""
    import torch

    n = args.grid
    a, b = fem_p1_3d(n)
    kappa, mu, stiffness_alone = fem_p1_modes(n, args.k)
    exact = kappa / mu
    rows = a.shape[0]
    print(f"fem_p1 3D {n}^3: {rows} rows, K {a.nnz} and M {b.nnz} nonzeros; k = {args.k}, relative tolerance {args.tol}")
    results = []
    out, wall, code = run_ours(os.path.join(args.bin, "block-eigs"), args.config)
    solve, iters, values, rel = parse_ours(out)
    results.append(("block-eigs, K x = lambda M x", solve, iters, values, rel, code == 0, exact))
    print("block-eigs (B):  " + re.search(r"^iterations.*$", out, re.M).group(0))
    print("block-eigs (B):  " + re.search(r"^solve time.*$", out, re.M).group(0))
    # The standard problem on the same grid: the config without its matrix_b section.
    text = open(args.config).read()
    standard = re.sub(r"^matrix_b:\n(?:[ \t]+.*\n)*", "", text, flags=re.M)
    standard_config = "/tmp/compare-pencil-standard.yaml"
    with open(standard_config, "w") as f:
        f.write(standard)
    out, wall, code = run_ours(os.path.join(args.bin, "block-eigs"), standard_config)
    s_solve, s_iters, s_values, s_rel = parse_ours(out)
    results.append(("block-eigs, K x = lambda x (same grid)", s_solve, s_iters, s_values, s_rel, code == 0,
                    stiffness_alone))
    print("block-eigs (I):  " + re.search(r"^iterations.*$", out, re.M).group(0))
    print("block-eigs (I):  " + re.search(r"^solve time.*$", out, re.M).group(0))

    maxiter = min(args.maxiter, max(200, 2 * iters))
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((rows, args.k))
    def tensor(m):
        return torch.sparse_csr_tensor(torch.from_numpy(m.indptr.astype(np.int64)),
                                       torch.from_numpy(m.indices.astype(np.int64)), torch.from_numpy(m.data),
                                       size=m.shape, device="cuda", dtype=torch.float64)
    at, bt = tensor(a), tensor(b)
    xt = torch.from_numpy(x0).cuda()
    a_norm = float(torch.linalg.norm(at @ xt) / torch.linalg.norm(xt))
    b_norm = float(torch.linalg.norm(bt @ xt) / torch.linalg.norm(xt))
    torch_tol = float(np.min(args.tol * kappa / (a_norm + exact * b_norm)))
    print(f"torch.lobpcg: tol {torch_tol:.3e} (A_norm {a_norm:.3e}, B_norm {b_norm:.3e}), capped at {maxiter} iterations")
    torch.lobpcg(at, k=args.k, B=bt, X=xt.clone(), largest=False, niter=2, tol=torch_tol)  # warm-up
    sync()
    start = time.perf_counter()
    try:
        e, v = torch.lobpcg(at, k=args.k, B=bt, X=xt.clone(), largest=False, niter=maxiter, tol=torch_tol)
        sync()
        t = time.perf_counter() - start
        ev, vv = e.cpu().numpy(), v.cpu().numpy()
        r = a @ vv - (b @ vv) * ev[None, :]
        rel = np.linalg.norm(r, axis=0) / (np.abs(ev) * np.linalg.norm(b @ vv, axis=0))
        results.append(("torch.lobpcg(K, B=M)", t, maxiter, ev, rel, bool(np.all(rel <= args.tol)), exact))
    except Exception as exc:  # torch raises on some ill-conditioned steps
        results.append(("torch.lobpcg(K, B=M)", time.perf_counter() - start, 0, np.full(args.k, np.nan),
                        np.full(args.k, np.nan), False, exact))
        print("torch.lobpcg failed:", exc)

    print()
    print("| solver | solve time (s) | iterations (cap for torch) | max eigenvalue rel. error | max rel. residual | all <= tol | time / block-eigs with B |")
    print("|---|---|---|---|---|---|---|")
    ref = results[0][1]
    for name, t, it, values, rel, ok, want in results:
        err = np.max(np.abs(values[: args.k] - want) / want) if len(values) >= args.k else float("nan")
        print(f"| {name} | {t:.3f} | {it} | {err:.2e} | {np.nanmax(rel):.2e} | {'yes' if ok else 'NO'} | {t / ref:.2f}x |")
    print(f"\nB's cost: {solve / s_solve:.2f}x the standard problem's time (target: within 2x); "
          f"torch.lobpcg(K, B=M): {results[2][1] / solve:.1f}x block-eigs' time (target: at least 4x)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["eigs", "eigs-cpu", "cg", "pencil"])
    p.add_argument("--bin", required=True)
    p.add_argument("--config")
    p.add_argument("--grid", type=int, default=128)
    p.add_argument("--k", type=int, default=16)
    p.add_argument("--tol", type=float, default=1e-5)
    p.add_argument("--columns", type=int, default=16)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--maxiter", type=int, default=1000)
    p.add_argument("--skip-cupy", action="store_true", help="eigs: leave out cupyx lobpcg (slowest, ~70 s at 128^3)")
    p.add_argument("--cheb-degree", type=int, default=0,
                   help="Chebyshev preconditioner degree (products per apply); 0: the apps' auto")
    p.add_argument("--cheb-lower", type=float, default=0,
                   help="its interval's lower end as a fraction of the upper; 0: the apps' auto")
    p.add_argument("--cheb-no-jacobi", action="store_true", help="the polynomial in A rather than D^-1/2 A D^-1/2")
    p.add_argument("--skip-chebyshev", action="store_true", help="only the unpreconditioned rows")
    p.add_argument("--cheb-precision", default="auto", choices=["auto", "fp32", "fp64"],
                   help="the polynomial's precision for our first Chebyshev row (CuPy's polynomial runs in fp64)")
    p.add_argument("--cheb-also-precision", default="",
                   help="comma-separated precisions for more Chebyshev rows of ours (no CuPy), e.g. fp32,fp64; "
                        "one the first row ran in is left out")
    args = p.parse_args()
    if args.what == "eigs":
        args.config = args.config or "bench/configs/eigs-laplacian-128.yaml"
        compare_eigs(args)
    elif args.what == "eigs-cpu":
        args.config = args.config or "bench/configs/eigs-laplacian-64-cpu.yaml"
        compare_eigs_cpu(args)
    elif args.what == "pencil":
        args.config = args.config or "bench/configs/eigs-fem-p1-128.yaml"
        compare_pencil(args)
    else:
        args.config = args.config or "bench/configs/cg-laplacian-128.yaml"
        compare_cg(args)


if __name__ == "__main__":
    main()
