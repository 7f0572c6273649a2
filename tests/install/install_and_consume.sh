#!/bin/bash
# Installs the build tree BUILD into WORK/prefix, configures and builds the
# consumer project against it with find_package(blockeigs CONFIG), and runs
# it under MPI with 2 ranks.
# usage: install_and_consume.sh BUILD WORK CONSUMER_SOURCE -- CMAKE_ARGS... -- MPIEXEC ARGS...
set -euo pipefail
build=$1 work=$2 source=$3
shift 3
[ "$1" = "--" ] && shift
cmake_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do cmake_args+=("$1"); shift; done
shift
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
cmake -S "$source" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" "${cmake_args[@]}"
cmake --build "$work/build"
"$@" "$work/build/consumer"
