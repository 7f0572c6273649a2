#!/usr/bin/env bash
# window_runs.sh BIN OUT "NAME RANKS GRID A B [KEY=VALUE,...];..."
# block-eigs on the GRID^3 7-point Laplacian (the generator, relative test
# 1e-8), one window [A, B] per entry on RANKS GPUs, with more eigensolver
# keys (slices=2,dos_vectors=32). Each case's output goes to
# OUT/work/NAME.log, its result (eigenvalues, no vectors) to OUT/work/NAME.h5,
# checked against the closed form with every multiplicity, at 1e-10 relative
# (check_laplacian_eigenvalues.py --interval); the logs and configs end in
# OUT/logs.tar.gz and a table in OUT/summary.txt. TIMEOUT (seconds, default
# 600) bounds each run; its rank processes are killed past it.
set -uo pipefail
bin=$1 out=$2 cases=$3
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
mkdir -p "$out/work"
table=()
IFS=';' read -ra entries <<< "$cases"
for entry in "${entries[@]}"; do
  read -r name ranks grid a b extra <<< "$entry"
  keys=""
  [ -n "${extra:-}" ] && keys=", $(echo "$extra" | sed 's/=/: /g; s/,/, /g')"
  config=$out/work/$name.yaml
  printf 'matrix: {generator: {type: laplacian_3d, nx: %s, ny: %s, nz: %s}}\n' "$grid" "$grid" "$grid" > "$config"
  printf 'eigensolver: {interval: [%s, %s], tolerance: 1.0e-8, max_iterations: 100%s}\n' "$a" "$b" "$keys" >> "$config"
  printf 'output: {path: %s/work/%s.h5, eigenvectors: false, monitor_every: 1}\n' "$out" "$name" >> "$config"
  log=$out/work/$name.log
  start=$(date +%s.%N)
  timeout -k 5 "${TIMEOUT:-600}" mpirun --allow-run-as-root --bind-to none -np "$ranks" "$bin/block-eigs" "$config" \
    > "$log" 2>&1
  status=$?
  [ $status -eq 124 ] && pkill -9 -f "$bin/block-eigs"  # mpirun forwards no signal to the ranks
  end=$(date +%s.%N)
  check=$("$python" "$here/check_laplacian_eigenvalues.py" "$out/work/$name.h5" "$grid" --interval "$a" "$b" 2>&1 |
    tr '\n' ' ' | cut -c1-220)
  solve=$(sed -n 's/^solve time \([0-9.]*\) s.*/\1/p' "$log")
  table+=("$(printf '%-10s %2s GPU %4s^3 [%s, %s] %-20s exit %s  solve %8s s  mpirun-to-exit %7.2f s  %s' \
    "$name" "$ranks" "$grid" "$a" "$b" "${extra:--}" "$status" "$solve" \
    "$(awk -v s="$start" -v e="$end" 'BEGIN {print e - s}')" "$check")")
  grep -E '^(window|count|iterations|solve time|wall|  +[0-9]+  [0-9.e+-]+  [0-9.e+-]+ )' "$log"
done
tar -czf "$out/logs.tar.gz" -C "$out/work" $(cd "$out/work" && ls *.log *.yaml)
printf '%s\n' "${table[@]}" | tee "$out/summary.txt"
