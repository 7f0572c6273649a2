// Device block operations without communication: cuBLAS and the narrow-block
// kernels for the products, small kernels for the element-wise work, all on
// the context's stream. The reductions (Gram matrices, norms) are in
// block_reductions_cuda.cu.
//
// cuBLAS is column-major; a row-major block X (rows x cols, ld) is, read
// column-major, X^T (cols x rows, ld). So Y = X S (row-major) is
// Y^T = S^T X^T = gemm(N, N) on (S^T, X^T), every operand passed as stored,
// no copies or transposes.
#include <cuda_runtime.h>

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/blocks/cuda/device_support.cuh"
#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/cuda/device_complex.cuh"

namespace blockeigs::solver::device_ops {
namespace {

using namespace support;
// Complex blocks reach the kernels as DeviceComplex values (device_t<T>);
// real ones as they are.
using spmm::cuda::device_pointer;
using spmm::cuda::device_t;
using spmm::cuda::to_device;

// ---- kernels: grid-stride loops over the rows x cols elements ----------------

#define BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols)                                                                     \
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x, total_ = (rows) * (cols); e < total_; \
       e += std::int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void axpby_kernel(std::int64_t rows, std::int64_t cols, T alpha, const T* x, std::int64_t ldx, T beta, T* y,
                             std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    const T ax = alpha * x[i * ldx + j];
    y[i * ldy + j] = beta == T(0) ? ax : ax + beta * y[i * ldy + j];
  }
}

template <class T>
__global__ void column_axpby_kernel(std::int64_t rows, std::int64_t cols, const T* alpha, const T* x, std::int64_t ldx,
                                    T beta, T* y, std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    const T ax = alpha[j] * x[i * ldx + j];
    y[i * ldy + j] = beta == T(0) ? ax : ax + beta * y[i * ldy + j];
  }
}

template <class From, class To>
__global__ void convert_kernel(std::int64_t rows, std::int64_t cols, const From* x, std::int64_t ldx, To* y,
                               std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    y[i * ldy + j] = static_cast<To>(x[i * ldx + j]);
  }
}

template <class T, class S>
__global__ void scale_columns_kernel(std::int64_t rows, std::int64_t cols, const S* scale, T* x, std::int64_t ld) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    x[i * ld + j] = scale[j] * x[i * ld + j];
  }
}

// Entry (row, col) of fill_random's block (block_ops.hpp's random_entry): the kernels' T is float, double or
// a DeviceComplex, whose parts take two hash values.
template <class T>
__device__ T random_value(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(hash_uniform(seed, row, col));
  } else {
    using R = decltype(T{}.re);
    return T(static_cast<R>(hash_uniform(seed, row, 2 * col)), static_cast<R>(hash_uniform(seed, row, 2 * col + 1)));
  }
}

template <class T>
__global__ void select_columns_kernel(std::int64_t rows, std::int64_t cols, const std::int64_t* columns, const T* src,
                                      std::int64_t lds, T* dst, std::int64_t ldd) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    dst[i * ldd + j] = src[i * lds + columns[j]];
  }
}

// A warp per group of keep_rows rows, lane j moving column columns[c + j]
// to c + j for each 32-column chunk c: the lanes load all their values
// before any lane stores (a warp barrier between), and since columns[j] >= j
// a later chunk reads only columns that no earlier chunk wrote. Several rows
// per step keep loads in flight, where one thread per row, looping over the
// columns, waits on every load before its store
// (docs/benchmarks/block-ops.md#kernel-notes).
constexpr int keep_rows = 4;

template <class T>
__global__ void keep_columns_kernel(std::int64_t rows, std::int64_t kept, const std::int64_t* columns, T* x,
                                    std::int64_t ld) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warp = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t first = warp * keep_rows; first < rows; first += warps * keep_rows) {  // warp-uniform
    for (std::int64_t c = 0; c < kept; c += 32) {
      const std::int64_t j = c + lane;
      const std::int64_t from = j < kept ? columns[j] : 0;
      T v[keep_rows];
#pragma unroll
      for (int r = 0; r < keep_rows; ++r)
        if (j < kept && first + r < rows) v[r] = x[(first + r) * ld + from];
      __syncwarp();
#pragma unroll
      for (int r = 0; r < keep_rows; ++r)
        if (j < kept && first + r < rows) x[(first + r) * ld + j] = v[r];
      __syncwarp();
    }
  }
}

template <class T>
__global__ void fill_random_kernel(std::int64_t rows, std::int64_t cols, T* x, std::int64_t ld, std::uint64_t seed,
                                   std::int64_t first_row, std::int64_t first_col) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    x[i * ld + j] = random_value<T>(seed, first_row + i, first_col + j);
  }
}

