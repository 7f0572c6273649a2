#!/usr/bin/env bash
# Set up, build and run the demo: block-eigs on a generated 3D Laplacian over
# two MPI ranks (the CPU backend when there is no GPU). Extra arguments are
# passed to mpirun's block-eigs, e.g. scripts/demo.sh configs/other.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preset.sh
setup_and_build
config=${1:-configs/demo.yaml}
command=(mpirun "${mpi_flags[@]}" -np 2 "build/$preset/apps/block-eigs" "$config")
show_command "${command[@]}"
exec "${command[@]}"
