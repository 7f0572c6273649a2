#include "dense/context.hpp"

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "dense/memory.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "core/cuda_checks.hpp"
#endif

namespace blockeigs::spmm {

struct Context::Impl {
  Space space = Space::host;
  int device = -1;
#ifdef BLOCKEIGS_HAVE_CUDA
  cudaStream_t stream = nullptr;
  mutable cusparseHandle_t cusparse = nullptr;
  mutable cublasHandle_t cublas = nullptr;
  mutable bool warm = false;

  ~Impl() {
    if (space != Space::device) return;
    cudaSetDevice(device);
    if (cusparse) cusparseDestroy(cusparse);
    if (cublas) cublasDestroy(cublas);
    if (stream) cudaStreamDestroy(stream);
  }
#endif
};

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

Context Context::host() { return Context(std::make_unique<Impl>()); }

Context Context::cuda(int device) {
#ifdef BLOCKEIGS_HAVE_CUDA
  const int count = cuda_device_count();
  if (device < 0 || device >= count)
    throw InputError("CUDA device " + std::to_string(device) + " requested, but " + std::to_string(count) +
                     " device(s) are visible");
  auto impl = std::make_unique<Impl>();
  impl->space = Space::device;
  impl->device = device;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(device));
  // A blocking stream: plain cudaMemcpy calls (legacy stream) then wait for
  // the work queued on it, so a synchronous copy never reads a stale result.
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&impl->stream, cudaStreamDefault));
  // Stream-ordered allocations (cudaMallocAsync) come from the device's default
  // pool, which by default hands memory back at every synchronisation: the
  // solvers' per-call scratch would then be re-allocated each iteration. Keep it.
  cudaMemPool_t pool = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep_everything = UINT64_MAX;
  BLOCKEIGS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  return Context(std::move(impl));
#else
  (void)device;
  throw InputError(
      "the CUDA backend was requested, but block-eigs was built without CUDA "
      "(configure with the `cuda` preset)");
#endif
}

Space Context::space() const { return impl_->space; }
int Context::device() const { return impl_->device; }

void* Context::stream() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  return impl_->stream;
#else
  return nullptr;
#endif
}

void* Context::cusparse_handle() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (impl_->space == Space::device && !impl_->cusparse) {
    BLOCKEIGS_CUSPARSE_CHECK(cusparseCreate(&impl_->cusparse));
    BLOCKEIGS_CUSPARSE_CHECK(cusparseSetStream(impl_->cusparse, impl_->stream));
  }
  return impl_->cusparse;
#else
  return nullptr;
#endif
}

void* Context::cublas_handle() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (impl_->space == Space::device && !impl_->cublas) {
    BLOCKEIGS_CUBLAS_CHECK(cublasCreate(&impl_->cublas));
    BLOCKEIGS_CUBLAS_CHECK(cublasSetStream(impl_->cublas, impl_->stream));
  }
  return impl_->cublas;
#else
  return nullptr;
#endif
}

void Context::warm_up() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (impl_->space != Space::device || impl_->warm) return;
  const auto handle = static_cast<cublasHandle_t>(cublas_handle());
  // A small product of the batched kind the Gram matrices use, in scratch
  // from the pool: the pool's first allocation and cuBLAS's first kernel
  // selection are the costs, not the product. (A 1 x 1 product takes a path
  // that leaves the selection's ~10 ms to the first real one.)
  constexpr int m = 32, k = 1024, batch = 2;
  constexpr std::size_t operand = std::size_t{m} * k * batch, entries = 2 * operand + std::size_t{m} * m * batch;
  double* scratch = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), entries * sizeof(double), impl_->stream));
  BLOCKEIGS_CUDA_CHECK(cudaMemsetAsync(scratch, 0, entries * sizeof(double), impl_->stream));
  const double one = 1, zero = 0;
  BLOCKEIGS_CUBLAS_CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, m, k, &one, scratch, m,
                                                   std::int64_t{m} * k, scratch + operand, m, std::int64_t{m} * k,
                                                   &zero, scratch + 2 * operand, m, std::int64_t{m} * m, batch));
  BLOCKEIGS_CUDA_CHECK(cudaFreeAsync(scratch, impl_->stream));
  synchronize();
  impl_->warm = true;
#endif
}

void Context::synchronize() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (impl_->space == Space::device) BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
#endif
}

Event::Event(const Context& context, Timing timing) : context_(context) {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context_.space() == Space::device) {
    cudaEvent_t event = nullptr;
    BLOCKEIGS_CUDA_CHECK(
        cudaEventCreateWithFlags(&event, timing == Timing::on ? cudaEventDefault : cudaEventDisableTiming));
    event_ = event;
  }
#else
  (void)timing;
#endif
}

Event::~Event() {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
#endif
}

void Event::record() {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (event_)
    BLOCKEIGS_CUDA_CHECK(
        cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(context_.stream())));
#endif
}

void Event::synchronize() {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (event_) BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
#endif
}

bool Event::done() const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (!event_) return true;
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (status == cudaErrorNotReady) return false;
  BLOCKEIGS_CUDA_CHECK(status);
#endif
  return true;
}

double Event::seconds_since(const Event& earlier) const {
#ifdef BLOCKEIGS_HAVE_CUDA
  if (!event_ || !earlier.event_) return 0.0;
  float ms = 0;
  BLOCKEIGS_CUDA_CHECK(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(earlier.event_), static_cast<cudaEvent_t>(event_)));
  return 1e-3 * ms;
#else
  (void)earlier;
  return 0.0;
#endif
}

}  // namespace blockeigs::spmm
