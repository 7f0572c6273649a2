// Device halves of the block operations (solver/blocks/block_ops.hpp), implemented
// in block_ops_cuda.cu and block_reductions_cuda.cu with cuBLAS and small kernels, or
// in a build without CUDA by block_ops_stub.cpp, whose every function throws "not
// compiled with CUDA". Private to the solver library: callers use block_ops.hpp,
// which dispatches on the views' space.
// Small matrices and vectors arrive as host arrays and are staged on the
// context's stream. Functions that return host data synchronise the stream.
#pragma once

#include <cstdint>
#include <memory>

#include "core/backend_lists.hpp"
#include "core/scalar.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver::device_ops {

// A local Gram matrix on its way to pinned host memory. wait() blocks until
// it has arrived (not for device work queued after it) and writes it out
// (complex entries as pairs of doubles).
class LocalGramTransfer {
 public:
  virtual ~LocalGramTransfer() = default;
  virtual void wait(double* out) = 0;
};
// Each operation's signature is written once, as a macro of its element type (BLOCKEIGS_DEVICE_<NAME>(T));
// the lists after them name every operation with the name its "not compiled" error gives, and are expanded
// into the declarations below, the instantiations in the CUDA files that define them and the stubs of a build
// without CUDA (block_ops_stub.cpp), as Ginkgo's GKO_DECLARE_* are.

// Queues X^T Y on this rank's rows (k1 x k2, row-major), delivered to pinned
// host memory; null when the product is empty (all zeros).
#define BLOCKEIGS_DEVICE_GRAM_LOCAL_START(T)                                                                     \
  std::unique_ptr<LocalGramTransfer> gram_local_start(const dense::Context& context, dense::ConstDenseView<T> X, \
                                                      dense::ConstDenseView<T> Y)
// Queues [X X_tail]^T [Y1 Y2] ((X.cols + X_tail.cols) x (Y1.cols + Y2.cols),
// row-major; X_tail may have no columns): in fp64, where the shape fits, in
// one pass over X (solver/blocks/cuda/tall_skinny_gram.cu); otherwise a product for
// each view of X and each of Y1, Y2. Null when empty.
#define BLOCKEIGS_DEVICE_GRAM_PAIR_LOCAL_START(T)                                                                     \
  std::unique_ptr<LocalGramTransfer> gram_pair_local_start(const dense::Context& context, dense::ConstDenseView<T> X, \
                                                           dense::ConstDenseView<T> X_tail,                           \
                                                           dense::ConstDenseView<T> Y1, dense::ConstDenseView<T> Y2)
// out (k1 x k2, row-major, host) = X^T Y (X^H Y) on this rank's rows.
#define BLOCKEIGS_DEVICE_GRAM_LOCAL(T)                                                                   \
  void gram_local(const dense::Context& context, dense::ConstDenseView<T> X, dense::ConstDenseView<T> Y, \
                  small_t<T>* out)
// out (k x k) = X^T X (X^H X), both triangles filled.
#define BLOCKEIGS_DEVICE_GRAM_SELF_LOCAL(T) \
  void gram_self_local(const dense::Context& context, dense::ConstDenseView<T> X, small_t<T>* out)
// out[j] = sum_i |X(i, j)|^2 on this rank's rows, in a fixed order.
#define BLOCKEIGS_DEVICE_COLUMN_SUMSQ_LOCAL(T) \
  void column_sumsq_local(const dense::Context& context, dense::ConstDenseView<T> X, double* out)
// R(:, position[j]) = AX(:, j) - lambda_j X(:, j) (position: a host array,
// a permutation); out[j] = sum_i R(i, position[j])^2 and out[k + j] = sum_i
// X(i, j)^2 on this rank's rows, in a fixed order.
#define BLOCKEIGS_DEVICE_EIGEN_RESIDUALS_LOCAL(T)                                                                    \
  void eigen_residuals_local(const dense::Context& context, dense::ConstDenseView<T> X, dense::ConstDenseView<T> AX, \
                             const double* lambda, dense::DenseView<T> R, const std::int64_t* position, double* out)

