#!/usr/bin/env bash
# Set up, build and run the whole test suite (unit, mpi at 1-4 ranks, cuda —
# skipped, visibly, where no GPU is present). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preset.sh
setup_and_build
ctest --preset "$preset" -j "$jobs"
