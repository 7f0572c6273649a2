// Dense operations on row-major distributed blocks: each rank holds
// local_rows x k of a global N x k block, in the memory space its view names
// (host: OpenBLAS, device: cuBLAS and small kernels on the context's stream).
// These are the building blocks of LOBPCG and block CG.
//
// Conventions:
//  - All views of one call live in the same space (copy_block excepted); the
//    context supplies the stream and the cuBLAS handle for device views.
//  - Small matrices (Gram matrices, coefficient matrices) are HostMatrixFor<T>:
//    double (complex double for complex blocks), row-major, on the host,
//    identical on every rank. For complex blocks X^T reads X^H throughout.
//  - Reductions over ranks (gram, column_norms) are deterministic: each rank
//    sums its rows in a fixed order, and ranks are combined by a fixed
//    binomial tree rooted at rank 0 and then broadcast, so for a fixed rank
//    count the result has the same bits on every run and on every rank (a
//    plain MPI_Allreduce promises neither). They use point-to-point messages
//    on `comm` with the tag reduce_tag: pass a communicator that no one else
//    receives on with MPI_ANY_TAG (LOBPCG passes its own duplicate).
//  - Device calls are asynchronous on the context's stream except those that
//    return host data (gram, column_norms), which synchronise it.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "dense/context.hpp"
#include "dense/dense.hpp"

#include "core/host_device.hpp"
#include "core/scalar.hpp"

namespace blockeigs::solver {

// A small dense matrix on the host: row-major, of double or complex double.
template <class S>
class HostMatrixOf {
 public:
  using value_type = S;
  HostMatrixOf() = default;
  HostMatrixOf(std::int64_t rows, std::int64_t cols, S fill = S(0))
      : rows_(rows), cols_(cols), values_(static_cast<std::size_t>(rows * cols), fill) {}
  static HostMatrixOf identity(std::int64_t n);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  S* data() { return values_.data(); }
  const S* data() const { return values_.data(); }
  std::vector<S>& values() { return values_; }
  const std::vector<S>& values() const { return values_; }
  S& operator()(std::int64_t i, std::int64_t j) { return values_[i * cols_ + j]; }
  S operator()(std::int64_t i, std::int64_t j) const { return values_[i * cols_ + j]; }

  // Rows [r0, r0 + nr) and columns [c0, c0 + nc) as a new matrix.
  HostMatrixOf block(std::int64_t r0, std::int64_t nr, std::int64_t c0, std::int64_t nc) const;

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<S> values_;
};
using HostMatrix = HostMatrixOf<double>;
using ComplexHostMatrix = HostMatrixOf<std::complex<double>>;
// The small matrices of blocks of T.
template <class T>
using HostMatrixFor = HostMatrixOf<small_t<T>>;

// A B and A^T B (A^H B for complex matrices) of small host matrices.
template <class S>
HostMatrixOf<S> multiply(const HostMatrixOf<S>& A, const HostMatrixOf<S>& B);
template <class S>
HostMatrixOf<S> transpose_times(const HostMatrixOf<S>& A, const HostMatrixOf<S>& B);
// C := alpha op(A) op(B) + beta C (op: the transpose where asked) on
// row-major host blocks given by pointer and leading dimension (op(A) is
// m x k, op(B) k x n): the same small products on blocks in place, without
// copying them out. beta == 0 never reads C.
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const double* A,
             std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc,
             double alpha = 1.0);
// The same for complex matrices, op the conjugate transpose.
void product(bool adjoint_a, bool adjoint_b, std::int64_t m, std::int64_t n, std::int64_t k,
             const std::complex<double>* A, std::int64_t lda, const std::complex<double>* B, std::int64_t ldb,
             std::complex<double> beta, std::complex<double>* C, std::int64_t ldc, std::complex<double> alpha = 1.0);

// Columns [first, first + count) of a block, as a view with the same ld.
template <class T>
dense::DenseView<T> column_range(dense::DenseView<T> X, std::int64_t first, std::int64_t count) {
  return {X.space, X.rows, count, X.ld, X.data + first};
}
template <class T>
dense::ConstDenseView<T> column_range(dense::ConstDenseView<T> X, std::int64_t first, std::int64_t count) {
  return {X.space, X.rows, count, X.ld, X.data + first};
}