// The coefficients S (host, row-major) are of small_t<T>: complex for complex blocks.
#define BLOCKEIGS_DEVICE_BLOCK_UPDATE(T)                                                                             \
  void block_update(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const small_t<T>* S, T beta, \
                    dense::DenseView<T> Y)
// Y = alpha X S + beta Z and W(:, :kept) = W S with the narrow-block kernel;
// false (nothing done) when the shape does not fit it.
#define BLOCKEIGS_DEVICE_BLOCK_COMBINE(T)                                                                             \
  bool block_combine(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const small_t<T>* S, T beta, \
                     dense::ConstDenseView<T> Z, dense::DenseView<T> Y)
#define BLOCKEIGS_DEVICE_TRANSFORM_IN_PLACE(T) \
  bool transform_in_place(const dense::Context& context, dense::DenseView<T> W, const small_t<T>* S, std::int64_t kept)
// Y = [X1 X2] S with S = [S1; S2] ((X1.cols + X2.cols) x Y.cols, row-major);
// false when the shape does not fit the narrow-block kernel.
#define BLOCKEIGS_DEVICE_BLOCK_COMBINE_PAIR(T)                                                                     \
  bool block_combine_pair(const dense::Context& context, dense::ConstDenseView<T> X1, dense::ConstDenseView<T> X2, \
                          const small_t<T>* S, dense::DenseView<T> Y)
#define BLOCKEIGS_DEVICE_AXPBY(T) \
  void axpby(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y)
#define BLOCKEIGS_DEVICE_COLUMN_AXPBY(T)                                                                    \
  void column_axpby(const dense::Context& context, const double* alpha, dense::ConstDenseView<T> X, T beta, \
                    dense::DenseView<T> Y)
#define BLOCKEIGS_DEVICE_SCALE_COLUMNS(T) \
  void scale_columns(const dense::Context& context, const double* scale, dense::DenseView<T> X)
// Either side may be on the host; the copy completes before the call returns
// when one is.
#define BLOCKEIGS_DEVICE_COPY_BLOCK(T) \
  void copy_block(const dense::Context& context, dense::ConstDenseView<T> src, dense::DenseView<T> dst)
#define BLOCKEIGS_DEVICE_SELECT_COLUMNS(T)                                                                      \
  void select_columns(const dense::Context& context, dense::ConstDenseView<T> src, const std::int64_t* columns, \
                      dense::DenseView<T> dst)
#define BLOCKEIGS_DEVICE_KEEP_COLUMNS(T)                                                               \
  void keep_columns(const dense::Context& context, dense::DenseView<T> X, const std::int64_t* columns, \
                    std::int64_t kept)
#define BLOCKEIGS_DEVICE_FILL_RANDOM(T)                                                                              \
  void fill_random(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed, std::int64_t first_row, \
                   std::int64_t first_col)
#define BLOCKEIGS_DEVICE_FILL_RANDOM_ROWS(T)                                                      \
  void fill_random_rows(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed, \
                        const std::int64_t* rows, std::int64_t first_col)
#define BLOCKEIGS_DEVICE_APPLY_DIAGONAL(T) \
  void apply_diagonal(const dense::Context& context, const T* d, dense::ConstDenseView<T> X, dense::DenseView<T> Y)

