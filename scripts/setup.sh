#!/usr/bin/env bash
# Install block-eigs' build and test dependencies from Debian's archive.
# Idempotent: packages already present are left alone. Downloads nothing else.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  openmpi-bin libopenmpi-dev
  libhdf5-openmpi-dev hdf5-tools zlib1g-dev
  libyaml-cpp-dev
  libptscotch-dev  # execution.partition: graph and execution.local_order: band (optional at build time)
  googletest libgtest-dev libgmock-dev
  libopenblas-dev liblapacke-dev
  petsc-dev slepc-dev  # the PETSc/SLEPc adapter (solver/petsc/) and its tests
  python3-h5py python3-matplotlib  # scripts/plot_history.py and its tests
  clang libclang-rt-14-dev  # the fuzz preset (libFuzzer is in the clang runtime)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all dependencies already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
