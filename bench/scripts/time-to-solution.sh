#!/usr/bin/env bash
# Time to solution: the wall from mpirun to its exit beside the run's own
# account (setup, solve, output, wall lines), for the cases of
# docs/benchmarks/time-to-solution.md. Runs on the GPU machine (scripts/gpu-check.sh tts) or on
# the CPU with smaller grids.
#   bench/scripts/time-to-solution.sh BIN_DIR OUT_DIR
# TTS_CASES: which cases, space-separated (default: all that fit the GPUs present):
#   eigs-128-gen eigs-128-h5 cg-128-h5 eigs-256-gen eigs-256-h5 eigs-256-h5-np2 renum-256-h5-np2
# TTS_MPIRUN_FLAGS: more mpirun options ("--mca odls_base_sigkill_timeout 0": without mpirun's ~2 s wait
# after a non-zero exit, which the 100-iteration 256^3 runs end with: exit 3, not converged).
# TTS_SMALL (default 128) and TTS_LARGE (256): the two grid sizes, for a quicker run on a CPU.
# TTS_BANDWIDTHS=0: without the bandwidth measurements first.
# TTS_COLD=0: without the first start of each app (`mpirun -np 1 APP` on a 16^3 grid, timed and reported on its
# own line: mpirun's launch and exit, and the libraries read from disk where it is the first run since the build or
# the machine's start: the CUDA libraries open only for a device, so not `--version`); the cases then time runs as
# a user's second run finds them.
set -uo pipefail
bin=${1:?BIN_DIR}; out=${2:?OUT_DIR}
mkdir -p "$out"
small=${TTS_SMALL:-128}; large=${TTS_LARGE:-256}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
flags=(); [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
# TTS_MPIRUN_FLAGS: more mpirun options (--bind-to none: each rank may use every core for its set-up).
read -ra more <<< "${TTS_MPIRUN_FLAGS:-}"; flags+=("${more[@]}")
work=${TTS_WORK:-/tmp/tts}; mkdir -p "$work"
cases=${TTS_CASES:-eigs-128-gen eigs-128-h5 cg-128-h5 eigs-256-gen eigs-256-h5 eigs-256-h5-np2 renum-256-h5-np2}

minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

# A matrix file, written once.
matrix_file() {  # grid renumbered(0/1)
  local f=$work/lap-$1-$2.h5 extra=
  [ "$2" = 1 ] && extra=", renumber: {seed: 1}"
  if [ ! -f "$f" ]; then
    local t0=$(date +%s.%N)
    "$bin/mtx2h5" --generate "{type: laplacian_3d, nx: $1, ny: $1, nz: $1$extra}" "$f" >/dev/null || return 1
    echo "mtx2h5 $1^3 renumbered=$2: $(minus "$(date +%s.%N)" "$t0") s ($(du -m "$f" | cut -f1) MB)" >&2
  fi
  echo "$f"
}

# The matrix section of a config: a generator or an HDF5 file.
matrix_yaml() {  # gen|h5|renum grid
  case $1 in
    gen) echo "matrix: {generator: {type: laplacian_3d, nx: $2, ny: $2, nz: $2, stencil: 7}}" ;;
    h5) echo "matrix: {hdf5: {file: $(matrix_file "$2" 0)}}" ;;
    renum) echo "matrix: {hdf5: {file: $(matrix_file "$2" 1)}}" ;;
  esac
}

printf '%-18s %3s %9s %9s %9s %9s %9s %9s\n' case np mpirun account solve wall-solve setup output > "$out/tts-table.txt"
# One run: its log, then a table row (mpirun's wall, the account's wall, the solve, setup and output).
run_case() {  # name np app config [extra args...]
  local name=$1 np=$2 app=$3 cfg=$4; shift 4
  local log=$out/tts-$name.log t0 t1
  t0=$(date +%s.%N)
  # Each line stamped as it arrives: the wall line's stamp less its own time from the processes' start
  # splits what lies outside the account into mpirun's launch and the processes' exit.
  mpirun "${flags[@]}" -np "$np" "$bin/$app" "$@" "$cfg" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$log.stamped"
  local rc=${PIPESTATUS[0]}
  t1=$(date +%s.%N)
  cut -d' ' -f2- "$log.stamped" >"$log"
  local wall solve setup output account
  wall=$(minus "$t1" "$t0")
  solve=$(grep -oE '^(solve time|iterations [0-9]+.*; time) [0-9.]+' "$log" | grep -oE '[0-9.]+$' | head -1)
  setup=$(grep -E '^setup ' "$log" | grep -oE '[0-9.]+ s' | head -1 | cut -d' ' -f1)
  output=$(grep -E '^output ' "$log" | grep -oE '[0-9.]+ s' | head -1 | cut -d' ' -f1)
  account=$(grep -E '^wall ' "$log" | grep -oE '[0-9.]+ s' | head -1 | cut -d' ' -f1)
  printf '%-18s %3s %9.3f %9s %9s %9s %9s %9s%s\n' "$name" "$np" "$wall" "${account:--}" "${solve:--}" \
    "$(minus "$wall" "${solve:-0}")" "${setup:--}" "${output:--}" "$([ $rc -ne 0 ] && [ $rc -ne 3 ] && echo "  exit $rc")" |
    tee -a "$out/tts-table.txt"
  grep -E '^(setup|output|wall|partition|row order) ' "$log" | sed 's/^/    /'
  local stamp
  stamp=$(grep -E '^[0-9.]+ wall ' "$log.stamped" | head -1 | cut -d' ' -f1)
  [ -n "$stamp" ] && [ -n "$account" ] &&
    echo "    outside the account: mpirun's launch $(minus "$(minus "$stamp" "$account")" "$t0") s, the exit $(minus "$t1" "$stamp") s"
  rm -f "$log.stamped"
}

