// Device block operations: cuBLAS for the products, small kernels for the
// element-wise work, all on the context's stream.
//
// cuBLAS is column-major; a row-major block X (rows x cols, ld) is, read
// column-major, X^T (cols x rows, ld). So
//   G = X^T Y (k1 x k2, row-major)   is   G^T = Y^T X   = gemm(N, T) on (Y^T, X^T),
//   Y = X S   (row-major)            is   Y^T = S^T X^T = gemm(N, N) on (S^T, X^T),
// with every operand passed as stored, no copies or transposes.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "solver/block_ops.hpp"
#include "solver/block_ops_cuda.hpp"
#include "solver/cuda/narrow_block_kernels.hpp"
#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/dense_kernels.hpp"

namespace blockeigs::solver::device_ops {
namespace {

constexpr int threads_per_block = 256;
// Rows per partial sum in column_sumsq: fixed, so that the summation order,
// and with it the result, does not depend on the GPU.
constexpr std::int64_t sum_chunk_rows = 1024;

cudaStream_t stream_of(const spmm::Context& context) {
  return static_cast<cudaStream_t>(context.stream());
}

cublasHandle_t cublas_of(const spmm::Context& context) {
  auto handle = static_cast<cublasHandle_t>(context.cublas_handle());
  // alpha and beta are host scalars; set every time, as the handle is shared.
  BLOCKEIGS_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  return handle;
}

int grid_for(std::int64_t total) {
  return static_cast<int>(std::clamp<std::int64_t>((total + threads_per_block - 1) / threads_per_block,
                                                   1, 65535));
}

// Device memory for the call's duration, ordered on the stream (the pool makes
// it cheap after the first iterations).
template <class T>
class StreamArray {
 public:
  StreamArray(cudaStream_t stream, std::size_t count) : stream_(stream) {
    if (count > 0) BLOCKEIGS_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream_));
  }
  // A device copy of host values, converted to T. A pageable-host copy is
  // staged before cudaMemcpyAsync returns, so `host` may go away afterwards.
  template <class U>
  StreamArray(cudaStream_t stream, const U* host, std::size_t count) : StreamArray(stream, count) {
    if (count == 0) return;
    std::vector<T> converted(host, host + count);
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(data_, converted.data(), count * sizeof(T),
                                         cudaMemcpyHostToDevice, stream_));
  }
  StreamArray(const StreamArray&) = delete;
  StreamArray& operator=(const StreamArray&) = delete;
  ~StreamArray() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  T* data() const { return data_; }

 private:
  cudaStream_t stream_;
  T* data_ = nullptr;
};

template <class T>
std::vector<T> to_host_sync(cudaStream_t stream, const T* device, std::size_t count) {
  std::vector<T> out(count);
  if (count > 0) {
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(out.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
    BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return out;
}

// ---- kernels: grid-stride loops over the rows x cols elements ----------------

#define BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols)                                                     \
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x, total_ = (rows) * (cols); \
       e < total_; e += std::int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void axpby_kernel(std::int64_t rows, std::int64_t cols, T alpha, const T* x, std::int64_t ldx,
                             T beta, T* y, std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    const T ax = alpha * x[i * ldx + j];
    y[i * ldy + j] = beta == T(0) ? ax : ax + beta * y[i * ldy + j];
  }
}

template <class T>
__global__ void column_axpby_kernel(std::int64_t rows, std::int64_t cols, const T* alpha, const T* x,
                                    std::int64_t ldx, T beta, T* y, std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    const T ax = alpha[j] * x[i * ldx + j];
    y[i * ldy + j] = beta == T(0) ? ax : ax + beta * y[i * ldy + j];
  }
}

template <class T>
__global__ void scale_columns_kernel(std::int64_t rows, std::int64_t cols, const T* scale, T* x,
                                     std::int64_t ld) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    x[i * ld + j] *= scale[j];
  }
}

