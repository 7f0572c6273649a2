"""The twisted (Bloch) Laplacian's closed form against a block-eigs run: reads the pair table the run printed
(stdin) and compares each eigenvalue with the NX x NY x NZ grid's smallest with phases TX TY TZ (or, with no
phases given, the Dirichlet Laplacian's). Prints the largest relative error; exit 1 above LIMIT.
Usage: block-eigs ... | python bench/scripts/bloch_check.py NX NY NZ LIMIT [TX TY TZ]"""
import re, sys
import numpy as np

nx, ny, nz, limit = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
phases = [float(t) for t in sys.argv[5:8]]
lines = sys.stdin.read().splitlines()
table = next((i for i, line in enumerate(lines) if re.match(r"\s+pair\s+eigenvalue", line)), len(lines))
values = []
for line in lines[table + 1:]:  # the pair table, to its first blank line
    m = re.match(r"\s+\d+\s+([-+0-9.e]+)\s", line)
    if not m:
        break
    values.append(float(m.group(1)))
if phases:
    f = [2 - 2 * np.cos((2 * np.pi * np.arange(n) + t) / n) for n, t in zip((nx, ny, nz), phases)]
else:
    f = [2 - 2 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1)) for n in (nx, ny, nz)]
exact = np.sort((f[0][:, None, None] + f[1][None, :, None] + f[2][None, None, :]).ravel())[: len(values)]
error = np.max(np.abs(np.array(values) - exact) / exact) if values else float("nan")
print(f"{len(values)} eigenvalues against the closed form: largest relative error {error:.2e}")
sys.exit(0 if values and error <= limit else 1)
