// Device reductions for the block operations: Gram matrices X^T Y, column
// sums of squares and LOBPCG's residual block with its norms. Each rank's sum
// is formed in fixed chunks of rows and the chunks are added in a fixed
// order, so the bits do not depend on the GPU or the run; the ranks are then
// combined by block_ops_host.cpp. On the context's stream.
//
// cuBLAS is column-major; a row-major block X (rows x cols, ld) is, read
// column-major, X^T (cols x rows, ld). So G = X^T Y (k1 x k2, row-major) is
// G^T = Y^T X = gemm(N, T) on (Y^T, X^T), every operand passed as stored.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/blocks/cuda/device_support.cuh"
#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "solver/blocks/cuda/pinned_sums.cuh"
#include "solver/blocks/cuda/tall_skinny_gram.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/device_complex.cuh"

namespace blockeigs::solver::device_ops {
namespace {

using namespace support;
using spmm::cuda::device_pointer;
using spmm::cuda::device_t;

// s + |v|^2 in double, the real part's square added first.
__device__ __forceinline__ double add_squared(double s, double v) { return fma(v, v, s); }
__device__ __forceinline__ double add_squared(double s, float v) { return fma(double(v), double(v), s); }
template <class R>
__device__ __forceinline__ double add_squared(double s, spmm::cuda::complex_values::DeviceComplex<R> v) {
  return add_squared(add_squared(s, v.re), v.im);
}

// Rows per partial sum in column_sumsq: fixed, so that the summation order,
// and with it the result, does not depend on the GPU.
constexpr std::int64_t sum_chunk_rows = 1024;

// Partial column sums of squares: block b covers rows [b, b + 1) * sum_chunk_rows.
// Its 256 threads take a tile of up to 256 columns: thread t owns column
// tile + t % width and every phases-th row from t / width, so a warp reads
// whole row segments (coalesced) for any width; the phases are then added in
// order.
struct ChunkLayout {
  std::int64_t begin, end;  // this block's rows
  int width;                // columns per tile
  int phases;               // threads per column: thread t takes every phases-th row from t / width
  int t, phase;
};

__device__ __forceinline__ ChunkLayout chunk_layout(std::int64_t rows, std::int64_t cols) {
  ChunkLayout c;
  c.begin = blockIdx.x * sum_chunk_rows;
  c.end = min(rows, c.begin + sum_chunk_rows);
  c.width = static_cast<int>(cols < threads_per_block ? cols : threads_per_block);
  c.phases = threads_per_block / c.width;
  c.t = static_cast<int>(threadIdx.x);
  c.phase = c.t / c.width;
  return c;
}

template <class T>
__global__ void column_sumsq_partial_kernel(std::int64_t rows, std::int64_t cols, const T* x, std::int64_t ld,
                                            double* partial) {
  __shared__ double acc[threads_per_block];
  const auto [begin, end, width, phases, t, phase] = chunk_layout(rows, cols);
  for (std::int64_t tile = 0; tile < cols; tile += width) {
    const std::int64_t j = tile + t % width;
    double s = 0.0;
    if (phase < phases && j < cols)
#pragma unroll 8  // loads in flight: the adds stay in row order
      for (std::int64_t i = begin + phase; i < end; i += phases) {
        s = add_squared(s, x[i * ld + j]);
      }
    acc[t] = s;
    __syncthreads();
    if (t < width && tile + t < cols) {
      double total = 0.0;
      for (int p = 0; p < phases; ++p) total += acc[p * width + t];
      partial[blockIdx.x * cols + tile + t] = total;
    }
    __syncthreads();
  }
}

// The residual block and the partial sums of squares of its columns and of
// X's, in the layout of column_sumsq_partial_kernel: partial holds 2 * cols
// values per chunk, R's then X's.
template <class T, class R>
__global__ void eigen_residuals_partial_kernel(std::int64_t rows, std::int64_t cols, const R* lambda, const T* x,
                                               std::int64_t ldx, const T* ax, std::int64_t ldax, T* r, std::int64_t ldr,
                                               const std::int64_t* position, double* partial) {
  __shared__ double acc_r[threads_per_block];
  __shared__ double acc_x[threads_per_block];
  const auto [begin, end, width, phases, t, phase] = chunk_layout(rows, cols);
  for (std::int64_t tile = 0; tile < cols; tile += width) {
    const std::int64_t j = tile + t % width;
    double sr = 0.0, sx = 0.0;
    if (phase < phases && j < cols) {
      const R l = lambda[j];
      T* const r_col = r + position[j];
      // The loads of `rows_in_flight` rows are issued before any store: R may
      // alias X and A X as far as the compiler knows, so loads after a store
      // would wait for it, one row's latency at a time
      // (docs/benchmarks/block-ops.md#kernel-notes). The adds stay in row order.
      constexpr int rows_in_flight = 4;
      for (std::int64_t i0 = begin + phase; i0 < end; i0 += rows_in_flight * phases) {
        T xv[rows_in_flight], av[rows_in_flight];
#pragma unroll
        for (int u = 0; u < rows_in_flight; ++u) {
          const std::int64_t i = i0 + u * phases;
          xv[u] = i < end ? x[i * ldx + j] : T(0);
          av[u] = i < end ? ax[i * ldax + j] : T(0);
        }
#pragma unroll
        for (int u = 0; u < rows_in_flight; ++u) {
          const std::int64_t i = i0 + u * phases;
          if (i >= end) break;
          const T rv = av[u] - l * xv[u];
          r_col[i * ldr] = rv;
          sr = add_squared(sr, rv);
          sx = add_squared(sx, xv[u]);
        }
      }
    }
    acc_r[t] = sr;
    acc_x[t] = sx;
    __syncthreads();
    if (t < width && tile + t < cols) {
      double total_r = 0.0, total_x = 0.0;
      for (int p = 0; p < phases; ++p) {
        total_r += acc_r[p * width + t];
        total_x += acc_x[p * width + t];
      }
      partial[blockIdx.x * 2 * cols + tile + t] = total_r;
      partial[blockIdx.x * 2 * cols + cols + tile + t] = total_x;
    }
    __syncthreads();
  }
}

// X^T Y for tall-skinny blocks. One cuBLAS gemm with k = rows (millions) and
// m, n = tens runs on a handful of thread blocks, far from the bandwidth
// (docs/benchmarks/block-ops.md#kernel-notes). Instead the rows are
// cut into fixed chunks, a strided-batched gemm forms one partial product per
// chunk (many independent m x n x chunk problems fill the GPU), and a small
// kernel adds the partials in a fixed order: deterministic, and the order does
// not depend on the GPU.
//
// Rows per chunk: at least gram_min_chunk_rows (each gemm long enough to run
// efficiently), and at most gram_max_chunks chunks (the partials stay small).
constexpr std::int64_t gram_min_chunk_rows = 2048;
constexpr std::int64_t gram_max_chunks = 1024;

// C = A B^T (A B^H for complex values), column-major, `batch` times.
template <class T>
void gemm_strided_batched(cublasHandle_t h, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                          std::int64_t lda, long long stride_a, const T* b, std::int64_t ldb, long long stride_b, T* c,
                          std::int64_t ldc, long long stride_c, std::int64_t batch) {
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, std::complex<double>>)
    BLOCKEIGS_CUBLAS_CHECK(cublasZgemmStridedBatched(
        h, CUBLAS_OP_N, CUBLAS_OP_C, int(m), int(n), int(k), reinterpret_cast<const cuDoubleComplex*>(&one),
        reinterpret_cast<const cuDoubleComplex*>(a), int(lda), stride_a, reinterpret_cast<const cuDoubleComplex*>(b),
        int(ldb), stride_b, reinterpret_cast<const cuDoubleComplex*>(&zero), reinterpret_cast<cuDoubleComplex*>(c),
        int(ldc), stride_c, int(batch)));
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    BLOCKEIGS_CUBLAS_CHECK(cublasCgemmStridedBatched(
        h, CUBLAS_OP_N, CUBLAS_OP_C, int(m), int(n), int(k), reinterpret_cast<const cuComplex*>(&one),
        reinterpret_cast<const cuComplex*>(a), int(lda), stride_a, reinterpret_cast<const cuComplex*>(b), int(ldb),
        stride_b, reinterpret_cast<const cuComplex*>(&zero), reinterpret_cast<cuComplex*>(c), int(ldc), stride_c,
        int(batch)));
  else if constexpr (std::is_same_v<T, double>)
    BLOCKEIGS_CUBLAS_CHECK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, int(m), int(n), int(k), &one, a,
                                                     int(lda), stride_a, b, int(ldb), stride_b, &zero, c, int(ldc),
                                                     stride_c, int(batch)));
  else
    BLOCKEIGS_CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, int(m), int(n), int(k), &one, a,
                                                     int(lda), stride_a, b, int(ldb), stride_b, &zero, c, int(ldc),
                                                     stride_c, int(batch)));
}