// LOBPCG's Ritz update in one pass (solver/blocks/cuda/ritz_update.cu): Y = S C,
// AY = AS C, with S = [S S_tail] and AS = [AS AS_tail] (a block in two
// views, SplitColumns; an empty tail for one view). C is S's columns x
// Y.cols, row-major; AS has at most S's columns, and C's rows past them
// multiply S alone. R = AY(:, :nb) - Y(:, :nb) diag(lambda) with nb = R.cols;
// out as eigen_residuals_local's; AY's columns below ay_first left unwritten.
// With implied_theta and implied_column (host arrays of nb), AS(:, :nb) is
// not read: A X(:, j) = theta_j S(:, j) + S(:, column_j).
// S's tail and R are in Ts: fp64, or fp32 (LOBPCG's residual block,
// search_block_ops.hpp: the staged kernel, A X implied only).
// false (nothing done) when the shape does not fit the kernel.
// The sums are queued for the host in `sums` (null when S has no rows, the
// sums then zero): its wait() delivers them.
#define BLOCKEIGS_DEVICE_RITZ_UPDATE_LOCAL(Ts)                                                             \
  bool ritz_update_local(const dense::Context& context, dense::ConstDenseView<double> S,                   \
                         dense::ConstDenseView<Ts> S_tail, dense::ConstDenseView<double> AS,               \
                         dense::ConstDenseView<double> AS_tail, const double* C, const double* lambda,     \
                         dense::DenseView<double> Y, dense::DenseView<double> AY, dense::DenseView<Ts> R,  \
                         const std::int64_t* position, std::int64_t ay_first, const double* implied_theta, \
                         const std::int64_t* implied_column, std::unique_ptr<LocalGramTransfer>& sums)
// dst = src rounded or widened to dst's precision (fp32 <-> fp64), on the device.
#define BLOCKEIGS_DEVICE_CONVERT_BLOCK(From, To) \
  void convert_block(const dense::Context& context, dense::ConstDenseView<From> src, dense::DenseView<To> dst)

// Whether ritz_update_local takes A X implied for these shapes.
#define BLOCKEIGS_DEVICE_RITZ_UPDATE_IMPLIED_FITS \
  bool ritz_update_implied_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb)
// gram_pair_local_start with X's tail and Y1 in fp32, in one pass where the
// narrow kernel takes the shape (`out` set, true); false otherwise.
#define BLOCKEIGS_DEVICE_GRAM_PAIR_SINGLE_LOCAL_START                                                     \
  bool gram_pair_single_local_start(const dense::Context& context, dense::ConstDenseView<double> X,       \
                                    dense::ConstDenseView<float> X_tail, dense::ConstDenseView<float> Y1, \
                                    dense::ConstDenseView<double> Y2, std::unique_ptr<LocalGramTransfer>& out)
// Whether both take LOBPCG's step at block nb (S of ns columns, A S of nv,
// m outputs, A X implied) in one pass each.
#define BLOCKEIGS_DEVICE_SEARCH_SINGLE_FITS \
  bool search_single_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb)
// The device's peak memory rate in bytes per SM clock cycle, from its
// attributes; 0 where the driver does not report them.
#define BLOCKEIGS_DEVICE_MEMORY_BYTES_PER_SM_CYCLE double memory_bytes_per_sm_cycle(int device)

// The lists: OP(signature, name). Block reductions (block_reductions_cuda.cu) and element-wise operations and
// updates (block_ops_cuda.cu), for every element type T of BLOCKEIGS_FOR_EACH_SCALAR.
#define BLOCKEIGS_DEVICE_REDUCTIONS(T, OP)                         \
  OP(BLOCKEIGS_DEVICE_GRAM_LOCAL_START(T), "start_gram")           \
  OP(BLOCKEIGS_DEVICE_GRAM_PAIR_LOCAL_START(T), "start_gram_pair") \
  OP(BLOCKEIGS_DEVICE_GRAM_LOCAL(T), "gram")                       \
  OP(BLOCKEIGS_DEVICE_GRAM_SELF_LOCAL(T), "gram")                  \
  OP(BLOCKEIGS_DEVICE_COLUMN_SUMSQ_LOCAL(T), "column_norms")       \
  OP(BLOCKEIGS_DEVICE_EIGEN_RESIDUALS_LOCAL(T), "eigen_residuals")