template <class T>
__global__ void select_columns_kernel(std::int64_t rows, std::int64_t cols, const std::int64_t* columns,
                                      const T* src, std::int64_t lds, T* dst, std::int64_t ldd) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    dst[i * ldd + j] = src[i * lds + columns[j]];
  }
}

// A warp per group of keep_rows rows, lane j moving column columns[c + j]
// to c + j for each 32-column chunk c: the lanes load all their values
// before any lane stores (a warp barrier between), and since columns[j] >= j
// a later chunk reads only columns that no earlier chunk wrote. Several rows
// per step keep loads in flight (one thread per row, looping over the
// columns, ran at ~0.5 TB/s on an H200: every store waited for its load).
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
__global__ void fill_random_kernel(std::int64_t rows, std::int64_t cols, T* x, std::int64_t ld,
                                   std::uint64_t seed, std::int64_t first_row, std::int64_t first_col) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    x[i * ld + j] = static_cast<T>(hash_uniform(seed, first_row + i, first_col + j));
  }
}

template <class T>
__global__ void apply_diagonal_kernel(std::int64_t rows, std::int64_t cols, const T* d, const T* x,
                                      std::int64_t ldx, T* y, std::int64_t ldy) {
  BLOCKEIGS_FOR_EACH_ELEMENT(rows, cols) {
    const std::int64_t i = e / cols, j = e % cols;
    y[i * ldy + j] = d[i] * x[i * ldx + j];
  }
}

