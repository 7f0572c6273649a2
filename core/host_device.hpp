// BLOCKEIGS_HOST_DEVICE marks functions shared by host and device code; plain
// C++ when the file is not compiled by nvcc, so host tests can include it.
#pragma once

#if defined(__CUDACC__)
#define BLOCKEIGS_HOST_DEVICE __host__ __device__
#else
#define BLOCKEIGS_HOST_DEVICE
#endif
