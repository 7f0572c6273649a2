"""Spectral clustering of a graph from ../shared/data/matrices with blockeigs.lobpcg.

    PYTHONPATH=build/cpu/python /usr/bin/python3 examples/python/spectral_clustering.py [name] [clusters]
    mpirun -np 2 ... the same (each rank holds the graph; the embedding is gathered)

The normalized Laplacian L = I - D^-1/2 W D^-1/2 has the eigenvector D^1/2 1 for eigenvalue 0; it is given as
the constraint Y, and the next eigenvectors embed the vertices, which k-means then clusters.
"""
import gzip
import pathlib
import sys

import numpy as np
import scipy.cluster.vq
import scipy.io
import scipy.sparse as sp
import scipy.sparse.csgraph

import blockeigs

name = sys.argv[1] if len(sys.argv) > 1 else "polblogs"
clusters = int(sys.argv[2]) if len(sys.argv) > 2 else 4
data = pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "matrices"
with gzip.open(data / f"{name}.mtx.gz") as f:
    W = sp.csr_matrix(scipy.io.mmread(f), dtype=float)
W = ((W + W.T) > 0).astype(float)        # an undirected, unweighted graph
W = (W - sp.diags(W.diagonal())).tocsr()  # no self-loops
W.eliminate_zeros()
_, component = scipy.sparse.csgraph.connected_components(W, directed=False)
keep = component == np.bincount(component).argmax()  # the largest connected component
W = W[keep][:, keep].tocsr()
degree = np.asarray(W.sum(axis=1)).ravel()
d = 1 / np.sqrt(degree)
L = sp.identity(W.shape[0], format="csr") - sp.diags(d) @ W @ sp.diags(d)

w, V, info = blockeigs.lobpcg(L, clusters, Y=np.sqrt(degree)[:, None], M="jacobi", tol=1e-5, maxiter=5000,
                              gather=True, return_info=True)
embedding = V * d[:, None]               # the random walk's eigenvectors D^-1/2 v
embedding /= np.linalg.norm(embedding, axis=1, keepdims=True) + 1e-300
_, labels = scipy.cluster.vq.kmeans2(embedding, clusters, seed=1, minit="++")
print(f"{name}: {W.shape[0]} vertices, {W.nnz // 2} edges; eigenvalues {np.round(w, 5)} "
      f"({info['iterations']} iterations, {info['timings']['solve']:.2f} s)")
print("cluster sizes", np.bincount(labels, minlength=clusters))
