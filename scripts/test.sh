#!/usr/bin/env bash
# Set up, build and run the whole test suite (unit, mpi at 1-4 ranks, cuda —
# skipped, visibly, where no GPU is present — and the robustness sweep, label
# sweep, about a minute on 2 cores); then the unit and mpi tests at 1 and 2
# ranks again under AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset,
# a build of its own in build/asan); then a short libFuzzer run of each
# reader (the fuzz preset, clang, build/fuzz). CI runs exactly this.
# BLOCKEIGS_SANITIZERS=0 skips the sanitizer run and BLOCKEIGS_FUZZ=0 the fuzz
# runs (a quicker local run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preset.sh
setup_and_build
run ctest --preset "$preset" -j "$jobs"
if [ "${BLOCKEIGS_SANITIZERS:-1}" != 0 ]; then
  echo "test.sh: the unit and mpi tests under ASan+UBSan (preset asan)"
  run cmake --preset asan
  run cmake --build --preset asan -j "$jobs"
  run ctest --preset asan -j "$jobs"
fi
if [ "${BLOCKEIGS_FUZZ:-1}" != 0 ]; then
  echo "test.sh: a short libFuzzer run of each reader (preset fuzz)"
  run cmake --preset fuzz
  run cmake --build --preset fuzz -j "$jobs"
  run ctest --preset fuzz -j "$jobs"
fi
