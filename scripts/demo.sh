#!/usr/bin/env bash
# Set up, build what the demo needs and run it: block-eigs on a generated 3D
# Laplacian over two MPI ranks (the CPU backend when there is no GPU), and the
# Python package that scripts/python runs. Only block-eigs and the Python
# module are built (the tests, benchmarks and other apps are scripts/test.sh's),
# with the cuda preset where nvcc is installed and a GPU is visible and the cpu
# preset otherwise (a CUDA build runs on the CPU without a GPU, but compiling
# its kernels is most of its build); BLOCKEIGS_PRESET chooses. Extra arguments
# are passed to block-eigs, e.g. scripts/demo.sh configs/other.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preset.sh
if [ -z "${BLOCKEIGS_PRESET:-}" ] && [ "$preset" = cuda ] && ! gpu_visible; then
  echo "demo.sh: no GPU visible: the cpu preset (BLOCKEIGS_PRESET=cuda builds the CUDA backend anyway)"
  preset=cpu
fi
run scripts/setup.sh
run cmake --preset "$preset"
targets=(block-eigs)
grep -q '^BLOCKEIGS_PYTHON:BOOL=ON' "build/$preset/CMakeCache.txt" && targets+=(blockeigs_python)
run cmake --build --preset "$preset" -j "$jobs" --target "${targets[@]}"
config=${1:-configs/demo.yaml}
[ $# -gt 0 ] && shift
command=(mpirun "${mpi_flags[@]}" -np 2 "build/$preset/apps/block-eigs" "$config" "$@")
show_command "${command[@]}"
status=0
"${command[@]}" || status=$?
if [ ${#targets[@]} -gt 1 ]; then
  echo
  echo "From Python (the README's example): scripts/python examples/python/quickstart.py"
fi
exit $status
