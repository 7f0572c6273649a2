"""blockeigs.lobpcg(A, interval=(a, b)) with a CuPy matrix on the GPU: the 7-point Laplacian GRID^3 window [A, B]
against the closed form (every value and multiplicity), the vectors back as CuPy; prints the call and solve times.
Usage: PYTHONPATH=build/cuda/python python bench/scripts/window_cupy.py GRID A B [SLICES] (exit 1 where a check
fails); under mpirun the ranks share the matrix (and the slices run side by side on groups of them), the vectors
gathered on every rank."""
import sys, time
import numpy as np
import scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp
import blockeigs

n = int(sys.argv[1]); a, b = float(sys.argv[2]), float(sys.argv[3])
slices = int(sys.argv[4]) if len(sys.argv) > 4 else None
one = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
I = sp.identity(n)
A = (sp.kron(sp.kron(I, I), one) + sp.kron(sp.kron(I, one), I) + sp.kron(sp.kron(one, I), I)).tocsr()
lam = 2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
exact = np.sort((lam[:, None, None] + lam[None, :, None] + lam[None, None, :]).ravel())
want = exact[(exact >= a) & (exact <= b)]
Ad = csp.csr_matrix(A)
t = time.perf_counter()
w, V, info = blockeigs.lobpcg(Ad, interval=(a, b), tol=1e-8, slices=slices, gather=True, return_info=True)
call = time.perf_counter() - t
err = np.max(np.abs(w - want) / np.abs(want)) if len(w) == len(want) else float("nan")
R = Ad @ V - V * cp.asarray(w)
rel = float(cp.max(cp.linalg.norm(R, axis=0) / cp.abs(cp.asarray(w))))
print(f"{n}^3 [{a}, {b}]: {len(w)} pairs, closed form {len(want)}; largest relative error {err:.2e}; "
      f"largest relative residual {rel:.2e}; V {type(V).__module__} {V.shape}; call {call:.3f} s; "
      f"solve {info['timings']['solve']:.3f} s; {info['method']}; count {info['window']['count_method']}; "
      f"expected {info['window']['expected'][0]:.1f} +- {info['window']['expected'][1]:.1f}; "
      f"slice groups {info['window']['slice_groups']}; phases {sorted(info['timings']['phases'])}")
ok = len(w) == len(want) and err < 1e-10 and rel < 1e-7 and type(V).__module__.startswith("cupy")
print("OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