template <class T>
__global__ void fill_random_rows_kernel(std::int64_t rows, std::int64_t cols, T* x, std::int64_t ld, std::uint64_t seed,
                                        const std::int64_t* row_index, std::int64_t first_col) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    x[i * ld + j] = random_value<T>(seed, row_index[i], first_col + j);
  }
}

template <class T>
__global__ void apply_diagonal_kernel(std::int64_t rows, std::int64_t cols, const T* d, const T* x, std::int64_t ldx,
                                      T* y, std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    y[i * ldy + j] = d[i] * x[i * ldx + j];
  }
}

#undef BLOCKEIGS_FOR_EACH_ELEMENT

// ---- cuBLAS in T's precision ---------------------------------------------

template <class T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n, std::int64_t k,
          T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if constexpr (std::is_same_v<T, std::complex<double>>)
    BLOCKEIGS_CUBLAS_CHECK(cublasZgemm(
        h, ta, tb, int(m), int(n), int(k), reinterpret_cast<const cuDoubleComplex*>(&alpha),
        reinterpret_cast<const cuDoubleComplex*>(a), int(lda), reinterpret_cast<const cuDoubleComplex*>(b), int(ldb),
        reinterpret_cast<const cuDoubleComplex*>(&beta), reinterpret_cast<cuDoubleComplex*>(c), int(ldc)));
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    BLOCKEIGS_CUBLAS_CHECK(
        cublasCgemm(h, ta, tb, int(m), int(n), int(k), reinterpret_cast<const cuComplex*>(&alpha),
                    reinterpret_cast<const cuComplex*>(a), int(lda), reinterpret_cast<const cuComplex*>(b), int(ldb),
                    reinterpret_cast<const cuComplex*>(&beta), reinterpret_cast<cuComplex*>(c), int(ldc)));
  else if constexpr (std::is_same_v<T, double>)
    BLOCKEIGS_CUBLAS_CHECK(
        cublasDgemm(h, ta, tb, int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb), &beta, c, int(ldc)));
  else
    BLOCKEIGS_CUBLAS_CHECK(
        cublasSgemm(h, ta, tb, int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb), &beta, c, int(ldc)));
}

// Complex blocks in the real narrow kernels: a complex block of k columns is a real one of 2k (each value's
// parts side by side), and Y = alpha X S is Y_r = X_r S_r with each entry c = alpha s of S as the real 2 x 2
// block [[Re c, Im c], [-Im c, Re c]]: the same four real products a complex product makes. beta must be real.
template <class T>
std::vector<double> real_embedding(const small_t<T>* S, std::int64_t k1, std::int64_t k2, T alpha) {
  std::vector<double> out(static_cast<std::size_t>(4 * k1 * k2));
  const std::int64_t w = 2 * k2;
  for (std::int64_t p = 0; p < k1; ++p)
    for (std::int64_t q = 0; q < k2; ++q) {
      const std::complex<double> c = std::complex<double>(alpha) * S[p * k2 + q];
      out[2 * p * w + 2 * q] = c.real();
      out[2 * p * w + 2 * q + 1] = c.imag();
      out[(2 * p + 1) * w + 2 * q] = -c.imag();
      out[(2 * p + 1) * w + 2 * q + 1] = c.real();
    }
  return out;
}

// The complex Y = alpha X S + beta Z by the real narrow kernels on the values' parts where they fit the doubled
// widths and beta is real; false otherwise (the caller takes its other path). Z is not read where beta is 0.
template <class T>
bool complex_narrow_update(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const small_t<T>* S,
                           T beta, dense::ConstDenseView<T> Z, dense::DenseView<T> Y) {
  using R = real_t<T>;
  if (beta.imag() != 0 || !cuda::narrow_update_fits<R>(2 * X.cols, 2 * Y.cols)) return false;
  const std::vector<double> s = real_embedding<T>(S, X.cols, Y.cols, alpha);
  const auto x = dense::parts_of(X), z = dense::parts_of(Z);
  const auto y = dense::parts_of(Y);
  cuda::narrow_update<R>(y.rows, x.cols, y.cols, R(1), x.data, x.ld, s.data(), beta.real(), z.data, z.ld, y.data, y.ld,
                         stream_of(context));
  return true;
}

}  // namespace

