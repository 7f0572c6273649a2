// A cuSOLVER handle on a non-blocking stream of its own, on one device: the
// dense solvers that run beside the context's stream (device_symmetric_eigen,
// device_cholesky) each hold one. CUDA builds only.
#pragma once

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "dense/context.hpp"

namespace blockeigs::solver {

// The context's device; Error naming `who` where the context is not a CUDA device's.
int device_of(const dense::Context& context, const char* who);

// Throws Error naming `what` and the status where a cuSOLVER call failed.
void check_cusolver(cusolverStatus_t status, const char* what);

class CusolverSession {
 public:
  explicit CusolverSession(int device);  // the device made current, its stream and handle created
  ~CusolverSession();
  CusolverSession(const CusolverSession&) = delete;
  CusolverSession& operator=(const CusolverSession&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cusolverDnHandle_t handle() const { return handle_; }

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cusolverDnHandle_t handle_ = nullptr;
};

}  // namespace blockeigs::solver