// Queues X^T Y (k1 x k2 row-major, double) over this rank's rows, its sums
// written to pinned host memory.
template <class T>
std::unique_ptr<LocalGramTransfer> chunked_gemm_gram(const dense::Context& context, dense::ConstDenseView<T> X,
                                                     dense::ConstDenseView<T> Y) {
  const std::int64_t k1 = X.cols, k2 = Y.cols, rows = X.rows, entries = k1 * k2;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunk = std::max(gram_min_chunk_rows, (rows + gram_max_chunks - 1) / gram_max_chunks);
  const std::int64_t full = rows / chunk, tail = rows - full * chunk, chunks = full + (tail > 0 ? 1 : 0);
  StreamArray<T> partial(stream, static_cast<std::size_t>(chunks * entries));
  cublasHandle_t handle = cublas_of(context);
  // Column-major, each chunk's partial is k2 x k1 = Y_c^T X_c: the row-major k1 x k2 X_c^T Y_c.
  if (full > 0)
    gemm_strided_batched<T>(handle, k2, k1, chunk, Y.data, Y.ld, static_cast<long long>(chunk * Y.ld), X.data, X.ld,
                            static_cast<long long>(chunk * X.ld), partial.data(), k2, entries, full);
  if (tail > 0)
    gemm_strided_batched<T>(handle, k2, k1, tail, Y.data + full * chunk * Y.ld, Y.ld, 0, X.data + full * chunk * X.ld,
                            X.ld, 0, partial.data() + full * entries, k2, entries, 1);
  // The partials are freed in stream order, after the sums have read them;
  // complex ones are summed as pairs of reals.
  constexpr int r = reals_per_value<T>;
  return std::make_unique<PinnedGramTransfer>(stream, chunks, r * entries,
                                              reinterpret_cast<const real_t<T>*>(partial.data()));
}