#undef BLOCKEIGS_FOR_EACH_ELEMENT

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
__global__ void column_sumsq_partial_kernel(std::int64_t rows, std::int64_t cols, const T* x,
                                            std::int64_t ld, double* partial) {
  __shared__ double acc[threads_per_block];
  const auto [begin, end, width, phases, t, phase] = chunk_layout(rows, cols);
  for (std::int64_t tile = 0; tile < cols; tile += width) {
    const std::int64_t j = tile + t % width;
    double s = 0.0;
    if (phase < phases && j < cols)
#pragma unroll 8  // loads in flight: the adds stay in row order
      for (std::int64_t i = begin + phase; i < end; i += phases) {
        const double v = x[i * ld + j];
        s = fma(v, v, s);
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
template <class T>
__global__ void eigen_residuals_partial_kernel(std::int64_t rows, std::int64_t cols, const T* lambda, const T* x,
                                               std::int64_t ldx, const T* ax, std::int64_t ldax, T* r,
                                               std::int64_t ldr, double* partial) {
  __shared__ double acc_r[threads_per_block];
  __shared__ double acc_x[threads_per_block];
  const auto [begin, end, width, phases, t, phase] = chunk_layout(rows, cols);
  for (std::int64_t tile = 0; tile < cols; tile += width) {
    const std::int64_t j = tile + t % width;
    double sr = 0.0, sx = 0.0;
    if (phase < phases && j < cols) {
      const T l = lambda[j];
#pragma unroll 4
      for (std::int64_t i = begin + phase; i < end; i += phases) {
        const T xv = x[i * ldx + j];
        const T rv = ax[i * ldax + j] - l * xv;
        r[i * ldr + j] = rv;
        sr = fma(double(rv), double(rv), sr);
        sx = fma(double(xv), double(xv), sx);
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

// ---- cuBLAS in T's precision ---------------------------------------------

template <class T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
          std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
          std::int64_t ldc) {
  if constexpr (std::is_same_v<T, double>)
    BLOCKEIGS_CUBLAS_CHECK(cublasDgemm(h, ta, tb, int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb),
                                       &beta, c, int(ldc)));
  else
    BLOCKEIGS_CUBLAS_CHECK(cublasSgemm(h, ta, tb, int(m), int(n), int(k), &alpha, a, int(lda), b, int(ldb),
                                       &beta, c, int(ldc)));
}

// X^T Y for tall-skinny blocks. One cuBLAS gemm with k = rows (millions) and
// m, n = tens runs on a handful of thread blocks (measured on an H200: 235 ms
// for a 16.7M x 16 Gram matrix, ~500x its bandwidth time). Instead the rows are
// cut into fixed chunks, a strided-batched gemm forms one partial product per
// chunk (many independent m x n x chunk problems fill the GPU), and a small
// kernel adds the partials in a fixed order: deterministic, and the order does
// not depend on the GPU.
//
// out[e] = sum over chunks c of partial[c * entries + e], one thread block
// per entry: thread t adds chunks t, t + 256, ... in order, then a fixed
// tree adds the 256 sums. The shape never changes, so neither do the bits.
// (One thread per entry adding 1000-2000 chunks in a row, as before, took
// ~0.15-0.3 ms of dependent L2 loads on an H200: more than the Gram itself.)
template <class T>
__global__ void __launch_bounds__(threads_per_block)
    sum_partials_kernel(std::int64_t chunks, std::int64_t entries, const T* partial, double* out) {
  __shared__ double sums[threads_per_block];
  const std::int64_t e = blockIdx.x;
  double s = 0.0;
  for (std::int64_t c = threadIdx.x; c < chunks; c += threads_per_block)
    s += static_cast<double>(partial[c * entries + e]);
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int width = threads_per_block / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) sums[threadIdx.x] += sums[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[e] = sums[0];
}

template <class T>
void sum_partials(std::int64_t chunks, std::int64_t entries, const T* partial, double* out, cudaStream_t stream) {
  sum_partials_kernel<T><<<static_cast<unsigned>(entries), threads_per_block, 0, stream>>>(chunks, entries, partial,
                                                                                           out);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

// Rows per chunk: at least gram_min_chunk_rows (each gemm long enough to run
// efficiently), and at most gram_max_chunks chunks (the partials stay small).
constexpr std::int64_t gram_min_chunk_rows = 2048;
constexpr std::int64_t gram_max_chunks = 1024;

template <class T>
void gemm_strided_batched(cublasHandle_t h, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                          std::int64_t lda, long long stride_a, const T* b, std::int64_t ldb, long long stride_b,
                          T* c, std::int64_t ldc, long long stride_c, std::int64_t batch) {
  const T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, double>)
    BLOCKEIGS_CUBLAS_CHECK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, int(m), int(n), int(k), &one, a,
                                                     int(lda), stride_a, b, int(ldb), stride_b, &zero, c, int(ldc),
                                                     stride_c, int(batch)));
  else
    BLOCKEIGS_CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, int(m), int(n), int(k), &one, a,
                                                     int(lda), stride_a, b, int(ldb), stride_b, &zero, c, int(ldc),
                                                     stride_c, int(batch)));
}

// Pinned host blocks for Gram results, reused: page-locking memory for every
// Gram would cost more than the copy. Only a few are out at a time. The pool
// is first used after the CUDA runtime is set up, so it is destroyed before
// the runtime's own exit handler runs, and frees its blocks then.
class PinnedPool {
 public:
  static PinnedPool& instance() {
    static PinnedPool pool;
    return pool;
  }
  PinnedPool() = default;
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;
  ~PinnedPool() {
    for (const auto& [capacity, block] : free_) cudaFreeHost(block);  // errors at exit are moot
  }
  // A block of at least `bytes`; its size in `capacity`.
  void* acquire(std::size_t bytes, std::size_t& capacity) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < free_.size(); ++i)
        if (free_[i].first >= bytes) {
          void* block = free_[i].second;
          capacity = free_[i].first;
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          return block;
        }
    }
    capacity = std::max<std::size_t>(bytes, 64 * 1024);
    void* block = nullptr;
    BLOCKEIGS_CUDA_CHECK(cudaHostAlloc(&block, capacity, cudaHostAllocPortable));
    return block;
  }
  void release(void* block, std::size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace_back(capacity, block);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::size_t, void*>> free_;
};