eigs_yaml() {  # source grid preconditioner max_iterations
  printf '%s\neigensolver: {k: 16, tolerance: 1.0e-5, convergence_test: relative, max_iterations: %s, preconditioner: %s, seed: 1}\noutput: {path: %s/eigs.h5, monitor: false}\n' \
    "$(matrix_yaml "$1" "$2")" "$4" "$3" "$work"
}
cg_yaml() {  # source grid preconditioner
  printf '%s\nblock_cg: {rhs: {source: random, columns: 16}, rtol: 1.0e-8, max_iterations: 10000, preconditioner: %s, seed: 1}\noutput: {path: %s/cg.h5, monitor: false}\n' \
    "$(matrix_yaml "$1" "$2")" "$3" "$work"
}

# The bandwidths each phase is set beside (bench/scripts/bandwidths.py: host memory, page cache, PCIe);
# TTS_BANDWIDTHS=0 skips them (a repeated call).
[ "${TTS_BANDWIDTHS:-1}" = 0 ] ||
  TTS_WORK=$work /usr/bin/env python3 "$(dirname "$0")/bandwidths.py" 2 2>&1 | tee "$out/tts-bandwidths.txt"

if [ "${TTS_COLD:-1}" != 0 ]; then
  eigs_yaml gen 16 chebyshev 5000 >"$work/cold-eigs.yaml"
  cg_yaml gen 16 chebyshev >"$work/cold-cg.yaml"
  for app in block-eigs:eigs block-cg:cg; do
    t0=$(date +%s.%N); mpirun "${flags[@]}" -np 1 "$bin/${app%%:*}" "$work/cold-${app#*:}.yaml" >/dev/null 2>&1
    echo "first start of ${app%%:*} (mpirun -np 1 ${app%%:*} on a 16^3 grid: mpirun's launch and exit, and the libraries' first load where this is the first run since the build): $(minus "$(date +%s.%N)" "$t0") s"
  done | tee "$out/tts-cold.txt"
fi

for c in $cases; do
  case $c in
    eigs-128-gen) eigs_yaml gen "$small" chebyshev 5000 >"$work/$c.yaml"; run_case "$c" 1 block-eigs "$work/$c.yaml" ;;
    eigs-128-h5) eigs_yaml h5 "$small" chebyshev 5000 >"$work/$c.yaml"; run_case "$c" 1 block-eigs "$work/$c.yaml" ;;
    cg-128-h5) cg_yaml h5 "$small" chebyshev >"$work/$c.yaml"; run_case "$c" 1 block-cg "$work/$c.yaml" ;;
    eigs-256-gen) eigs_yaml gen "$large" none 100 >"$work/$c.yaml"; run_case "$c" 1 block-eigs "$work/$c.yaml" ;;
    eigs-256-h5) eigs_yaml h5 "$large" none 100 >"$work/$c.yaml"; run_case "$c" 1 block-eigs "$work/$c.yaml" ;;
    eigs-256-h5-np2)
      [ "$gpus" -ge 2 ] || [ "$gpus" -eq 0 ] || continue
      eigs_yaml h5 "$large" none 100 >"$work/$c.yaml"; run_case "$c" 2 block-eigs "$work/$c.yaml" ;;
    renum-256-h5-np2)
      [ "$gpus" -ge 2 ] || [ "$gpus" -eq 0 ] || continue
      eigs_yaml renum "$large" none 100 >"$work/$c.yaml"
      printf 'execution: {partition: graph, partition_file: %s/renum-%s.h5}\n' "$work" "$large" >>"$work/$c.yaml"
      rm -f "$work/renum-$large.h5"
      run_case "$c-first" 2 block-eigs "$work/$c.yaml" --dry-run
      run_case "$c" 2 block-eigs "$work/$c.yaml" ;;
    *) echo "unknown case $c" >&2 ;;
  esac
done
cat "$out/tts-table.txt"