// X^T Y1 and X^T Y2 queued apart, delivered side by side as X^T [Y1 Y2].
// A product assembled from the products of its row blocks (X's views) and
// column blocks (Y1, Y2), each queued on its own; `reals` doubles an entry
// (2 for complex values).
class TiledTransfer final : public LocalGramTransfer {
 public:
  struct Tile {
    std::unique_ptr<LocalGramTransfer> transfer;  // null: zeros
    std::int64_t row, col, rows, cols;
  };
  TiledTransfer(std::vector<Tile> tiles, std::int64_t cols, int reals)
      : tiles_(std::move(tiles)), cols_(cols * reals), reals_(reals) {}
  void wait(double* out) override {
    std::vector<double> part;
    for (Tile& tile : tiles_) {
      const std::int64_t width = tile.cols * reals_;
      part.assign(static_cast<std::size_t>(tile.rows * width), 0.0);
      if (tile.transfer) tile.transfer->wait(part.data());
      for (std::int64_t i = 0; i < tile.rows; ++i)
        std::copy(part.begin() + i * width, part.begin() + (i + 1) * width,
                  out + (tile.row + i) * cols_ + tile.col * reals_);
    }
  }

 private:
  std::vector<Tile> tiles_;
  std::int64_t cols_;
  int reals_;
};