class PinnedGramTransfer final : public LocalGramTransfer {
 public:
  PinnedGramTransfer(cudaStream_t stream, const double* device, std::size_t count) : count_(count) {
    host_ = static_cast<double*>(PinnedPool::instance().acquire(count * sizeof(double), capacity_));
    BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&arrived_, cudaEventDisableTiming));
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(host_, device, count * sizeof(double), cudaMemcpyDeviceToHost, stream));
    BLOCKEIGS_CUDA_CHECK(cudaEventRecord(arrived_, stream));
  }
  PinnedGramTransfer(const PinnedGramTransfer&) = delete;
  PinnedGramTransfer& operator=(const PinnedGramTransfer&) = delete;
  ~PinnedGramTransfer() override {
    // The copy may still be in flight when a transfer is dropped unread.
    cudaEventSynchronize(arrived_);
    cudaEventDestroy(arrived_);
    PinnedPool::instance().release(host_, capacity_);
  }
  void wait(double* out) override {
    BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(arrived_));
    std::copy(host_, host_ + count_, out);
  }

 private:
  std::size_t count_;
  std::size_t capacity_ = 0;
  double* host_ = nullptr;
  cudaEvent_t arrived_ = nullptr;
};

// Queues X^T Y (k1 x k2 row-major, double) over this rank's rows and its copy
// to pinned host memory.
template <class T>
std::unique_ptr<LocalGramTransfer> tall_skinny_gram(const spmm::Context& context, spmm::ConstDenseView<T> X,
                                                    spmm::ConstDenseView<T> Y) {
  const std::int64_t k1 = X.cols, k2 = Y.cols, rows = X.rows, entries = k1 * k2;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunk =
      std::max(gram_min_chunk_rows, (rows + gram_max_chunks - 1) / gram_max_chunks);
  const std::int64_t full = rows / chunk, tail = rows - full * chunk, chunks = full + (tail > 0 ? 1 : 0);
  StreamArray<double> sums(stream, static_cast<std::size_t>(entries));
  StreamArray<T> partial(stream, static_cast<std::size_t>(chunks * entries));
  cublasHandle_t handle = cublas_of(context);
  // Column-major, each chunk's partial is k2 x k1 = Y_c^T X_c: the row-major k1 x k2 X_c^T Y_c.
  if (full > 0)
    gemm_strided_batched<T>(handle, k2, k1, chunk, Y.data, Y.ld, static_cast<long long>(chunk * Y.ld), X.data, X.ld,
                            static_cast<long long>(chunk * X.ld), partial.data(), k2, entries, full);
  if (tail > 0)
    gemm_strided_batched<T>(handle, k2, k1, tail, Y.data + full * chunk * Y.ld, Y.ld, 0,
                            X.data + full * chunk * X.ld, X.ld, 0, partial.data() + full * entries, k2, entries, 1);
  sum_partials<T>(chunks, entries, partial.data(), sums.data(), stream);
  // The device buffers are freed in stream order, after the copy has read them.
  return std::make_unique<PinnedGramTransfer>(stream, sums.data(), static_cast<std::size_t>(entries));
}

}  // namespace

template <class T>
std::unique_ptr<LocalGramTransfer> gram_local_start(const spmm::Context& context, spmm::ConstDenseView<T> X,
                                                    spmm::ConstDenseView<T> Y) {
  if (X.rows == 0 || X.cols == 0 || Y.cols == 0) return nullptr;
  return tall_skinny_gram(context, X, Y);
}

template <class T>
void gram_local(const spmm::Context& context, spmm::ConstDenseView<T> X, spmm::ConstDenseView<T> Y,
                double* out) {
  const std::int64_t k1 = X.cols, k2 = Y.cols;
  std::fill(out, out + k1 * k2, 0.0);
  if (auto transfer = gram_local_start(context, X, Y)) transfer->wait(out);
}

template <class T>
void gram_self_local(const spmm::Context& context, spmm::ConstDenseView<T> X, double* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + k * k, 0.0);
  if (X.rows == 0 || k == 0) return;
  tall_skinny_gram(context, X, X)->wait(out);
  // Exactly symmetric, as the host path's syrk is: mirror the upper triangle.
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < i; ++j) out[i * k + j] = out[j * k + i];
}

