#!/usr/bin/env bash
# many_eigenpairs.sh BIN OUT "NAME RANKS K METHOD [PRECONDITIONER [KEY=VALUE,...]];..."
# block-eigs on the 128^3 7-point Laplacian (the generator, relative test
# 1e-8), one case per entry: RANKS GPUs, K smallest pairs, METHOD (lobpcg,
# chebyshev_filter, auto), a preconditioner (default none) and more
# eigensolver keys (block_size=384,filter_max_degree=96). Each case's output
# goes to OUT/work/NAME.log, its result (eigenvalues, no vectors) to
# OUT/work/NAME.h5, checked against the closed form with every multiplicity
# (check_laplacian_eigenvalues.py); the logs and configs end in
# OUT/logs.tar.gz and a table of the solve and mpirun-to-exit times in
# OUT/summary.txt and the output. GRID (128) sets the grid.
set -uo pipefail
bin=$1 out=$2 cases=$3
here=$(cd "$(dirname "$0")" && pwd)
grid=${GRID:-128}
python=${PYTHON:-python3}
mkdir -p "$out/work"
table=()
IFS=';' read -ra entries <<< "$cases"
for entry in "${entries[@]}"; do
  read -r name ranks k method preconditioner extra <<< "$entry"
  preconditioner=${preconditioner:-none}
  keys=""
  [ -n "${extra:-}" ] && keys=", $(echo "$extra" | sed 's/=/: /g; s/,/, /g')"
  config=$out/work/$name.yaml
  printf 'matrix: {generator: {type: laplacian_3d, nx: %s, ny: %s, nz: %s}}\n' "$grid" "$grid" "$grid" > "$config"
  printf 'eigensolver: {k: %s, tolerance: 1.0e-8, method: %s, preconditioner: %s, max_iterations: 2000%s}\n' \
    "$k" "$method" "$preconditioner" "$keys" >> "$config"
  printf 'output: {path: %s/work/%s.h5, eigenvectors: false, monitor_every: 10}\n' "$out" "$name" >> "$config"
  log=$out/work/$name.log
  start=$(date +%s.%N)
  mpirun --allow-run-as-root --bind-to none -np "$ranks" "$bin/block-eigs" "$config" > "$log" 2>&1
  status=$?
  end=$(date +%s.%N)
  check=$("$python" "$here/check_laplacian_eigenvalues.py" "$out/work/$name.h5" "$grid" 2>&1 | head -1)
  solve=$(sed -n 's/^solve time \([0-9.]*\) s.*/\1/p' "$log")
  iterations=$(sed -n 's/^iterations \([0-9]*\).*/\1/p' "$log")
  table+=("$(printf '%-8s %2s GPU k %4s %-16s %-9s %-24s exit %s  iterations %4s  solve %8s s  mpirun-to-exit %6.2f s  %s' \
    "$name" "$ranks" "$k" "$method" "$preconditioner" "${extra:--}" "$status" "$iterations" "$solve" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')" "$check")")
  grep -E '^(method|iterations|solve time|wall|memory)' "$log"
done
tar -czf "$out/logs.tar.gz" -C "$out/work" $(cd "$out/work" && ls *.log *.yaml)
printf '%s\n' "${table[@]}" | tee "$out/summary.txt"
