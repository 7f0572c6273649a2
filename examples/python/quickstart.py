import numpy as np, scipy.sparse as sp, blockeigs       # scripts/python runs this with the package demo.sh built
T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(100, 100))
A = (sp.kron(sp.eye(100), T) + sp.kron(T, sp.eye(100))).tocsr()   # 2D Laplacian, 10^4 rows
w, V, info = blockeigs.lobpcg(A, 8, M="chebyshev", tol=1e-8, return_info=True)  # 8 smallest pairs
B = np.random.default_rng(0).standard_normal((A.shape[0], 16))
X = blockeigs.cg(A, B, M="jacobi", rtol=1e-8)                                   # 16 right-hand sides
print(blockeigs.__version__, w[:3], info["iterations"], info["timings"]["solve"])
