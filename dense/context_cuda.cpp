// The CUDA half of Context and Event (dense/context_backend.hpp).
#include <cstdint>
#include <string>

#include "core/cuda_checks.hpp"
#include "core/cuda_libraries.hpp"
#include "core/error.hpp"
#include "dense/context_backend.hpp"
#include "dense/memory.hpp"

namespace blockeigs::dense::cuda_context {

struct Resources {
  int device = -1;
  cudaStream_t stream = nullptr;
  cusparseHandle_t cusparse = nullptr;
  cublasHandle_t cublas = nullptr;
  bool warm = false;
};

void ResourcesDeleter::operator()(Resources* r) const noexcept {
  cudaSetDevice(r->device);
  if (r->cusparse) cusparseDestroy(r->cusparse);
  if (r->cublas) cublasDestroy(r->cublas);
  if (r->stream) cudaStreamDestroy(r->stream);
  delete r;
}

ResourcesPtr create(int device) {
  const int count = cuda_device_count();
  if (device < 0 || device >= count)
    throw InputError("CUDA device " + std::to_string(device) + " requested, but " + std::to_string(count) +
                     " device(s) are visible");
  cuda_libraries::start_loading();  // cuBLAS and the others open beside the device's context
  ResourcesPtr r(new Resources);
  r->device = device;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(device));
  // A blocking stream: plain cudaMemcpy calls (legacy stream) then wait for
  // the work queued on it, so a synchronous copy never reads a stale result.
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&r->stream, cudaStreamDefault));
  // Stream-ordered allocations (cudaMallocAsync) come from the device's default
  // pool, which by default hands memory back at every synchronisation: the
  // solvers' per-call scratch would then be re-allocated each iteration. Keep it.
  cudaMemPool_t pool = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep_everything = UINT64_MAX;
  BLOCKEIGS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  return r;
}

void make_current(const Resources& r) { BLOCKEIGS_CUDA_CHECK(cudaSetDevice(r.device)); }

void* stream(const Resources& r) { return r.stream; }

void* cusparse_handle(Resources& r) {
  if (!r.cusparse) {
    BLOCKEIGS_CUSPARSE_CHECK(cusparseCreate(&r.cusparse));
    BLOCKEIGS_CUSPARSE_CHECK(cusparseSetStream(r.cusparse, r.stream));
  }
  return r.cusparse;
}

void* cublas_handle(Resources& r) {
  if (!r.cublas) {
    BLOCKEIGS_CUBLAS_CHECK(cublasCreate(&r.cublas));
    BLOCKEIGS_CUBLAS_CHECK(cublasSetStream(r.cublas, r.stream));
  }
  return r.cublas;
}

void warm_up(Resources& r) {
  if (r.warm) return;
  const auto handle = static_cast<cublasHandle_t>(cublas_handle(r));
  // A small product of the batched kind the Gram matrices use, in scratch
  // from the pool: the pool's first allocation and cuBLAS's first kernel
  // selection are the costs, not the product. (A 1 x 1 product takes a path
  // that leaves the selection's ~10 ms to the first real one.)
  constexpr int m = 32, k = 1024, batch = 2;
  constexpr std::size_t operand = std::size_t{m} * k * batch, entries = 2 * operand + std::size_t{m} * m * batch;
  double* scratch = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), entries * sizeof(double), r.stream));
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(scratch, 0, entries * sizeof(double), r.stream));
  const double one = 1, zero = 0;
  BLOCKEIGS_CUBLAS_CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, m, k, &one, scratch, m,
                                                   std::int64_t{m} * k, scratch + operand, m, std::int64_t{m} * k,
                                                   &zero, scratch + 2 * operand, m, std::int64_t{m} * m, batch));
  BLOCKEIGS_CUDA_CHECK(cudaFreeAsync(scratch, r.stream));
  synchronize(r);
  r.warm = true;
}

void synchronize(const Resources& r) { BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(r.stream)); }

void* create_event(bool timing) {
  cudaEvent_t event = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
  return event;
}

void destroy_event(void* event) noexcept { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

void record_event(void* event, void* stream) {
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}

void synchronize_event(void* event) { BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }

bool event_done(void* event) {
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
  if (status == cudaErrorNotReady) return false;
  BLOCKEIGS_CUDA_CHECK(status);
  return true;
}

double seconds_between(void* earlier, void* later) {
  float ms = 0;
  BLOCKEIGS_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(earlier), static_cast<cudaEvent_t>(later)));
  return 1e-3 * ms;
}

}  // namespace blockeigs::dense::cuda_context
