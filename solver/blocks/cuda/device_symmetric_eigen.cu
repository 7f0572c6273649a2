// DeviceSymmetricEigen: cuSOLVER's divide and conquer (syevd) on a copy of M,
// the wanted eigenvectors brought back; see device_symmetric_eigen.hpp.
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"

#include <cuda_runtime.h>
#include <complex>
#include <cstdio>
#include <cusolverDn.h>

#include "core/error.hpp"
#include "solver/blocks/cuda/cusolver_session.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {
struct DeviceSymmetricEigen::State {
  explicit State(int device) : session(device) {}
  CusolverSession session;
  std::int64_t capacity = 0;  // rows the buffers hold
  int work_size = 0;          // doubles of `work`
  double* matrix = nullptr;   // n x n, column-major: M, then its eigenvectors
  double* values = nullptr;   // n
  double* work = nullptr;
  int* info = nullptr;
  double* pinned = nullptr;  // M in; the wanted vectors, the values and info out

  ~State() {
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(values));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(info));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
  }

  void reserve(std::int64_t n) {
    if (n <= capacity) return;
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(values));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
    matrix = values = pinned = nullptr;
    const auto bytes = static_cast<std::size_t>(n * n) * sizeof(double);
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&matrix, bytes));
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&values, static_cast<std::size_t>(n) * sizeof(double)));
    // M in; then the wanted vectors, every value and info out (n x n + n + 1).
    BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&pinned, bytes + static_cast<std::size_t>(n + 1) * sizeof(double)));
    int needed = 0;
    check_cusolver(cusolverDnDsyevd_bufferSize(session.handle(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                               static_cast<int>(n), matrix, static_cast<int>(n), values, &needed),
                   "syevd_bufferSize");
    if (needed > work_size) {
      BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
      work = nullptr;
      BLOCKEIGS_CUDA_CHECK(cudaMalloc(&work, static_cast<std::size_t>(needed) * sizeof(double)));
      work_size = needed;
    }
    capacity = n;
  }
};

// The Hermitian problem's buffers: zheevd's matrix, values and work, and a
// pinned block for the matrix in and the wanted vectors, values and info out.
struct DeviceSymmetricEigen::ComplexState {
  std::int64_t capacity = 0;
  int work_size = 0;  // complex values of `work`
  cuDoubleComplex* matrix = nullptr;
  double* values = nullptr;
  cuDoubleComplex* work = nullptr;
  std::complex<double>* pinned = nullptr;

  ~ComplexState() {
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(values));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
  }

  void reserve(CusolverSession& session, std::int64_t n) {
    if (n <= capacity) return;
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(matrix));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(values));
    BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFreeHost(pinned));
    matrix = nullptr;
    values = nullptr;
    pinned = nullptr;
    const auto bytes = static_cast<std::size_t>(n * n) * sizeof(cuDoubleComplex);
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&matrix, bytes));
    BLOCKEIGS_CUDA_CHECK(cudaMalloc(&values, static_cast<std::size_t>(n) * sizeof(double)));
    // M in; then the wanted vectors, every value and info out (n x n complex + n + 1 doubles).
    BLOCKEIGS_CUDA_CHECK(cudaMallocHost(&pinned, bytes + static_cast<std::size_t>(n + 1) * sizeof(double)));
    int needed = 0;
    check_cusolver(cusolverDnZheevd_bufferSize(session.handle(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                                               static_cast<int>(n), matrix, static_cast<int>(n), values, &needed),
                   "heevd_bufferSize");
    if (needed > work_size) {
      BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaFree(work));
      work = nullptr;
      BLOCKEIGS_CUDA_CHECK(cudaMalloc(&work, static_cast<std::size_t>(needed) * sizeof(cuDoubleComplex)));
      work_size = needed;
    }
    capacity = n;
  }
};

DeviceSymmetricEigen::DeviceSymmetricEigen(const dense::Context& context)
    : state_(std::make_unique<State>(device_of(context, "DeviceSymmetricEigen"))) {
  BLOCKEIGS_CUDA_CHECK(cudaMalloc(&state_->info, sizeof(int)));
}

