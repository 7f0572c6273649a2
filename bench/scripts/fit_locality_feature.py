#!/usr/bin/env python3
"""Does one column-locality feature make the row_split / merge_based table
better? Fits, per precision and width row, the rule of fit_heuristic.py plus
one threshold on the feature (either direction):

    merge_based if rows < min_rows or max > skew * mean or mean < short_mean
                or feature > t  (or feature < t, whichever fits better)

and reports the fitted and the leave-one-matrix-out scores per precision.
"zero" as the feature gives the rule without it (the baseline).

    python3 bench/scripts/spmm_features.py -o features.csv
    python3 bench/scripts/fit_locality_feature.py bench.csv features.csv zero,distinct32 [4096]

The last argument fixes min_rows (default: the search of fit_heuristic.py).
Results: docs/benchmarks/spmm.md ("Tried, not kept").
"""
import sys, math, csv
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import numpy as np
import fit_heuristic as fh

def r2(x):
    return float(f"{x:.2g}")

def fit_row_feat(cases, min_rows, fname):
    skews = np.array(sorted(set([fh.NEVER] + [r2(x) for x in fh.midpoints(c["max"] / c["mean"] for c in cases)])))
    means = np.array(sorted(set([0.0] + [r2(x) for x in fh.midpoints(c["mean"] for c in cases)])))
    rows = np.array([c["rows"] for c in cases], float)
    mean = np.array([c["mean"] for c in cases]); mx = np.array([c["max"] for c in cases])
    f = np.array([c[fname] for c in cases])
    order = np.argsort(f, kind="stable")
    f, rows, mean, mx = f[order], rows[order], mean[order], mx[order]
    rm = np.array([fh.ratio(cases[i], True) for i in order]); rs = np.array([fh.ratio(cases[i], False) for i in order])
    base = ((rows < min_rows)[None, None, :] | (mx[None, None, :] > skews[:, None, None] * mean[None, None, :])
            | (mean[None, None, :] < means[None, :, None]))
    K = len(cases)
    mm, ms = (rm > fh.WITHIN).astype(float), (rs > fh.WITHIN).astype(float)
    sm, ss = np.minimum(rm, 10.0), np.minimum(rs, 10.0)
    nb = ~base
    best = None
    # candidate cut positions p: between distinct f values (and 0, K)
    cuts = [0] + [p for p in range(1, K) if f[p] > f[p - 1]] + [K]
    def tvalue(p):
        if p == 0: return -math.inf
        if p == K: return math.inf
        lo, hi = f[p-1], f[p]
        t = r2((lo + hi) / 2)
        return t if lo < t <= hi else (lo + hi) / 2
    for d in ("gt", "lt"):
        # merge forced for k >= p (gt: f > t) or k < p (lt: f < t)
        nbf = nb.astype(float)
        def prefix(x):  # sum over k < p, p = 0..K
            c = np.cumsum(nbf * x, axis=-1)
            return np.concatenate([np.zeros(c.shape[:-1] + (1,)), c], axis=-1)
        cidx = np.array(cuts)
        out = []
        for a_m, a_s in ((mm, ms), (sm, ss)):
            A = (base * a_m).sum(-1)[..., None]
            pm, ps = prefix(a_m), prefix(a_s)
            if d == "gt":   # k < p not forced: split; k >= p forced merge
                v = A + ps + (pm[..., -1:] - pm)
            else:           # k < p forced merge; k >= p split
                v = A + pm + (ps[..., -1:] - ps)
            out.append(v[..., cidx])
        miss, slow = out
        S, M, Q = miss.shape
        nonef = np.ones(Q); nonef[(len(cuts) - 1) if d == "gt" else 0] = 0
        keys = (np.broadcast_to(-skews[:, None, None], miss.shape).ravel(),
                np.broadcast_to(means[None, :, None], miss.shape).ravel(),
                np.broadcast_to(nonef[None, None, :], miss.shape).ravel(),
                np.round(slow, 9).ravel(), miss.ravel())
        idx = np.lexsort(keys)[0]
        i, j, q = np.unravel_index(idx, miss.shape)
        key = (int(miss[i, j, q]), round(float(slow[i, j, q]), 9), nonef[q], means[j], -skews[i])
        if best is None or key < best[0]:
            best = (key, float(skews[i]), float(means[j]), None if nonef[q] == 0 else (d, tvalue(cuts[q])))
    return best[1:]

def picks(c, min_rows, rule, fname):
    s, m, ft = rule
    if c["rows"] < min_rows or c["max"] > s * c["mean"] or c["mean"] < m: return True
    if ft is None: return False
    d, t = ft
    return c[fname] > t if d == "gt" else c[fname] < t

def fit_table(cases, fname, min_rows_list=fh.MIN_ROWS):
    best = None
    for min_rows in min_rows_list:
        table, misses = [], 0
        for lo, hi in fh.row_bounds():
            row = []
            for p in ("fp32", "fp64"):
                g = fh.group(cases, p, lo, hi)
                rule = fit_row_feat(g, min_rows, fname) if g else (fh.NEVER, 0.0, None)
                row.append(rule)
                misses += sum(fh.ratio(c, picks(c, min_rows, rule, fname)) > fh.WITHIN for c in g)
            table.append(row)
        if best is None or misses < best[0]:
            best = (misses, min_rows, table)
    return best[1], best[2]

def predict(min_rows, table, c, p, n, fname):
    for (lo, hi), row in zip(fh.row_bounds(), table):
        if n <= hi: return picks(c, min_rows, row[0 if p == "fp32" else 1], fname)
    return picks(c, min_rows, table[-1][0 if p == "fp32" else 1], fname)

def evaluate(cases, min_rows, table, fname):
    out = {"fp32": [0, 0], "fp64": [0, 0]}
    for (m, p, n), c in cases.items():
        out[p][0] += fh.ratio(c, predict(min_rows, table, c, p, n, fname)) <= fh.WITHIN; out[p][1] += 1
    return out

if __name__ == "__main__":
    cases = fh.load(sys.argv[1])
    feats = {r["matrix"]: r for r in csv.DictReader(open(sys.argv[2]))}
    fnames = sys.argv[3].split(",")
    mrl = [int(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else fh.MIN_ROWS
    cases = {k: v for k, v in cases.items() if k[0] in feats}
    for k, v in cases.items():
        for fn in ["band", "near64", "near1k", "spread8", "spread32", "distinct32", "tiles32"]:
            v[fn] = float(feats[k[0]][fn])
        v["zero"] = 0.0
    print("cases", len(cases))
    for fname in fnames:
        mr, t = fit_table(cases, fname, mrl)
        fit = evaluate(cases, mr, t, fname)
        mats = sorted({k[0] for k in cases})
        loo = {"fp32": [0, 0], "fp64": [0, 0]}
        for held in mats:
            train = {k: v for k, v in cases.items() if k[0] != held}
            r, tt = fit_table(train, fname, mrl)
            e = evaluate({k: v for k, v in cases.items() if k[0] == held}, r, tt, fname)
            for p in e: loo[p][0] += e[p][0]; loo[p][1] += e[p][1]
        print(fname, "min_rows", mr, "fit", {p: f"{a}/{b} {100*a/b:.1f}%" for p, (a, b) in fit.items()},
              "loo", {p: f"{a}/{b} {100*a/b:.1f}%" for p, (a, b) in loo.items()}, flush=True)
        for (lo, hi), row in zip(fh.row_bounds(), t): print("  ", hi, row)
