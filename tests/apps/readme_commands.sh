#!/usr/bin/env bash
# readme_commands.sh SOURCE_DIR BUILD_DIR PRESET [MPIEXEC]
# Runs every command of README.md and of the pages that hold its details
# (docs/usage.md, docs/building.md, docs/petsc.md) as written, so that they
# cannot rot: each entry below is a line of one of them (checked verbatim,
# code blocks and the inline petsc-example line) and the command that runs it, which is that line
# with build/<preset> pointing at BUILD_DIR and file placeholders (config.yaml,
# matrix.mtx.gz, results.h5) replaced by small inputs made here; benchmark
# sizes are made small by options appended after the README's (a later
# option wins), and a GPU-only command runs with --help where there is no GPU.
# Every command line in their sh code blocks must be listed, as run or as
# skipped with the reason.
set -u
src=$1 build=$2 preset=$3 mpiexec=${4:-mpirun}
docs=("$src/README.md" "$src/docs/usage.md" "$src/docs/building.md" "$src/docs/petsc.md")
bin=$build/apps
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=("$mpiexec")
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
mpi+=(--oversubscribe)
export OMP_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
failures=0 listed=()

# readme 'TEXT' COMMAND...: the text must be in one of the docs; COMMAND must exit 0.
readme() {
  local text=$1
  shift
  listed+=("$text")
  if ! cat "${docs[@]}" | grep -qF -- "$text"; then
    echo "NOT IN THE DOCS: $text"
    failures=$((failures + 1))
    return
  fi
  local output status
  output=$(cd "$work" && timeout 300 "$@" 2>&1)
  status=$?
  if [ $status -ne 0 ]; then
    printf 'FAILED (exit %d): %s\n  ran: %s\n%s\n' $status "$text" "$*" "$output"
    failures=$((failures + 1))
  else
    echo "ok: $text"
  fi
}
# skip 'TEXT' WHY: listed, not run.
skip() {
  listed+=("$1")
  if cat "${docs[@]}" | grep -qF -- "$1"; then echo "skipped: $1 ($2)"; else echo "NOT IN THE DOCS: $1"; failures=$((failures + 1)); fi
}

# Small inputs for the placeholders.
mkdir -p "$work/eigs" "$work/cg"
printf 'matrix:\n  generator: {type: laplacian_2d, nx: 20, ny: 16}\neigensolver: {k: 4}\noutput: {path: %s/results.h5, monitor: false}\n' \
  "$work" > "$work/eigs/config.yaml"
printf 'matrix:\n  generator: {type: laplacian_2d, nx: 20, ny: 16}\nblock_cg:\n  rhs: {source: random, columns: 3}\noutput: {monitor: false}\n' \
  > "$work/cg/config.yaml"
{
  printf '%%%%MatrixMarket matrix coordinate real symmetric\n6 6 11\n'
  for i in 1 2 3 4 5 6; do echo "$i $i 2"; done
  for i in 1 2 3 4 5; do echo "$((i + 1)) $i -1"; done
} | gzip > "$work/matrix.mtx.gz"
gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && [ "$preset" = cuda ]; then gpu=1; fi

skip 'scripts/demo.sh     # set up, build, run' "installs packages and builds; its run is the next line"
readme 'mpirun -np 2 build/<preset>/apps/block-eigs configs/demo.yaml' \
  "${mpi[@]}" -np 2 "$bin/block-eigs" "$src/configs/demo.yaml"
skip 'scripts/test.sh     # set up, build, run the whole test suite' "this test is part of that suite"
readme 'mpirun -np 4 build/<preset>/apps/block-eigs config.yaml     # eigenpairs' \
  "${mpi[@]}" -np 4 "$bin/block-eigs" "$work/eigs/config.yaml"
readme 'mpirun -np 4 build/<preset>/apps/block-eigs config.yaml --set eigensolver.k=4' \
  "${mpi[@]}" -np 4 "$bin/block-eigs" "$work/eigs/config.yaml" --set eigensolver.k=4
readme 'mpirun -np 4 build/<preset>/apps/block-eigs configs/fem-p1-3d.yaml' \
  "${mpi[@]}" -np 4 "$bin/block-eigs" "$src/configs/fem-p1-3d.yaml" --set output.path="$work/fem-p1-3d.h5" \
  --set "matrix.generator={type: fem_p1_3d, nx: 10, ny: 9, nz: 8, part: stiffness}" \
  --set "matrix_b.generator={type: fem_p1_3d, nx: 10, ny: 9, nz: 8, part: mass}"
readme 'mpirun -np 4 build/<preset>/apps/block-cg config.yaml' \
  "${mpi[@]}" -np 4 "$bin/block-cg" "$work/cg/config.yaml"
readme 'build/<preset>/apps/mtx2h5 matrix.mtx.gz matrix.h5 [--group /A] [--force]' \
  sh -c "'$bin/mtx2h5' matrix.mtx.gz matrix.h5 && '$bin/mtx2h5' matrix.mtx.gz matrix.h5 --group /B && \
         '$bin/mtx2h5' matrix.mtx.gz matrix.h5 --group /A --force"