#define BLOCKEIGS_DEVICE_UPDATES(T, OP)                            \
  OP(BLOCKEIGS_DEVICE_BLOCK_UPDATE(T), "block_update")             \
  OP(BLOCKEIGS_DEVICE_BLOCK_COMBINE(T), "block_combine")           \
  OP(BLOCKEIGS_DEVICE_TRANSFORM_IN_PLACE(T), "transform_in_place") \
  OP(BLOCKEIGS_DEVICE_BLOCK_COMBINE_PAIR(T), "block_combine_pair") \
  OP(BLOCKEIGS_DEVICE_AXPBY(T), "axpby")                           \
  OP(BLOCKEIGS_DEVICE_COLUMN_AXPBY(T), "column_axpby")             \
  OP(BLOCKEIGS_DEVICE_SCALE_COLUMNS(T), "scale_columns")           \
  OP(BLOCKEIGS_DEVICE_COPY_BLOCK(T), "copy_block")                 \
  OP(BLOCKEIGS_DEVICE_SELECT_COLUMNS(T), "select_columns")         \
  OP(BLOCKEIGS_DEVICE_KEEP_COLUMNS(T), "keep_columns")             \
  OP(BLOCKEIGS_DEVICE_FILL_RANDOM(T), "fill_random")               \
  OP(BLOCKEIGS_DEVICE_FILL_RANDOM_ROWS(T), "fill_random_rows")     \
  OP(BLOCKEIGS_DEVICE_APPLY_DIAGONAL(T), "apply_diagonal")
// LOBPCG's fused operations (fused_reductions_cuda.cu; memory_bytes_per_sm_cycle in block_ops_cuda.cu): the
// Ritz update for a residual block of Ts (float and double), and those of no element type.
#define BLOCKEIGS_DEVICE_RITZ_UPDATES(Ts, OP) OP(BLOCKEIGS_DEVICE_RITZ_UPDATE_LOCAL(Ts), "ritz_update")
#define BLOCKEIGS_DEVICE_UNTYPED(OP)                                              \
  OP(BLOCKEIGS_DEVICE_RITZ_UPDATE_IMPLIED_FITS, "ritz_update_prefers_implied_ax") \
  OP(BLOCKEIGS_DEVICE_GRAM_PAIR_SINGLE_LOCAL_START, "start_gram_pair")            \
  OP(BLOCKEIGS_DEVICE_SEARCH_SINGLE_FITS, "search_single_kernels_fit")            \
  OP(BLOCKEIGS_DEVICE_MEMORY_BYTES_PER_SM_CYCLE, "memory_bytes_per_sm_cycle")
// convert_block's pairs of element types (block_ops_cuda.cu).
#define BLOCKEIGS_DEVICE_CONVERSIONS(OP)                             \
  OP(BLOCKEIGS_DEVICE_CONVERT_BLOCK(float, double), "convert_block") \
  OP(BLOCKEIGS_DEVICE_CONVERT_BLOCK(double, float), "convert_block") \
  OP(BLOCKEIGS_DEVICE_CONVERT_BLOCK(float, float), "convert_block")  \
  OP(BLOCKEIGS_DEVICE_CONVERT_BLOCK(double, double), "convert_block")

// Expanded by core/backend_lists.hpp's expanders: declarations here, instantiations in the CUDA files, and
// block_ops_stub.cpp's stubs.
BLOCKEIGS_DEVICE_REDUCTIONS(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)
BLOCKEIGS_DEVICE_UPDATES(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)
template <class Ts>
BLOCKEIGS_DEVICE_RITZ_UPDATE_LOCAL(Ts);
template <class From, class To>
BLOCKEIGS_DEVICE_CONVERT_BLOCK(From, To);
BLOCKEIGS_DEVICE_UNTYPED(BLOCKEIGS_BACKEND_DECLARE)

}  // namespace blockeigs::solver::device_ops