// A block of rows whose first head.cols columns are in one view and the
// rest in another (the same rows): LOBPCG keeps A Z in a compact block of
// its own, apart from [A X A P], since a product writes its rows there
// faster (docs/benchmarks/solvers.md#compact-blocks); the Ritz update and the Gram pair
// also take the basis as [X P] and a residual block Z apart. A single view
// converts to one with no tail.
// The tail may hold another precision Ts (LOBPCG's residual block in its
// search precision, fp32 beside an fp64 [X P]: search_block_ops.hpp).
template <class T, class Ts = T>
struct SplitColumns {
  dense::ConstDenseView<T> head;
  dense::ConstDenseView<Ts> tail;
  SplitColumns(dense::ConstDenseView<T> all)  // NOLINT: a whole block is a split one with no tail
      requires std::is_same_v<T, Ts>
      : head(all), tail{all.space, all.rows, 0, all.ld, all.data} {}
  SplitColumns(dense::DenseView<T> all)  // NOLINT
      requires std::is_same_v<T, Ts> : SplitColumns(dense::ConstDenseView<T>(all)) {}
  SplitColumns(dense::ConstDenseView<T> h, dense::ConstDenseView<Ts> t) : head(h), tail(t) {}
  std::int64_t rows() const { return head.rows; }
  std::int64_t cols() const { return head.cols + tail.cols; }
};

// ---- reductions (collective over comm) --------------------------------------

inline constexpr int reduce_tag = 7301;

// values := the sum over ranks of values, in a fixed order; the same bits on
// every rank. Every rank passes the same count.
void allreduce_sum(MPI_Comm comm, double* values, std::size_t count);
void allreduce_sum(MPI_Comm comm, std::complex<double>* values, std::size_t count);

// M from rank 0 to every rank, shape included (what the others held is
// replaced).
template <class S>
void broadcast(MPI_Comm comm, HostMatrixOf<S>& M);

// X^T Y (k1 x k2) summed over ranks. X: local x k1, Y: local x k2; X may
// come in two views (SplitColumns).
template <class T>
HostMatrixFor<T> gram(const dense::Context& context, MPI_Comm comm, const std::type_identity_t<SplitColumns<T>>& X,
                      dense::ConstDenseView<T> Y);

// X^T Y in two halves, so that device work queued between them runs while
// the host waits: start_gram queues the product and its copy to the host (on
// the host backend it computes the local product at once), and finish()
// waits for that result only, not for work queued after it, then reduces
// over ranks. The same values as gram(). finish() is collective, and is
// called once.
template <class S>
class GramInFlightOf {
 public:
  struct Transfer;  // the device half, when there is one
  GramInFlightOf(MPI_Comm comm, HostMatrixOf<S> local, std::unique_ptr<Transfer> transfer);
  GramInFlightOf(GramInFlightOf&&) noexcept;
  GramInFlightOf& operator=(GramInFlightOf&&) noexcept;
  ~GramInFlightOf();
  HostMatrixOf<S> finish();
  // Blocks the queued product reads (temporaries of a conversion), released
  // by finish() once the product has arrived.
  void keep_until_finished(std::shared_ptr<void> resource) { kept_.push_back(std::move(resource)); }

 private:
  MPI_Comm comm_;
  HostMatrixOf<S> local_;
  std::unique_ptr<Transfer> transfer_;
  std::vector<std::shared_ptr<void>> kept_;
};
using GramInFlight = GramInFlightOf<double>;
template <class T>
using GramInFlightFor = GramInFlightOf<small_t<T>>;

// X in two views goes as start_gram_pair with no Y2.
template <class T>
GramInFlightFor<T> start_gram(const dense::Context& context, MPI_Comm comm,
                              const std::type_identity_t<SplitColumns<T>>& X, dense::ConstDenseView<T> Y);

// X^T [Y1 Y2] (k1 x (Y1.cols + Y2.cols)): two Gram matrices with one left
// side, as start_gram. X may come in two views (SplitColumns). On the
// device, in fp64 and up to 96 columns of X and 64 of [Y1 Y2], X is read
// once (solver/blocks/cuda/tall_skinny_gram.cu).
template <class T>
GramInFlightFor<T> start_gram_pair(const dense::Context& context, MPI_Comm comm,
                                   const std::type_identity_t<SplitColumns<T>>& X, dense::ConstDenseView<T> Y1,
                                   dense::ConstDenseView<T> Y2);