template <class T>
void block_update(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const small_t<T>* S, T beta,
                  dense::DenseView<T> Y) {
  const cudaStream_t stream = stream_of(context);
  if (X.cols == 0) {  // an empty product: Y = beta * Y (beta == 0 writes zeros)
    if constexpr (is_complex_v<T>)
      axpby(context, T(0), dense::ConstDenseView<T>(Y), beta, Y);
    else
      spmm::cuda::scale_block(Y, beta, stream);
    return;
  }
  // Up to 64 inputs and 16 outputs: the row-group kernel, one pass at about
  // the copy rate (block CG's updates, LOBPCG's W while it has <= 16
  // columns). cuBLAS beyond (out of place it beat the tensor-core kernel:
  // docs/benchmarks/block-ops.md#narrow-updates). LOBPCG's
  // Ritz update comes here only on refresh steps; the others take
  // ritz_update's own kernel.
  if constexpr (is_complex_v<T>) {
    // Complex: the narrow kernels where the doubled widths fit them, the tensor-core one included (cuBLAS's
    // complex product, not on the tensor cores, is slower).
    if (complex_narrow_update<T>(context, alpha, X, S, beta, dense::ConstDenseView<T>(Y), Y)) return;
  } else if (cuda::row_group_update_fits(X.cols, Y.cols)) {
    cuda::narrow_update<T>(Y.rows, X.cols, Y.cols, alpha, X.data, X.ld, S, beta, Y.data, Y.ld, Y.data, Y.ld, stream);
    return;
  }
  const StreamArray<T> s(stream, S, static_cast<std::size_t>(X.cols * Y.cols));
  // Column-major Y^T = S^T X^T: S (row-major k1 x k2) read column-major is S^T, ld k2.
  gemm<T>(cublas_of(context), CUBLAS_OP_N, CUBLAS_OP_N, Y.cols, Y.rows, X.cols, alpha, s.data(), Y.cols, X.data, X.ld,
          beta, Y.data, Y.ld);
}

// The narrow-block kernels are real: complex blocks go through them as real ones of twice the columns
// (complex_narrow_update) where those fit, else take the two-pass paths.
template <class T>
bool block_combine(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const small_t<T>* S, T beta,
                   dense::ConstDenseView<T> Z, dense::DenseView<T> Y) {
  if constexpr (is_complex_v<T>) {
    return complex_narrow_update<T>(context, alpha, X, S, beta, Z, Y);
  } else {
    if (!cuda::narrow_update_fits<T>(X.cols, Y.cols)) return false;
    cuda::narrow_update<T>(Y.rows, X.cols, Y.cols, alpha, X.data, X.ld, S, beta, Z.data, Z.ld, Y.data, Y.ld,
                           stream_of(context));
    return true;
  }
}

template <class T>
bool transform_in_place(const dense::Context& context, dense::DenseView<T> W, const small_t<T>* S, std::int64_t kept) {
  if constexpr (is_complex_v<T>) {
    const dense::DenseView<T> out{W.space, W.rows, kept, W.ld, W.data};
    return complex_narrow_update<T>(context, T(1), dense::ConstDenseView<T>(W), S, T(0), {}, out);
  } else {
    if (!cuda::narrow_update_fits<T>(W.cols, kept)) return false;
    cuda::narrow_update<T>(W.rows, W.cols, kept, T(1), W.data, W.ld, S, T(0), nullptr, 0, W.data, W.ld,
                           stream_of(context));
    return true;
  }
}

template <class T>
bool block_combine_pair(const dense::Context& context, dense::ConstDenseView<T> X1, dense::ConstDenseView<T> X2,
                        const small_t<T>* S, dense::DenseView<T> Y) {
  if constexpr (is_complex_v<T>) {
    using R = real_t<T>;
    const std::int64_t k1 = X1.cols + X2.cols;
    if (!cuda::narrow_update_fits<R>(2 * k1, 2 * Y.cols)) return false;
    const std::vector<double> s = real_embedding<T>(S, k1, Y.cols, T(1));
    const auto x1 = dense::parts_of(X1), x2 = dense::parts_of(X2);
    const auto y = dense::parts_of(Y);
    cuda::narrow_update_pair<R>(y.rows, x1.cols, x1.data, x1.ld, x2.cols, x2.data, x2.ld, y.cols, s.data(), y.data,
                                y.ld, stream_of(context));
    return true;
  } else {
    if (!cuda::narrow_update_fits<T>(X1.cols + X2.cols, Y.cols)) return false;
    cuda::narrow_update_pair<T>(Y.rows, X1.cols, X1.data, X1.ld, X2.cols, X2.data, X2.ld, Y.cols, S, Y.data, Y.ld,
                                stream_of(context));
    return true;
  }
}

