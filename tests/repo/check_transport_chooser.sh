#!/usr/bin/env bash
# check_transport_chooser.sh SOURCE_DIR: a halo transport is decided in one
# place (solver/operator/halo/halo_transport.cpp, choose_halo_transport and
# make_halo_exchange): no other source outside tests/ builds a transport's
# exchange or asks whether MPI is CUDA-aware for one. (The transports' own
# definitions, device_selection's definition of the question, and PETSc's
# option for its own vectors, petsc_operator.cpp, are not decisions.)
set -u
cd "$1" || exit 2
found=$(git grep -nE '(make_unique<(MpiHalo|StagedMpiHalo)|(PeerHalo|NcclHalo)<[^>]*>::create\(|mpi_is_cuda_aware\()' \
  -- solver apps python bench config ':!solver/operator/halo/halo_transport.cpp' ':!solver/operator/halo/*_halo_*.cpp' \
  ':!solver/operator/device_selection.*' ':!solver/operator/halo/halo_transport.hpp' ':!solver/petsc/petsc_operator.cpp')
if [ -n "$found" ]; then
  echo "a halo transport decided outside halo_transport.cpp:"
  echo "$found"
  exit 1
fi
echo "check_transport_chooser: one chooser"