DeviceSymmetricEigen::~DeviceSymmetricEigen() = default;

SymmetricEigen DeviceSymmetricEigen::operator()(const HostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  SymmetricEigen out;
  out.vectors = HostMatrix(n, count);
  if (n == 0) return out;
  State& s = *state_;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(s.session.device()));
  s.reserve(n);
  full_symmetric_copy(M, s.pinned);  // from the lower triangle, as symmetric_eigen reads it
  const auto bytes = static_cast<std::size_t>(n * n) * sizeof(double);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(s.matrix, s.pinned, bytes, cudaMemcpyHostToDevice, s.session.stream()));
  check_cusolver(
      cusolverDnDsyevd(s.session.handle(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n),
                       s.matrix, static_cast<int>(n), s.values, s.work, s.work_size, s.info),
      "syevd");
  // The wanted vectors (columns first ..), the values and info, in one pinned buffer.
  double* vectors = s.pinned;
  double* values = s.pinned + count * n;
  int* info = reinterpret_cast<int*>(values + n);
  const auto vector_bytes = static_cast<std::size_t>(count * n) * sizeof(double);
  BLOCKEIGS_CUDA_CHECK(
      cudaMemcpyAsync(vectors, s.matrix + first * n, vector_bytes, cudaMemcpyDeviceToHost, s.session.stream()));
  const auto value_bytes = static_cast<std::size_t>(n) * sizeof(double);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(values, s.values, value_bytes, cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(info, s.info, sizeof(int), cudaMemcpyDeviceToHost, s.session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(s.session.stream()));
  if (*info != 0)
    throw Error(detail::concat("small symmetric eigenproblem (", n, " x ", n,
                               "): cuSOLVER syevd did not converge (info ", *info, ")"));
  out.values.assign(values, values + n);
  for (std::int64_t c = 0; c < count; ++c)
    for (std::int64_t i = 0; i < n; ++i) out.vectors(i, c) = vectors[c * n + i];
  return out;
}

HermitianEigen DeviceSymmetricEigen::operator()(const ComplexHostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  HermitianEigen out;
  out.vectors = ComplexHostMatrix(n, count);
  if (n == 0) return out;
  if (!complex_) complex_ = std::make_unique<ComplexState>();
  ComplexState& c = *complex_;
  CusolverSession& session = state_->session;
  BLOCKEIGS_CUDA_CHECK(cudaSetDevice(session.device()));
  c.reserve(session, n);
  full_hermitian_copy(M, c.pinned);  // column-major, from the lower triangle
  const auto bytes = static_cast<std::size_t>(n * n) * sizeof(cuDoubleComplex);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(c.matrix, c.pinned, bytes, cudaMemcpyHostToDevice, session.stream()));
  check_cusolver(
      cusolverDnZheevd(session.handle(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, static_cast<int>(n),
                       c.matrix, static_cast<int>(n), c.values, c.work, c.work_size, state_->info),
      "heevd");
  std::complex<double>* vectors = c.pinned;
  double* values = reinterpret_cast<double*>(c.pinned + count * n);
  int* info = reinterpret_cast<int*>(values + n);
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(vectors, c.matrix + first * n,
                                       static_cast<std::size_t>(count * n) * sizeof(cuDoubleComplex),
                                       cudaMemcpyDeviceToHost, session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(values, c.values, static_cast<std::size_t>(n) * sizeof(double),
                                       cudaMemcpyDeviceToHost, session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(info, state_->info, sizeof(int), cudaMemcpyDeviceToHost, session.stream()));
  BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(session.stream()));
  if (*info != 0)
    throw Error(detail::concat("small Hermitian eigenproblem (", n, " x ", n,
                               "): cuSOLVER heevd did not converge (info ", *info, ")"));
  out.values.assign(values, values + n);
  for (std::int64_t col = 0; col < count; ++col)
    for (std::int64_t i = 0; i < n; ++i) out.vectors(i, col) = vectors[col * n + i];
  return out;
}

}  // namespace blockeigs::solver
