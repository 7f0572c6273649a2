// DeviceCholeskyInverse (device_cholesky.hpp): G's row-major upper triangle is
// the column-major lower one, so potrf and trtri on the lower triangle leave
// L^-1 there, which read row-major is (L^T)^-1 = U^-1.
#include "solver/blocks/cuda/device_cholesky.hpp"

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "solver/blocks/cuda/cusolver_session.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {
struct DeviceCholeskyInverse::State {
  explicit State(int device) : session(device) {}
  CusolverSession session;
  std::int64_t capacity = 0;  // rows the buffers hold
  double* matrix = nullptr;   // n x n
  void* work = nullptr;       // potrf's and trtri's device workspace
  std::size_t work_bytes = 0;
  std::vector<char> host_work;  // trtri's host workspace
  int* info = nullptr;          // potrf's, then trtri's
  double* pinned = nullptr;     // G in, U^-1 out, then the two infos
  ~State() {
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(info));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
  }

  void reserve(std::int64_t n) {
    if (n <= capacity) return;
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
    matrix = pinned = nullptr;
    const auto bytes = static_cast<std::size_t>(n * n) * sizeof(double);
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&matrix, bytes));
    BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&pinned, bytes + 2 * sizeof(double)));
    int potrf = 0;
    check_cusolver(cusolverDnDpotrf_bufferSize(session.handle(), CUBLAS_FILL_MODE_LOWER, static_cast<int>(n), matrix,
                                               static_cast<int>(n), &potrf),
                   "potrf_bufferSize");
    std::size_t trtri = 0, trtri_host = 0;
    check_cusolver(cusolverDnXtrtri_bufferSize(session.handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n,
                                               CUDA_R_64F, matrix, n, &trtri, &trtri_host),
                   "trtri_bufferSize");
    const std::size_t needed = std::max(static_cast<std::size_t>(potrf) * sizeof(double), trtri);
    if (needed > work_bytes) {
      BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
      work = nullptr;
      BLOCKEIGS_CUDA_CHECK(cudaMalloc(&work, needed));
      work_bytes = needed;
    }
    host_work.resize(std::max<std::size_t>(trtri_host, 1));
    capacity = n;
  }
};

DeviceCholeskyInverse::DeviceCholeskyInverse(const dense::Context& context)
    : state_(std::make_unique<State>(device_of(context, "DeviceCholeskyInverse"))) {
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&state_->info, 2 * sizeof(int)));
}

DeviceCholeskyInverse::~DeviceCholeskyInverse() = default;

bool DeviceCholeskyInverse::operator()(const HostMatrix& G, HostMatrix& inverse) {
  const std::int64_t n = G.rows();
  BLOCKEIGS_ASSERT(G.cols() == n);
  inverse = HostMatrix(n, n);
  if (n == 0) return true;
  State& s = *state_;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(s.session.device()));
  s.reserve(n);
  const auto bytes = static_cast<std::size_t>(n * n) * sizeof(double);
  std::copy(G.data(), G.data() + n * n, s.pinned);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(s.matrix, s.pinned, bytes, cudaMemcpyHostToDevice, s.session.stream()));
  const int ni = static_cast<int>(n);
  check_cusolver(
      cusolverDnDpotrf(s.session.handle(), CUBLAS_FILL_MODE_LOWER, ni, s.matrix, ni, static_cast<double*>(s.work),
                       static_cast<int>(s.work_bytes / sizeof(double)), s.info),
      "potrf");
  check_cusolver(
      cusolverDnXtrtri(s.session.handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, CUDA_R_64F, s.matrix, n,
                       s.work, s.work_bytes, s.host_work.data(), s.host_work.size(), s.info + 1),
      "trtri");
  int* infos = reinterpret_cast<int*>(s.pinned + n * n);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(s.pinned, s.matrix, bytes, cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(infos, s.info, 2 * sizeof(int), cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s.session.stream()));
  if (infos[0] != 0 || infos[1] != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) {
      const double v = s.pinned[i * n + j];
      if (!std::isfinite(v)) return false;
      inverse(i, j) = v;
    }
  return true;
}

}  // namespace blockeigs::solver
