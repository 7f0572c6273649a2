#include "solver/blocks/cuda/cusolver_session.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {

void check_cusolver(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw Error(detail::concat("cuSOLVER ", what, " failed (status ", static_cast<int>(status), ")"));
}

int device_of(const dense::Context& context, const char* who) {
  if (context.space() != Space::device) throw Error(detail::concat(who, ": the context must be a CUDA device's"));
  return context.device();
}

CusolverSession::CusolverSession(int device) : device_(device) {
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(device_));
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    check_cusolver(cusolverDnCreate(&handle_), "create");
    check_cusolver(cusolverDnSetStream(handle_, stream_), "set stream");
  } catch (...) {
    this->~CusolverSession();
    throw;
  }
}

CusolverSession::~CusolverSession() {
  if (handle_ && cusolverDnDestroy(handle_) != CUSOLVER_STATUS_SUCCESS)
    std::fprintf(stderr, "cuSOLVER error in cusolverDnDestroy (cleanup, not thrown)\n");
  handle_ = nullptr;
  if (stream_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  stream_ = nullptr;
}

}  // namespace blockeigs::solver