readme 'scripts/plot_history.py results.h5 history.png' \
  "$src/scripts/plot_history.py" "$work/results.h5" "$work/history.png"
readme 'mpirun -np 2 build/<preset>/apps/operator-bench --grid 256 --width 16' \
  "${mpi[@]}" -np 2 "$bin/operator-bench" --grid 256 --width 16 --grid 12 --reps 2
readme 'build/<preset>/apps/block-ops-bench --rows 2097152 --width 16' \
  "$bin/block-ops-bench" --rows 2097152 --width 16 --rows 5000 --reps 2
if [ $gpu -eq 1 ]; then
  readme 'build/cuda/apps/spmm-bench --suite quick' "$bin/spmm-bench" --suite quick
else
  readme 'build/cuda/apps/spmm-bench --suite quick' "$bin/spmm-bench" --help
fi
if [ -x "$bin/petsc-example" ]; then
  readme 'mpirun -np 2 build/<preset>/apps/petsc-example [-nx 12 -ny 10 -nz 8] [-eps_type lobpcg ...]' \
    sh -c "${mpi[*]} -np 2 '$bin/petsc-example' -nx 12 -ny 10 -nz 8 -eps_type lobpcg >/dev/null && \
           ${mpi[*]} -np 2 '$bin/petsc-example'"
else
  skip 'mpirun -np 2 build/<preset>/apps/petsc-example' "this build has no PETSc"
fi
# The README's Python block is examples/python/quickstart.py, which scripts/python runs with this build's package.
awk '/^```python$/ {inside = 1; next} /^```/ {if (inside) exit} inside' "$src/README.md" > "$work/readme.py"
if ! diff -q "$work/readme.py" "$src/examples/python/quickstart.py" >/dev/null; then
  echo "README.md's python block is not examples/python/quickstart.py"
  failures=$((failures + 1))
fi
if ls "$build"/python/blockeigs/_blockeigs*.so >/dev/null 2>&1; then
  readme 'scripts/python examples/python/quickstart.py' \
    env BLOCKEIGS_PRESET="$(basename "$build")" "$src/scripts/python" "$src/examples/python/quickstart.py"
else
  skip 'scripts/python examples/python/quickstart.py' "this build has no Python module"
fi
# The README's config block, as written (its result file put in the work folder).
awk '/^```yaml$/ {inside = 1; next} /^```/ {if (inside) exit} inside' "$src/README.md" > "$work/readme.yaml"
readme 'output: {path: results.h5}                                  # eigenpairs' \
  "${mpi[@]}" -np 2 "$bin/block-eigs" "$work/readme.yaml" --set output.path="$work/readme.h5"
readme 'cmake --install build/<preset> --prefix /opt/blockeigs' \
  cmake --install "$build" --prefix "$work/prefix"
skip 'cmake -S examples/cpp -B build/example -DCMAKE_PREFIX_PATH=/opt/blockeigs' \
  "install.consumer_np2 builds these files against an installed tree"
skip 'mpirun -np 2 build/example/eigs matrix.mtx.gz 6' "install.consumer_np2 runs it on a Laplacian"
skip 'cmake --preset cuda [-DCMAKE_CUDA_ARCHITECTURES=90]' "the build itself"
skip 'cmake --build --preset cuda -j' "the build itself"
skip 'ctest --preset cuda -L cuda' "the GPU tests, run on the GPU machine"
skip 'source DIR/env.sh' "a PETSc built with CUDA (docs/petsc.md), not on this machine"
skip 'cmake --preset cuda -B build/cuda-petsc' "a build against a PETSc with CUDA"
skip 'cmake --build build/cuda-petsc -j --target blockeigs_petsc petsc-example petsc-bench' "the same build"
skip 'mpirun -np 2 build/cuda-petsc/apps/petsc-example -log_view' "needs that build and a GPU"
skip 'apt-get install -y libpetsc-complex3.18-dev libslepc-complex3.18-dev' "installs packages CI does not have"
skip 'cmake --preset petsc-complex' "a build against the complex PETSc, which CI does not install"
skip 'cmake --build --preset petsc-complex -j' "the same build"
skip 'ctest --preset petsc-complex' "needs that build"
skip 'mpirun -np 2 build/petsc-complex/apps/petsc-example' "needs that build"

# Every command line of the docs' sh code blocks is listed above.
while IFS= read -r line; do
  command=${line%%  #*}
  command=${command%"${command##*[![:space:]]}"}
  [ -z "$command" ] && continue
  found=0
  for text in "${listed[@]}"; do
    case "$command" in "${text%%  #*}"*) found=1 ;; esac
    case "$text" in "$command"*) found=1 ;; esac
  done
  if [ $found -eq 0 ]; then
    echo "NOT CHECKED: the docs have '$command'; add it to tests/apps/readme_commands.sh"
    failures=$((failures + 1))
  fi
done < <(awk '/^```sh$/ {inside = 1; next} /^```/ {inside = 0} inside' "${docs[@]}")

echo "$failures failure(s)"
[ $failures -eq 0 ]