// start_gram_pair with X's tail and Y1 in fp32: X^T [Y1 Y2] for LOBPCG's
// [X P Z]^T [Z A Z] with its residual block Z in fp32 (lobpcg/search_block_ops.hpp).
GramInFlight start_gram_pair(const dense::Context& context, MPI_Comm comm, const SplitColumns<double, float>& X,
                             dense::ConstDenseView<float> Y1, dense::ConstDenseView<double> Y2);

// X^T X (k x k), exactly symmetric (Hermitian: syrk and herk compute one triangle).
template <class T>
HostMatrixFor<T> gram(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X);

// Euclidean norm of every column over all ranks.
template <class T>
std::vector<double> column_norms(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X);

struct ResidualNorms {
  std::vector<double> residual;  // ||r_j||
  std::vector<double> x;         // ||x_j||
};
// The norms from this rank's sums of squares of R's k columns then X's,
// summed over all ranks.
ResidualNorms residual_norms_from_sums(MPI_Comm comm, std::vector<double> sums, std::int64_t k);
// A residual placement as a full permutation of 0..k-1 (the identity when
// empty); throws if it is not one.
std::vector<std::int64_t> checked_positions(const std::vector<std::int64_t>& position, std::int64_t k);
// R = AX - X diag(lambda), LOBPCG's residual block, in one pass over X and
// AX, with the Euclidean norms of R's and X's columns over all ranks.
// R must not overlap X or AX. `r_position`, if not empty, is a permutation
// of 0..k-1: residual j goes to R's column r_position[j] (its norms stay at
// index j).
template <class T>
ResidualNorms eigen_residuals(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X,
                              dense::ConstDenseView<T> AX, const std::vector<double>& lambda, dense::DenseView<T> R,
                              const std::vector<std::int64_t>& r_position = {});

// ---- local operations (no communication) -----------------------------------

// Y = alpha * X * S + beta * Y; X: local x k1, S: k1 x k2, Y: local x k2.
// beta == 0: Y is not read. Y must not overlap X.
template <class T>
void block_update(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const HostMatrixFor<T>& S, T beta,
                  dense::DenseView<T> Y);
// Y = V(:, first:) E + beta Y over the two views of V (E's rows are V's
// columns from `first` on): a block_update for each view it reaches.
template <class T>
void split_update(const dense::Context& context, const std::type_identity_t<SplitColumns<T>>& V, std::int64_t first,
                  const HostMatrixFor<T>& E, T beta, dense::DenseView<T> Y);

// Y = alpha * X * S + beta * Z (beta == 0: Z is not read): an update written
// to a new block in one pass. Y may be Z, and must not otherwise overlap X or Z.
template <class T>
void block_combine(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, const HostMatrixFor<T>& S,
                   T beta, dense::ConstDenseView<T> Z, dense::DenseView<T> Y);

// Y = X1 * S1 + X2 * S2 (X1: local x k1, S1: k1 x k, X2: local x k2,
// S2: k2 x k, Y: local x k) in one pass where the device kernel applies: block
// CG's new search block from the old one and the residual. X1, X2 and Y may be
// views of one buffer (one ld) whose columns overlap in any way: each row of Y
// is written only after that row of X1 and X2 has been read. `scratch` (local
// x k, not overlapping the others) is used where the one-pass kernel does not
// apply (the host, wide blocks).
template <class T>
void block_combine_pair(const dense::Context& context, dense::ConstDenseView<T> X1, const HostMatrixFor<T>& S1,
                        dense::ConstDenseView<T> X2, const HostMatrixFor<T>& S2, dense::DenseView<T> Y,
                        dense::DenseView<T> scratch);

// W(:, 0:S.cols) = W * S, a change of basis in place (S.cols <= W.cols).
// `scratch` (W's rows, at least S.cols columns) is used only where the
// in-place kernel does not apply (the host, wide blocks).
template <class T>
void transform_in_place(const dense::Context& context, dense::DenseView<T> W, const HostMatrixFor<T>& S,
                        dense::DenseView<T> scratch);

// Y = alpha * X + beta * Y (beta == 0: Y is not read).
template <class T>
void axpby(const dense::Context& context, T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y);