// X^H [Y1 Y2] for complex double blocks by the real tall-skinny kernel on the values' parts: with each
// block seen as real columns (re, im side by side), the real product G = X_r^T Y_r holds for every complex
// entry (p, q) the four sums whose combination it is: Re = G(2p, 2q) + G(2p+1, 2q+1), Im = G(2p, 2q+1) -
// G(2p+1, 2q). The same products as the complex ones, folded as the transfer delivers them.
class FoldedComplexTransfer final : public LocalGramTransfer {
 public:
  FoldedComplexTransfer(std::unique_ptr<LocalGramTransfer> real, std::int64_t kx, std::int64_t ky)
      : real_(std::move(real)), kx_(kx), ky_(ky) {}
  void wait(double* out) override {
    std::vector<double> g(static_cast<std::size_t>(4 * kx_ * ky_));
    real_->wait(g.data());
    const std::int64_t w = 2 * ky_;
    for (std::int64_t p = 0; p < kx_; ++p)
      for (std::int64_t q = 0; q < ky_; ++q) {
        out[2 * (p * ky_ + q)] = g[2 * p * w + 2 * q] + g[(2 * p + 1) * w + 2 * q + 1];
        out[2 * (p * ky_ + q) + 1] = g[2 * p * w + 2 * q + 1] - g[(2 * p + 1) * w + 2 * q];
      }
  }

 private:
  std::unique_ptr<LocalGramTransfer> real_;
  std::int64_t kx_, ky_;
};

// The real tall-skinny Gram kernel's product X^T [Y1 Y2], X in two views, queued (kx x (ky1 + ky2) partials).
std::unique_ptr<LocalGramTransfer> tall_skinny_start(const dense::Context& context, dense::ConstDenseView<double> X,
                                                     dense::ConstDenseView<double> X_tail,
                                                     dense::ConstDenseView<double> Y1,
                                                     dense::ConstDenseView<double> Y2) {
  const std::int64_t kx = X.cols + X_tail.cols, ky = Y1.cols + Y2.cols;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t blocks = cuda::tall_skinny_gram_blocks(X.rows);
  StreamArray<double> partial(stream, static_cast<std::size_t>(blocks * kx * ky));
  const bool tail = X_tail.cols > 0;
  const cuda::TallSkinnyGramArgs a{.rows = X.rows,
                                   .kx = int(kx),
                                   .ky1 = int(Y1.cols),
                                   .ky2 = int(Y2.cols),
                                   .x = X.data,
                                   .ldx = X.ld,
                                   .kx_head = int(X.cols),
                                   .x_tail = tail ? X_tail.data : X.data,
                                   .ldx_tail = tail ? X_tail.ld : X.ld,
                                   .y1 = Y1.data,
                                   .ldy1 = Y1.ld,
                                   .y2 = Y2.data,
                                   .ldy2 = Y2.ld,
                                   .partial = partial.data()};
  cuda::tall_skinny_gram(a, stream);
  return std::make_unique<PinnedGramTransfer>(stream, blocks, kx * ky, partial.data());
}

// X^H [Y1 Y2] through the real kernel where the doubled widths fit it; null where they do not.
template <class T>
std::unique_ptr<LocalGramTransfer> folded_complex_start(const dense::Context& context, dense::ConstDenseView<T> X,
                                                        dense::ConstDenseView<T> X_tail, dense::ConstDenseView<T> Y1,
                                                        dense::ConstDenseView<T> Y2) {
  const std::int64_t kx = X.cols + X_tail.cols, ky = Y1.cols + Y2.cols;
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    if (cuda::tall_skinny_gram_fits(2 * kx, 2 * ky))
      return std::make_unique<FoldedComplexTransfer>(
          tall_skinny_start(context, dense::parts_of(X), dense::parts_of(X_tail), dense::parts_of(Y1),
                            dense::parts_of(Y2)),
          kx, ky);
  }
  return nullptr;
}

}  // namespace

template <class T>
std::unique_ptr<LocalGramTransfer> gram_pair_local_start(const dense::Context& context, dense::ConstDenseView<T> X,
                                                         dense::ConstDenseView<T> X_tail, dense::ConstDenseView<T> Y1,
                                                         dense::ConstDenseView<T> Y2) {
  const std::int64_t kx = X.cols + X_tail.cols, ky = Y1.cols + Y2.cols;
  if (X.rows == 0 || kx == 0 || ky == 0) return nullptr;
  if constexpr (std::is_same_v<T, double>) {
    if (cuda::tall_skinny_gram_fits(kx, ky)) return tall_skinny_start(context, X, X_tail, Y1, Y2);
  }
  if (auto folded = folded_complex_start(context, X, X_tail, Y1, Y2)) return folded;
  // A product for each view of X and each of Y1, Y2.
  std::vector<TiledTransfer::Tile> tiles;
  std::int64_t row = 0;
  for (const auto& x : {X, X_tail}) {
    std::int64_t col = 0;
    for (const auto& y : {Y1, Y2}) {
      if (x.cols > 0 && y.cols > 0) tiles.push_back({gram_local_start(context, x, y), row, col, x.cols, y.cols});
      col += y.cols;
    }
    row += x.cols;
  }
  return std::make_unique<TiledTransfer>(std::move(tiles), ky, reals_per_value<T>);
}