template <class T>
void axpby(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  axpby_kernel<device_t<T>><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream>>>(
      Y.rows, Y.cols, to_device(alpha), device_pointer(X.data), X.ld, to_device(beta), device_pointer(Y.data), Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void column_axpby(const dense::Context& context, const double* alpha, dense::ConstDenseView<T> X, T beta,
                  dense::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<T> a(stream, alpha, static_cast<std::size_t>(Y.cols));
  column_axpby_kernel<device_t<T>><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream>>>(
      Y.rows, Y.cols, device_pointer(a.data()), device_pointer(X.data), X.ld, to_device(beta), device_pointer(Y.data),
      Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void scale_columns(const dense::Context& context, const double* scale, dense::DenseView<T> X) {
  if (X.rows == 0 || X.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<real_t<T>> s(stream, scale, static_cast<std::size_t>(X.cols));  // real factors
  scale_columns_kernel<device_t<T>><<<grid_for(X.rows * X.cols), threads_per_block, 0, stream>>>(
      X.rows, X.cols, s.data(), device_pointer(X.data), X.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void copy_block(const dense::Context& context, dense::ConstDenseView<T> src, dense::DenseView<T> dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  // Complex values are copied as their parts, exactly (1 * x + 0 * y is not x where y is not finite).
  if constexpr (is_complex_v<T>) {
    using R = real_t<T>;
    return copy_block<R>(context, dense::parts_of(src), dense::parts_of(dst));
  }
  // Device to device: an element-wise kernel, faster than cudaMemcpy2DAsync on
  // these shapes (docs/benchmarks/block-ops.md#kernel-notes).
  if (src.space != Space::host && dst.space != Space::host) {
    axpby_kernel<T><<<grid_for(dst.rows * dst.cols), threads_per_block, 0, stream>>>(dst.rows, dst.cols, T(1), src.data,
                                                                                     src.ld, T(0), dst.data, dst.ld);
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
    return;
  }
  BLOCKEIGS_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, dst.ld * sizeof(T), src.data, src.ld * sizeof(T),
                                         dst.cols * sizeof(T), dst.rows, cudaMemcpyDefault, stream));
  // A host side must be complete (or no longer read) when the call returns.
  if (src.space == Space::host || dst.space == Space::host) BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class From, class To>
void convert_block(const dense::Context& context, dense::ConstDenseView<From> src, dense::DenseView<To> dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  convert_kernel<From, To><<<grid_for(dst.rows * dst.cols), threads_per_block, 0, stream>>>(
      dst.rows, dst.cols, src.data, src.ld, dst.data, dst.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}
BLOCKEIGS_DEVICE_CONVERSIONS(BLOCKEIGS_BACKEND_INSTANTIATE)

template <class T>
void select_columns(const dense::Context& context, dense::ConstDenseView<T> src, const std::int64_t* columns,
                    dense::DenseView<T> dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<std::int64_t> c(stream, columns, static_cast<std::size_t>(dst.cols));
  select_columns_kernel<device_t<T>><<<grid_for(dst.rows * dst.cols), threads_per_block, 0, stream>>>(
      dst.rows, dst.cols, c.data(), device_pointer(src.data), src.ld, device_pointer(dst.data), dst.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void keep_columns(const dense::Context& context, dense::DenseView<T> X, const std::int64_t* columns,
                  std::int64_t kept) {
  if (X.rows == 0 || kept == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<std::int64_t> c(stream, columns, static_cast<std::size_t>(kept));
  const std::int64_t rows_per_block = (threads_per_block / 32) * keep_rows;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((X.rows + rows_per_block - 1) / rows_per_block, 1, 8192));
  keep_columns_kernel<device_t<T>>
      <<<blocks, threads_per_block, 0, stream>>>(X.rows, kept, c.data(), device_pointer(X.data), X.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void fill_random(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed, std::int64_t first_row,
                 std::int64_t first_col) {
  if (X.rows == 0 || X.cols == 0) return;
  fill_random_kernel<device_t<T>><<<grid_for(X.rows * X.cols), threads_per_block, 0, stream_of(context)>>>(
      X.rows, X.cols, device_pointer(X.data), X.ld, seed, first_row, first_col);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void fill_random_rows(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed,
                      const std::int64_t* rows, std::int64_t first_col) {
  if (X.rows == 0 || X.cols == 0) return;
  fill_random_rows_kernel<device_t<T>><<<grid_for(X.rows * X.cols), threads_per_block, 0, stream_of(context)>>>(
      X.rows, X.cols, device_pointer(X.data), X.ld, seed, rows, first_col);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void apply_diagonal(const dense::Context& context, const T* d, dense::ConstDenseView<T> X, dense::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  apply_diagonal_kernel<device_t<T>><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream_of(context)>>>(
      Y.rows, Y.cols, device_pointer(d), device_pointer(X.data), X.ld, device_pointer(Y.data), Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

double memory_bytes_per_sm_cycle(int device) {
  int sms = 0, sm_khz = 0, memory_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();  // an attribute this driver does not report: unknown, not an error
    return 0;
  }
  if (sms <= 0 || sm_khz <= 0) return 0;
  // Double data rate: two transfers of bus_bits a memory clock.
  const double bytes_per_second = 2.0 * memory_khz * 1e3 * bus_bits / 8;
  return bytes_per_second / (double(sms) * sm_khz * 1e3);
}

#define BLOCKEIGS_INSTANTIATE(T) BLOCKEIGS_DEVICE_UPDATES(T, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::device_ops
