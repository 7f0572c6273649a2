# Sourced by the scripts: picks the CMake preset (cuda when nvcc is installed,
# else cpu; BLOCKEIGS_PRESET overrides) and the MPI launcher flags, and
# defines setup_and_build.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [ -n "${BLOCKEIGS_PRESET:-}" ]; then
  preset=$BLOCKEIGS_PRESET
elif command -v nvcc >/dev/null 2>&1 || [ -n "${CUDACXX:-}" ]; then
  preset=cuda
else
  preset=cpu
fi
jobs=$(nproc 2>/dev/null || echo 2)
# Open MPI's mpirun refuses root without --allow-run-as-root, and more ranks
# than cores without --oversubscribe (the demo's 2 ranks on a 1-core machine).
mpi_flags=()
if [ "$(id -u)" -eq 0 ]; then mpi_flags+=(--allow-run-as-root); fi
if [ "$jobs" -lt 2 ]; then mpi_flags+=(--oversubscribe); fi

# Whether a GPU is visible here (the driver's nvidia-smi lists one).
gpu_visible() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# Prints a command exactly as it is run, quoted so that it can be pasted
# ("+ mpirun --allow-run-as-root -np 2 build/cpu/apps/block-eigs configs/demo.yaml").
show_command() {
  printf '+'
  printf ' %q' "$@"
  printf '\n'
}
# Prints a command as show_command does, then runs it.
run() {
  show_command "$@"
  "$@"
}

# Installs the dependencies, configures (with any cache settings given, -DNAME=VALUE) and builds with the
# chosen preset.
setup_and_build() {
  run scripts/setup.sh
  run cmake --preset "$preset" "$@"
  run cmake --build --preset "$preset" -j "$jobs"
}