template <class T>
std::unique_ptr<LocalGramTransfer> gram_local_start(const dense::Context& context, dense::ConstDenseView<T> X,
                                                    dense::ConstDenseView<T> Y) {
  if (X.rows == 0 || X.cols == 0 || Y.cols == 0) return nullptr;
  const dense::ConstDenseView<T> none{X.space, X.rows, 0, X.ld, X.data};
  if (auto folded =
          folded_complex_start(context, X, none, Y, dense::ConstDenseView<T>{Y.space, Y.rows, 0, Y.ld, Y.data}))
    return folded;
  return chunked_gemm_gram(context, X, Y);
}

template <class T>
void gram_local(const dense::Context& context, dense::ConstDenseView<T> X, dense::ConstDenseView<T> Y,
                small_t<T>* out) {
  const std::int64_t k1 = X.cols, k2 = Y.cols;
  std::fill(out, out + k1 * k2, small_t<T>(0));
  if (auto transfer = gram_local_start(context, X, Y)) transfer->wait(reinterpret_cast<double*>(out));
}

template <class T>
void gram_self_local(const dense::Context& context, dense::ConstDenseView<T> X, small_t<T>* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + k * k, small_t<T>(0));
  if (X.rows == 0 || k == 0) return;
  // cuBLAS's batched products, complex values included: the folded tall-skinny kernel would stage X twice
  // for X^H X (as X and as Y).
  chunked_gemm_gram(context, X, X)->wait(reinterpret_cast<double*>(out));
  // Exactly symmetric (Hermitian, with a real diagonal), as the host path's
  // syrk (herk) is: mirror the upper triangle.
  for (std::int64_t i = 0; i < k; ++i) {
    if constexpr (is_complex_v<T>) out[i * k + i] = out[i * k + i].real();
    for (std::int64_t j = 0; j < i; ++j) {
      if constexpr (is_complex_v<T>)
        out[i * k + j] = std::conj(out[j * k + i]);
      else
        out[i * k + j] = out[j * k + i];
    }
  }
}

template <class T>
void column_sumsq_local(const dense::Context& context, dense::ConstDenseView<T> X, double* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + k, 0.0);
  if (X.rows == 0 || k == 0) return;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  StreamArray<double> partial(stream, static_cast<std::size_t>(chunks * k));
  column_sumsq_partial_kernel<device_t<T>><<<static_cast<unsigned>(chunks), threads_per_block, 0, stream>>>(
      X.rows, k, device_pointer(X.data), X.ld, partial.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  PinnedGramTransfer(stream, chunks, k, partial.data()).wait(out);
}

template <class T>
void eigen_residuals_local(const dense::Context& context, dense::ConstDenseView<T> X, dense::ConstDenseView<T> AX,
                           const double* lambda, dense::DenseView<T> R, const std::int64_t* position, double* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + 2 * k, 0.0);
  if (X.rows == 0 || k == 0) return;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  const StreamArray<real_t<T>> l(stream, lambda, static_cast<std::size_t>(k));  // eigenvalues are real
  const StreamArray<std::int64_t> pos(stream, position, static_cast<std::size_t>(k));
  StreamArray<double> partial(stream, static_cast<std::size_t>(chunks * 2 * k));
  eigen_residuals_partial_kernel<<<static_cast<unsigned>(chunks), threads_per_block, 0, stream>>>(
      X.rows, k, l.data(), device_pointer(X.data), X.ld, device_pointer(AX.data), AX.ld, device_pointer(R.data), R.ld,
      pos.data(), partial.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  PinnedGramTransfer(stream, chunks, 2 * k, partial.data()).wait(out);
}

#define BLOCKEIGS_INSTANTIATE(T) BLOCKEIGS_DEVICE_REDUCTIONS(T, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::device_ops
