#!/usr/bin/env bash
# Set up, build and run the whole test suite, each test once: in the plain
# build (cuda where nvcc is installed, else cpu) the GoogleTest suites at 1, 3
# and 4 ranks, the apps' tests that are not mpi-labelled, python, cuda
# (skipped, visibly, where no GPU is present), the robustness sweep, the
# install test and the app tests labelled plain_only; under AddressSanitizer +
# UndefinedBehaviorSanitizer (the asan preset, a build of its own in
# build/asan) the unit tests, the suites at 2 ranks and one app test of each
# path through the apps (tests/apps/CMakeLists.txt); then a short libFuzzer run of each reader
# (the fuzz preset, clang, build/fuzz). Each stage prints the time so far.
# CI runs exactly this. The plain build then leaves the unit tests out
# (BLOCKEIGS_UNIT_TESTS=OFF). BLOCKEIGS_SANITIZERS=0 runs the whole suite in the
# plain build instead and skips the sanitizer build; BLOCKEIGS_FUZZ=0 skips
# the fuzz runs (a quicker local run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/preset.sh
stage() { echo "test.sh: $1 ($((SECONDS / 60)) min $((SECONDS % 60)) s so far)"; }
# Both builds and the fuzz build take about 6 GB; a full disk fails a link in the middle of the log, so
# the free space is printed first, and the trees' sizes at the end.
echo "test.sh: free disk where the builds go: $(df -Ph . | awk 'NR == 2 {print $4}'), in /tmp: $(df -Ph /tmp | awk 'NR == 2 {print $4}')"
# Test numbers of the plain build for `ctest -I`: every test whose name the asan preset's run does not
# have, so that a test only one build registers (PETSc, CUDA, Python) runs where it exists (names compared
# without GoogleTest's "# GetParam() = ..." notes, which hold addresses).
plain_complement() {
  local -A asan=()
  local name num list=""
  while read -r name; do asan[$name]=1; done < <(ctest --preset asan -N | sed -n 's/  # GetParam.*//; s/^ *Test *#[0-9]*: //p')
  while read -r num name; do
    [ -n "${asan[$name]:-}" ] || list+=",$num"
  done < <(ctest --preset "$preset" -N | sed -n 's/  # GetParam.*//; s/^ *Test *#\([0-9]*\): \(.*\)$/\1 \2/p')
  echo "0,0,1$list"
}
# The unit tests run in the sanitizer build only, so the plain build leaves them out then.
if [ "${BLOCKEIGS_SANITIZERS:-1}" != 0 ]; then unit_tests=OFF; else unit_tests=ON; fi
setup_and_build -DBLOCKEIGS_UNIT_TESTS=$unit_tests
stage "built (preset $preset)"
if [ "${BLOCKEIGS_SANITIZERS:-1}" != 0 ]; then
  echo "test.sh: the unit tests, the suites at 2 ranks and one app test of each path under ASan+UBSan (preset asan)"
  run cmake --preset asan
  run cmake --build --preset asan -j "$jobs"
  stage "asan built"
  run ctest --preset asan -j "$jobs"
  stage "asan suite passed"
  echo "test.sh: the rest in the plain build (preset $preset)"
  run ctest --preset "$preset" -j "$jobs" -I "$(plain_complement)"
  stage "plain suite passed"
else
  run ctest --preset "$preset" -j "$jobs"
  stage "suite passed"
fi
if [ "${BLOCKEIGS_FUZZ:-1}" != 0 ]; then
  echo "test.sh: a short libFuzzer run of each reader (preset fuzz)"
  run cmake --preset fuzz
  run cmake --build --preset fuzz -j "$jobs"
  run ctest --preset fuzz -j "$jobs"
  stage "fuzz runs passed"
fi
echo "test.sh: build trees: $(du -sh build/* 2>/dev/null | tr '\t\n' ' ;')"
