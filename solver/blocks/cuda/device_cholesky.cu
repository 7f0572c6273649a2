// DeviceCholeskyInverse (device_cholesky.hpp): G's row-major upper triangle is
// the column-major lower one, so potrf and trtri on the lower triangle leave
// L^-1 there, which read row-major is (L^T)^-1 = U^-1.
#include "solver/blocks/cuda/device_cholesky.hpp"

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <complex>
#include <type_traits>
#include <cstdio>

#include "core/error.hpp"
#include "solver/blocks/cuda/cusolver_session.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {
namespace {
template <class S>
cudaDataType data_type() {
  return std::is_same_v<S, double> ? CUDA_R_64F : CUDA_C_64F;
}
}  // namespace

struct DeviceCholeskyInverse::State {
  explicit State(int device) : session(device) {}
  CusolverSession session;
  std::int64_t capacity = 0;  // rows the buffers hold, of `bytes_per_value` (16 once a complex matrix came)
  std::size_t value_bytes = 8;
  void* matrix = nullptr;  // n x n
  void* work = nullptr;    // potrf's and trtri's device workspace
  std::size_t work_bytes = 0;
  std::vector<char> host_work;  // trtri's host workspace
  int* info = nullptr;          // potrf's, then trtri's
  char* pinned = nullptr;       // G in, U^-1 out, then the two infos
  ~State() {
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(info));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
  }

  template <class S>
  void reserve(std::int64_t n) {
    if (n <= capacity && sizeof(S) <= value_bytes) return;
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
    matrix = nullptr;
    pinned = nullptr;
    value_bytes = std::max(value_bytes, sizeof(S));
    n = std::max(n, capacity);
    const auto bytes = static_cast<std::size_t>(n * n) * value_bytes;
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&matrix, bytes));
    BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&pinned, bytes + 2 * sizeof(int)));
    int potrf = 0;
    if constexpr (std::is_same_v<S, double>)
      check_cusolver(cusolverDnDpotrf_bufferSize(session.handle(), CUBLAS_FILL_MODE_LOWER, static_cast<int>(n),
                                                 static_cast<double*>(matrix), static_cast<int>(n), &potrf),
                     "potrf_bufferSize");
    else
      check_cusolver(cusolverDnZpotrf_bufferSize(session.handle(), CUBLAS_FILL_MODE_LOWER, static_cast<int>(n),
                                                 static_cast<cuDoubleComplex*>(matrix), static_cast<int>(n), &potrf),
                     "potrf_bufferSize");
    std::size_t trtri = 0, trtri_host = 0;
    check_cusolver(cusolverDnXtrtri_bufferSize(session.handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n,
                                               data_type<S>(), matrix, n, &trtri, &trtri_host),
                   "trtri_bufferSize");
    const std::size_t needed = std::max(static_cast<std::size_t>(potrf) * sizeof(S), trtri);
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

bool DeviceCholeskyInverse::operator()(const HostMatrix& G, HostMatrix& inverse) { return factor(G, inverse); }
bool DeviceCholeskyInverse::operator()(const ComplexHostMatrix& G, ComplexHostMatrix& inverse) {
  return factor(G, inverse);
}

// G row-major read column-major is G^T (conj(G) = U^T conj(U) where Hermitian): its lower factor is U^T, whose
// inverse read back row-major is U^-1.
template <class S>
bool DeviceCholeskyInverse::factor(const HostMatrixOf<S>& G, HostMatrixOf<S>& inverse) {
  const std::int64_t n = G.rows();
  BLOCKEIGS_ASSERT(G.cols() == n);
  inverse = HostMatrixOf<S>(n, n);
  if (n == 0) return true;
  State& s = *state_;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(s.session.device()));
  s.reserve<S>(n);
  S* pinned = reinterpret_cast<S*>(s.pinned);
  S* matrix = static_cast<S*>(s.matrix);
  const auto bytes = static_cast<std::size_t>(n * n) * sizeof(S);
  std::copy(G.data(), G.data() + n * n, pinned);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(matrix, pinned, bytes, cudaMemcpyHostToDevice, s.session.stream()));
  const int ni = static_cast<int>(n);
  const int lwork = static_cast<int>(s.work_bytes / sizeof(S));
  if constexpr (std::is_same_v<S, double>)
    check_cusolver(cusolverDnDpotrf(s.session.handle(), CUBLAS_FILL_MODE_LOWER, ni, matrix, ni,
                                    static_cast<double*>(s.work), lwork, s.info),
                   "potrf");
  else
    check_cusolver(
        cusolverDnZpotrf(s.session.handle(), CUBLAS_FILL_MODE_LOWER, ni, reinterpret_cast<cuDoubleComplex*>(matrix), ni,
                         static_cast<cuDoubleComplex*>(s.work), lwork, s.info),
        "potrf");
  check_cusolver(cusolverDnXtrtri(s.session.handle(), CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT, n, data_type<S>(),
                                  matrix, n, s.work, s.work_bytes, s.host_work.data(), s.host_work.size(), s.info + 1),
                 "trtri");
  int* infos = reinterpret_cast<int*>(pinned + n * n);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(pinned, matrix, bytes, cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(infos, s.info, 2 * sizeof(int), cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s.session.stream()));
  if (infos[0] != 0 || infos[1] != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) {
      const S v = pinned[i * n + j];
      if (!std::isfinite(std::abs(v))) return false;
      inverse(i, j) = v;
    }
  return true;
}

}  // namespace blockeigs::solver