template <class T>
void column_sumsq_local(const spmm::Context& context, spmm::ConstDenseView<T> X, double* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + k, 0.0);
  if (X.rows == 0 || k == 0) return;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  StreamArray<double> partial(stream, static_cast<std::size_t>(chunks * k));
  StreamArray<double> sums(stream, static_cast<std::size_t>(k));
  column_sumsq_partial_kernel<T><<<static_cast<unsigned>(chunks), threads_per_block, 0, stream>>>(
      X.rows, k, X.data, X.ld, partial.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  sum_partials<double>(chunks, k, partial.data(), sums.data(), stream);
  const std::vector<double> host = to_host_sync(stream, sums.data(), static_cast<std::size_t>(k));
  std::copy(host.begin(), host.end(), out);
}

template <class T>
void eigen_residuals_local(const spmm::Context& context, spmm::ConstDenseView<T> X, spmm::ConstDenseView<T> AX,
                           const double* lambda, spmm::DenseView<T> R, double* out) {
  const std::int64_t k = X.cols;
  std::fill(out, out + 2 * k, 0.0);
  if (X.rows == 0 || k == 0) return;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  const StreamArray<T> l(stream, lambda, static_cast<std::size_t>(k));
  StreamArray<double> partial(stream, static_cast<std::size_t>(chunks * 2 * k));
  StreamArray<double> sums(stream, static_cast<std::size_t>(2 * k));
  eigen_residuals_partial_kernel<T><<<static_cast<unsigned>(chunks), threads_per_block, 0, stream>>>(
      X.rows, k, l.data(), X.data, X.ld, AX.data, AX.ld, R.data, R.ld, partial.data());
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
  sum_partials<double>(chunks, 2 * k, partial.data(), sums.data(), stream);
  const std::vector<double> host = to_host_sync(stream, sums.data(), static_cast<std::size_t>(2 * k));
  std::copy(host.begin(), host.end(), out);
}

template <class T>
void block_update(const spmm::Context& context, T alpha, spmm::ConstDenseView<T> X, const double* S,
                  T beta, spmm::DenseView<T> Y) {
  const cudaStream_t stream = stream_of(context);
  if (X.cols == 0) {  // an empty product: Y = beta * Y (beta == 0 writes zeros)
    spmm::cuda::scale_block(Y, beta, stream);
    return;
  }
  // Up to 32 x 16 with pair-aligned rows: the row-group kernel (block CG's
  // updates at 16 columns). Otherwise cuBLAS, even for narrow blocks: on 2M x
  // 16 fp64 (H200) it took 0.26 / 0.35 ms (beta = 0 / 1) against the tiled
  // narrow kernel's 0.28 / 0.37 ms.
  if (cuda::row_group_update_fits<T>(X.cols, X.cols, Y.cols, X.data, X.ld, nullptr, 0,
                                     beta == T(0) ? nullptr : Y.data, Y.ld, Y.data, Y.ld)) {
    cuda::row_group_update<T>(Y.rows, X.cols, X.cols, Y.cols, alpha, X.data, X.ld, nullptr, 0, S, beta, Y.data,
                              Y.ld, Y.data, Y.ld, stream);
    return;
  }
  const StreamArray<T> s(stream, S, static_cast<std::size_t>(X.cols * Y.cols));
  // Column-major Y^T = S^T X^T: S (row-major k1 x k2) read column-major is S^T, ld k2.
  gemm<T>(cublas_of(context), CUBLAS_OP_N, CUBLAS_OP_N, Y.cols, Y.rows, X.cols, alpha, s.data(), Y.cols,
          X.data, X.ld, beta, Y.data, Y.ld);
}

