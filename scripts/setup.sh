#!/usr/bin/env bash
# Install block-eigs' build and test dependencies from Debian's archive, and
# nanobind (the Python module's bindings) and lizard (function lengths, for
# the layout test), which Debian lacks, at pinned versions from PyPI into
# build/python-deps (BLOCKEIGS_PYTHON_DEPS), where CMake and the test look. Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  lld  # the linker (BLOCKEIGS_LLD): the test executables link in a third of GNU ld's time
  openmpi-bin libopenmpi-dev
  libhdf5-openmpi-dev hdf5-tools zlib1g-dev
  libyaml-cpp-dev
  libptscotch-dev  # execution.partition: graph and execution.local_order: band (optional at build time)
  googletest libgtest-dev libgmock-dev
  libopenblas-dev liblapacke-dev
  petsc-dev slepc-dev  # the PETSc/SLEPc adapter (solver/petsc/) and its tests
  python3-h5py python3-matplotlib  # scripts/plot_history.py and its tests
  clang libclang-rt-14-dev  # the fuzz preset (libFuzzer is in the clang runtime)
  clang-format-14  # the sources' format (tests/repo/check_format.sh)
  python3-dev python3-numpy python3-scipy python3-mpi4py python3-pytest python3-pip  # the Python package
)
# PyPI's, pinned (pyproject.toml's build requirements name the same nanobind).
python_deps=(nanobind==2.9.2 lizard==1.17.10)
python_deps_dir=${BLOCKEIGS_PYTHON_DEPS:-$(cd "$(dirname "$0")/.." && pwd)/build/python-deps}

# Each name==version already in python_deps_dir, as its installed metadata says.
python_deps_present() {
  local dep
  for dep in "${python_deps[@]}"; do
    [ "$(PYTHONPATH=$python_deps_dir /usr/bin/python3 -c \
        'import importlib.metadata, sys; print(importlib.metadata.version(sys.argv[1]))' "${dep%%==*}" 2>/dev/null)" \
      = "${dep#*==}" ] || return 1
  done
}

install_python_deps() {
  python_deps_present && return
  echo "setup: installing ${python_deps[*]} into $python_deps_dir"
  /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --upgrade \
    --target "$python_deps_dir" "${python_deps[@]}"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  install_python_deps
  echo "setup: all dependencies already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_python_deps