// Y(:, j) = alpha[j] * X(:, j) + beta * Y(:, j) (beta == 0: Y is not read);
// e.g. residuals R = A X - X diag(lambda) as copy, then alpha = -lambda, beta = 1.
template <class T>
void column_axpby(const dense::Context& context, const std::vector<double>& alpha, dense::ConstDenseView<T> X, T beta,
                  dense::DenseView<T> Y);

// X(:, j) *= scale[j].
template <class T>
void scale_columns(const dense::Context& context, const std::vector<double>& scale, dense::DenseView<T> X);

// dst = src, same shape; the two may be in different spaces.
template <class T>
void copy_block(const dense::Context& context, dense::ConstDenseView<T> src, dense::DenseView<T> dst);

// dst = src in dst's precision (rounded to nearest), same shape and space
// (LOBPCG's residual block in fp32 beside fp64 blocks).
template <class From, class To>
void convert_block(const dense::Context& context, dense::ConstDenseView<From> src, dense::DenseView<To> dst);

// convert_block for real or complex values (complex blocks as their parts): the mixed filters' fp32 copies.
template <class From, class To>
void convert_values(const dense::Context& context, dense::ConstDenseView<From> src, dense::DenseView<To> dst) {
  if constexpr (is_complex_v<From>)
    convert_block<real_t<From>, real_t<To>>(context, dense::parts_of(src), dense::parts_of(dst));
  else
    convert_block<From, To>(context, src, dst);
}

// dst(:, j) = src(:, columns[j]) for j < columns.size() == dst.cols.
template <class T>
void select_columns(const dense::Context& context, dense::ConstDenseView<T> src,
                    const std::vector<std::int64_t>& columns, dense::DenseView<T> dst);

// X(:, j) = X(:, columns[j]) for j < columns.size(), in place: the kept
// columns moved to the front. `columns` strictly increasing.
template <class T>
void keep_columns(const dense::Context& context, dense::DenseView<T> X, const std::vector<std::int64_t>& columns);

// X(:, j) = X(:, order[j]) in place, `order` a permutation of X's columns.
template <class T>
void permute_columns(const dense::Context& context, dense::DenseView<T> X, const std::vector<std::int64_t>& order);

// X(i, j) = uniform [-1, 1) value of the global entry (first_row + i,
// first_col + j) for `seed`: a hash, so the block does not depend on how the
// rows are split over ranks (np 1 and np 4 start from the same block).
template <class T>
void fill_random(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed, std::int64_t first_row,
                 std::int64_t first_col = 0);
// The same with row i's global index rows[i] (X.rows entries in X's space):
// the entries of a block whose rows are scattered in the global numbering
// (a renumbered operator's rows, drawn as the input numbers them).
template <class T>
void fill_random_rows(const dense::Context& context, dense::DenseView<T> X, std::uint64_t seed,
                      const std::int64_t* rows, std::int64_t first_col = 0);

// Y(i, j) = d[i] * X(i, j); d has X.rows entries in X's space (Jacobi).
template <class T>
void apply_diagonal(const dense::Context& context, const T* d, dense::ConstDenseView<T> X, dense::DenseView<T> Y);

// ---- the random hash, shared by the host and device fills -----------------

// splitmix64's finaliser: a bijection on 64 bits with full avalanche.
BLOCKEIGS_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) from (seed, row, col): chained mixing, so that nearby
// rows, columns and seeds give unrelated values. 53 random bits, exact in double.
BLOCKEIGS_HOST_DEVICE constexpr double hash_uniform(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  const std::uint64_t h = mix64(mix64(mix64(seed) ^ static_cast<std::uint64_t>(row)) ^ static_cast<std::uint64_t>(col));
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

// Entry (row, col) of a random block of T for `seed`: hash_uniform, and for
// complex T a second, independent value for the imaginary part (columns 2 col
// and 2 col + 1 of the hash).
template <class T>
T random_entry(std::uint64_t seed, std::int64_t row, std::int64_t col) {
  if constexpr (is_complex_v<T>) {
    return T(static_cast<real_t<T>>(hash_uniform(seed, row, 2 * col)),
             static_cast<real_t<T>>(hash_uniform(seed, row, 2 * col + 1)));
  } else {
    return static_cast<T>(hash_uniform(seed, row, col));
  }
}

}  // namespace blockeigs::solver