template <class T>
bool block_combine(const spmm::Context& context, T alpha, spmm::ConstDenseView<T> X, const double* S, T beta,
                   spmm::ConstDenseView<T> Z, spmm::DenseView<T> Y) {
  if (!cuda::narrow_update_fits(X.cols, Y.cols)) return false;
  cuda::narrow_update<T>(Y.rows, X.cols, Y.cols, alpha, X.data, X.ld, S, beta, Z.data, Z.ld, Y.data, Y.ld,
                         stream_of(context));
  return true;
}

template <class T>
bool transform_in_place(const spmm::Context& context, spmm::DenseView<T> W, const double* S, std::int64_t kept) {
  if (!cuda::narrow_update_fits(W.cols, kept)) return false;
  cuda::narrow_update<T>(W.rows, W.cols, kept, T(1), W.data, W.ld, S, T(0), nullptr, 0, W.data, W.ld,
                         stream_of(context));
  return true;
}

template <class T>
bool block_combine_pair(const spmm::Context& context, spmm::ConstDenseView<T> X1, spmm::ConstDenseView<T> X2,
                        const double* S, spmm::DenseView<T> Y) {
  if (!cuda::narrow_update_fits(X1.cols + X2.cols, Y.cols)) return false;
  cuda::narrow_update_pair<T>(Y.rows, X1.cols, X1.data, X1.ld, X2.cols, X2.data, X2.ld, Y.cols, S, Y.data, Y.ld,
                              stream_of(context));
  return true;
}

