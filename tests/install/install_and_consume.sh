#!/bin/bash
# Installs the build tree BUILD into WORK/prefix, then builds the C++ example
# (EXAMPLE/eigs.cpp) in an empty folder with exactly the CMakeLists.txt that
# docs/building.md shows (its ```cmake block, which must also be
# EXAMPLE/CMakeLists.txt), against the installed tree, and runs it under MPI
# with 2 ranks on a 1D Laplacian: the 3 smallest eigenvalues must match
# 2 - 2 cos(j pi / 51) to 1e-8 relative.
# usage: install_and_consume.sh BUILD WORK DOCS EXAMPLE -- CMAKE_ARGS... -- MPIEXEC ARGS...
set -euo pipefail
build=$1 work=$2 docs=$3 example=$4
shift 4
[ "$1" = "--" ] && shift
cmake_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmake_args+=("$1"); shift; done
shift
rm -rf "$work" && mkdir -p "$work/src"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
awk '/^```cmake$/ {inside = 1; next} /^```/ {if (inside) exit} inside' "$docs" > "$work/src/CMakeLists.txt"
grep -q find_package "$work/src/CMakeLists.txt" || { echo "FAIL: no cmake block with find_package in $docs"; exit 1; }
diff -u "$example/CMakeLists.txt" "$work/src/CMakeLists.txt" ||
  { echo "FAIL: $example/CMakeLists.txt is not the snippet of $docs"; exit 1; }
cp "$example/eigs.cpp" "$work/src/"
cmake -S "$work/src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" "${cmake_args[@]}"
cmake --build "$work/build"
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "50 50 99"
  for i in $(seq 1 50); do echo "$i $i 2"; done
  for i in $(seq 1 49); do echo "$((i + 1)) $i -1"; done
} > "$work/laplacian.mtx"
"$@" "$work/build/eigs" "$work/laplacian.mtx" 3 | tee "$work/eigs.log"
awk 'BEGIN {pi = atan2(0, -1)}
     /^ +[0-9]+ +[0-9.e+-]+ +relative residual/ {
       j = $1 + 1; exact = 2 - 2 * cos(j * pi / 51); err = ($2 - exact) / exact; if (err < 0) err = -err
       if (err > 1e-8) {printf "FAIL: eigenvalue %d is %s, exact %.12e\n", $1, $2, exact; bad = 1}
       n++ }
     END {if (n != 3) {print "FAIL: expected 3 eigenvalues, got " n; exit 1}; exit bad}' "$work/eigs.log"
echo "consumer ok"
