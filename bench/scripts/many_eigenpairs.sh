#!/usr/bin/env bash
# many_eigenpairs.sh BIN OUT "NAME RANKS K METHOD [PRECONDITIONER];..."
# block-eigs on the 128^3 7-point Laplacian (the generator, relative test
# 1e-8), one case per entry: RANKS GPUs, K smallest pairs, METHOD (lobpcg,
# chebyshev_filter, auto) and a preconditioner (default none). Each case's
# output goes to OUT/NAME.log, its result (eigenvalues, no vectors) to
# OUT/NAME.h5, checked against the closed form with every multiplicity
# (check_laplacian_eigenvalues.py); a table of the solve, wall and phase times
# ends the output. GRID (128) sets the grid.
set -uo pipefail
bin=$1 out=$2 cases=$3
here=$(cd "$(dirname "$0")" && pwd)
grid=${GRID:-128}
python=${PYTHON:-python3}
mkdir -p "$out"
table=()
IFS=';' read -ra entries <<< "$cases"
for entry in "${entries[@]}"; do
  read -r name ranks k method preconditioner <<< "$entry"
  preconditioner=${preconditioner:-none}
  config=$out/$name.yaml
  printf 'matrix: {generator: {type: laplacian_3d, nx: %s, ny: %s, nz: %s}}\n' "$grid" "$grid" "$grid" > "$config"
  printf 'eigensolver: {k: %s, tolerance: 1.0e-8, method: %s, preconditioner: %s, max_iterations: 2000}\n' \
    "$k" "$method" "$preconditioner" >> "$config"
  printf 'output: {path: %s/%s.h5, eigenvectors: false, monitor_every: 10}\n' "$out" "$name" >> "$config"
  start=$(date +%s.%N)
  mpirun --allow-run-as-root --bind-to none -np "$ranks" "$bin/block-eigs" "$config" > "$out/$name.log" 2>&1
  status=$?
  end=$(date +%s.%N)
  check=$("$python" "$here/check_laplacian_eigenvalues.py" "$out/$name.h5" "$grid" 2>&1 | head -1)
  solve=$(sed -n 's/^solve time \([0-9.]*\) s.*/\1/p' "$out/$name.log")
  iterations=$(sed -n 's/^iterations \([0-9]*\).*/\1/p' "$out/$name.log")
  table+=("$(printf '%-8s %2s GPU k %4s %-16s %-9s exit %s  iterations %4s  solve %8s s  mpirun-to-exit %6.2f s  %s' \
    "$name" "$ranks" "$k" "$method" "$preconditioner" "$status" "$iterations" "$solve" \
    "$(echo "$end - $start" | bc)" "$check")")
  grep -E '^(method|solve time|wall|memory)' "$out/$name.log"
done
printf '%s\n' "${table[@]}"