template <class T>
void axpby(const spmm::Context& context, T alpha, spmm::ConstDenseView<T> X, T beta,
           spmm::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  axpby_kernel<T><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream>>>(Y.rows, Y.cols, alpha, X.data,
                                                                               X.ld, beta, Y.data, Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void column_axpby(const spmm::Context& context, const double* alpha, spmm::ConstDenseView<T> X, T beta,
                  spmm::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<T> a(stream, alpha, static_cast<std::size_t>(Y.cols));
  column_axpby_kernel<T><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream>>>(
      Y.rows, Y.cols, a.data(), X.data, X.ld, beta, Y.data, Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void scale_columns(const spmm::Context& context, const double* scale, spmm::DenseView<T> X) {
  if (X.rows == 0 || X.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<T> s(stream, scale, static_cast<std::size_t>(X.cols));
  scale_columns_kernel<T><<<grid_for(X.rows * X.cols), threads_per_block, 0, stream>>>(X.rows, X.cols, s.data(),
                                                                                       X.data, X.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void copy_block(const spmm::Context& context, spmm::ConstDenseView<T> src, spmm::DenseView<T> dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  // Device to device: an element-wise kernel runs at twice cudaMemcpy2DAsync's
  // rate on these shapes (H200, 2M x 16 fp64: 4.0 vs 1.8 TB/s).
  if (src.space != Space::host && dst.space != Space::host) {
    axpby_kernel<T><<<grid_for(dst.rows * dst.cols), threads_per_block, 0, stream>>>(dst.rows, dst.cols, T(1), src.data,
                                                                                     src.ld, T(0), dst.data, dst.ld);
    BLOCKEIGS_CUDA_CHECK_LAUNCH();
    return;
  }
  BLOCKEIGS_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, dst.ld * sizeof(T), src.data, src.ld * sizeof(T),
                                         dst.cols * sizeof(T), dst.rows, cudaMemcpyDefault, stream));
  // A host side must be complete (or no longer read) when the call returns.
  if (src.space == Space::host || dst.space == Space::host)
    BLOCKEIGS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void select_columns(const spmm::Context& context, spmm::ConstDenseView<T> src, const std::int64_t* columns,
                    spmm::DenseView<T> dst) {
  if (dst.rows == 0 || dst.cols == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<std::int64_t> c(stream, columns, static_cast<std::size_t>(dst.cols));
  select_columns_kernel<T><<<grid_for(dst.rows * dst.cols), threads_per_block, 0, stream>>>(
      dst.rows, dst.cols, c.data(), src.data, src.ld, dst.data, dst.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void keep_columns(const spmm::Context& context, spmm::DenseView<T> X, const std::int64_t* columns,
                  std::int64_t kept) {
  if (X.rows == 0 || kept == 0) return;
  const cudaStream_t stream = stream_of(context);
  const StreamArray<std::int64_t> c(stream, columns, static_cast<std::size_t>(kept));
  const std::int64_t rows_per_block = (threads_per_block / 32) * keep_rows;
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((X.rows + rows_per_block - 1) / rows_per_block, 1, 8192));
  keep_columns_kernel<T><<<blocks, threads_per_block, 0, stream>>>(X.rows, kept, c.data(), X.data, X.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void fill_random(const spmm::Context& context, spmm::DenseView<T> X, std::uint64_t seed,
                 std::int64_t first_row, std::int64_t first_col) {
  if (X.rows == 0 || X.cols == 0) return;
  fill_random_kernel<T><<<grid_for(X.rows * X.cols), threads_per_block, 0, stream_of(context)>>>(
      X.rows, X.cols, X.data, X.ld, seed, first_row, first_col);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

template <class T>
void apply_diagonal(const spmm::Context& context, const T* d, spmm::ConstDenseView<T> X,
                    spmm::DenseView<T> Y) {
  if (Y.rows == 0 || Y.cols == 0) return;
  apply_diagonal_kernel<T><<<grid_for(Y.rows * Y.cols), threads_per_block, 0, stream_of(context)>>>(
      Y.rows, Y.cols, d, X.data, X.ld, Y.data, Y.ld);
  BLOCKEIGS_CUDA_CHECK_LAUNCH();
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                       \
  template std::unique_ptr<LocalGramTransfer> gram_local_start(const spmm::Context&, spmm::ConstDenseView<T>, \
                                                               spmm::ConstDenseView<T>);                     \
  template void gram_local(const spmm::Context&, spmm::ConstDenseView<T>, spmm::ConstDenseView<T>, double*); \
  template void gram_self_local(const spmm::Context&, spmm::ConstDenseView<T>, double*);              \
  template void column_sumsq_local(const spmm::Context&, spmm::ConstDenseView<T>, double*);           \
  template void eigen_residuals_local(const spmm::Context&, spmm::ConstDenseView<T>, spmm::ConstDenseView<T>, \
                                      const double*, spmm::DenseView<T>, double*);                           \
  template void block_update(const spmm::Context&, T, spmm::ConstDenseView<T>, const double*, T,      \
                             spmm::DenseView<T>);                                                     \
  template bool block_combine(const spmm::Context&, T, spmm::ConstDenseView<T>, const double*, T,      \
                              spmm::ConstDenseView<T>, spmm::DenseView<T>);                           \
  template bool transform_in_place(const spmm::Context&, spmm::DenseView<T>, const double*, std::int64_t); \
  template bool block_combine_pair(const spmm::Context&, spmm::ConstDenseView<T>, spmm::ConstDenseView<T>,      \
                                   const double*, spmm::DenseView<T>);                                          \
  template void axpby(const spmm::Context&, T, spmm::ConstDenseView<T>, T, spmm::DenseView<T>);       \
  template void column_axpby(const spmm::Context&, const double*, spmm::ConstDenseView<T>, T,         \
                             spmm::DenseView<T>);                                                     \
  template void scale_columns(const spmm::Context&, const double*, spmm::DenseView<T>);               \
  template void copy_block(const spmm::Context&, spmm::ConstDenseView<T>, spmm::DenseView<T>);        \
  template void select_columns(const spmm::Context&, spmm::ConstDenseView<T>, const std::int64_t*,    \
                               spmm::DenseView<T>);                                                   \
  template void keep_columns(const spmm::Context&, spmm::DenseView<T>, const std::int64_t*, std::int64_t); \
  template void fill_random(const spmm::Context&, spmm::DenseView<T>, std::uint64_t, std::int64_t,    \
                            std::int64_t);                                                            \
  template void apply_diagonal(const spmm::Context&, const T*, spmm::ConstDenseView<T>, spmm::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::device_ops
