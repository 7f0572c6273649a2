// What device selection asks of CUDA and of the MPI library about device
// memory: cuda/device_queries.cpp implements it; device_queries_stub.cpp, in a
// build without CUDA, throws "not compiled with CUDA" where a device would be
// needed.
#pragma once

#include <string>

namespace blockeigs::solver::cuda {

// The PCI bus id of CUDA device `device` ("dddd:bb:dd.f"), which tells the
// GPUs of a node apart across processes.
std::string pci_bus_id(int device);

// Whether the MPI library says it takes device pointers (Open MPI's
// MPIX_Query_cuda_support); false where it cannot say, and in a build without
// CUDA, which hands MPI no device pointers.
bool mpi_supports_cuda();

}  // namespace blockeigs::solver::cuda
