#include "solver/operator/distributed_operator.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/cuda/halo_pack.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/operator/local_blocks.hpp"
#include "spmm/column_major_spmm.hpp"
#include "spmm/single_input_spmm.hpp"

namespace blockeigs::solver {
namespace {

// Y(target[r], j) += product(r, j) for r < rows: the off-diagonal block's
// product into the rows that have halo columns (each row once:
// deterministic). Y's element (i, j) at Y[i * row_stride + j * col_stride].
// Complex rows are added as rows of twice as many reals (row-major only).
template <class U>
void scatter_add(const dense::Context& context, const U* product, std::int64_t k, const std::int32_t* target,
                 std::int64_t rows, U* Y, std::int64_t row_stride, std::int64_t col_stride) {
  if (context.space() == Space::host) {
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      U* y = Y + std::int64_t(target[r]) * row_stride;
      const U* p = product + r * k;
      for (std::int64_t j = 0; j < k; ++j) y[j * col_stride] += p[j];
    }
  } else if constexpr (is_complex_v<U>) {
    BLOCKEIGS_ASSERT(col_stride == 1);
    using R = real_t<U>;
    cuda::scatter_add_rows(reinterpret_cast<const R*>(product), 2 * k, target, rows, reinterpret_cast<R*>(Y),
                           2 * row_stride, col_stride, context.stream());
  } else {
    cuda::scatter_add_rows(product, k, target, rows, Y, row_stride, col_stride, context.stream());
  }
}
template <class U>
void scatter_add(const dense::Context& context, const U* product, std::int64_t k, const std::int32_t* target,
                 std::int64_t rows, dense::DenseView<U> Y) {
  scatter_add(context, product, k, target, rows, Y.data, Y.ld, 1);
}

// A block of T as the real words it is made of (complex: twice the columns).
template <class T>
dense::ConstDenseView<real_t<T>> as_words(dense::ConstDenseView<T> X) {
  constexpr int r = reals_per_value<T>;
  return {X.space, X.rows, X.cols * r, X.ld * r, reinterpret_cast<const real_t<T>*>(X.data)};
}
// The halo block of `words` words a row as a block of T.
template <class T>
dense::ConstDenseView<T> from_words(dense::ConstDenseView<real_t<T>> H) {
  constexpr int r = reals_per_value<T>;
  return {H.space, H.rows, H.cols / r, H.ld / r, reinterpret_cast<const T*>(H.data)};
}

}  // namespace

template <class T>
DistributedOperator<T>::DistributedOperator(MPI_Comm comm, const dense::Context& context, const RowsFor<T>& rows,
                                            const RowPartition& partition, Algorithm algorithm, const HaloOptions& halo)
    : comm_(comm), context_(context), partition_(partition), halo_options_(halo) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  LocalBlocks<T> blocks = collectively(comm_, [&] {
    if (rows.first_row != partition_.begin(rank_) || rows.local_rows() != partition_.rows(rank_))
      throw Error("DistributedOperator: the rows given do not match the partition");
    return split_local_rows<T>(context_, rows);
  });
  build(std::move(blocks), algorithm);
}

template <class T>
DistributedOperator<T>::DistributedOperator(MPI_Comm comm, const dense::Context& context, const ReplicatedCsr& a,
                                            const RowPartition& partition, Algorithm algorithm, const HaloOptions& halo)
    : comm_(comm), context_(context), partition_(partition), halo_options_(halo) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  LocalBlocks<T> blocks = collectively(comm_, [&]() -> LocalBlocks<T> {
    if (a.begin != partition_.begin(rank_) || a.local_rows() != partition_.rows(rank_))
      throw Error("DistributedOperator: the rows given do not match the partition");
    if (context_.space() != Space::device || a.space != Space::device || a.device != context_.device())
      throw Error("DistributedOperator: a replicated matrix must be in the memory of the context's device");
    if (a.complex != is_complex_v<T>)
      throw Error(std::string("DistributedOperator: a replicated matrix of ") + (a.complex ? "complex" : "real") +
                  " values for a " + (is_complex_v<T> ? "complex" : "real") + " operator");
    if constexpr (std::is_same_v<T, std::complex<float>>)
      throw Error("DistributedOperator: a complex single operator is rounded from a complex double one");
    else
      return split_replicated_on_device<T>(context_, a);
  });
  build(std::move(blocks), algorithm);
}

template <class T>
void DistributedOperator<T>::build(LocalBlocks<T>&& blocks, Algorithm algorithm) {
  halo_plan_ = build_halo_plan(comm_, partition_, blocks.halo_columns);

  diagonal_nnz_ = blocks.diagonal.nnz();
  off_diagonal_nnz_ = blocks.off_diagonal.nnz();
  diagonal_block_ = std::move(blocks.diagonal);  // in the context's space already
  off_diagonal_block_ = std::move(blocks.off_diagonal);
  diagonal_entries_ = std::move(blocks.diagonal_entries);
  // Every rank refuses a transport alike; agreed, so that the apps end cleanly on every rank.
  halo_ = collectively(comm_, [&] { return make_halo_exchange<Word>(comm_, context_, halo_plan_, halo_options_); });
  off_diagonal_rows_ = std::move(blocks.off_diagonal_rows);
  collectively(comm_, [&] {
    diagonal_plan_.emplace(context_, diagonal_block_.view(), algorithm);
    off_diagonal_plan_.emplace(context_, off_diagonal_block_.view(), algorithm);
  });
}

template <class T>
DistributedOperator<T>::~DistributedOperator() = default;

template <class T>
double DistributedOperator<T>::now() const {
  if (profiling_) context_.synchronize();
  return MPI_Wtime();
}

template <class T>
void DistributedOperator<T>::set_profiling(bool on) {
  profiling_ = on;
  halo_->set_profiling(on);
}

template <class T>
void DistributedOperator<T>::diagonal(T* out) const {
  dense::copy_bytes(out, context_.space(), diagonal_entries_.data(), context_.space(),
                    diagonal_entries_.size() * sizeof(T));
}

template <class T>
bool DistributedOperator<T>::diagonal_positions_found() {
  if (!shiftable_) {
    const std::int64_t rows = diagonal_block_.rows();
    diagonal_positions_ = dense::Buffer<std::int64_t>(context_.space(), static_cast<std::size_t>(rows));
    int missing = find_diagonal_positions(context_, diagonal_block_.view(), diagonal_positions_.data()) > 0 ? 1 : 0;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, comm_));
    shiftable_ = missing == 0;
  }
  return *shiftable_;
}

template <class T>
bool DistributedOperator<T>::set_diagonal_shift(T shift) {
  if (!diagonal_positions_found()) return false;
  if (shift != shift_)
    set_shifted_diagonal(context_, diagonal_block_.values(), diagonal_positions_.data(), diagonal_entries_.data(),
                         shift, diagonal_block_.rows());
  shift_ = shift;
  return true;
}

template <class T>
void DistributedOperator<T>::reserve(std::int64_t k) {
  if (k <= width_) return;
  reserve_halo(k * reals_per_value<T>);
  halo_product_ = dense::DenseBlock<T>(context_.space(), off_diagonal_block_.rows(), k);
  width_ = k;
}

template <class T>
void DistributedOperator<T>::reserve_halo(std::int64_t words) {
  if (halo_->reserve(words)) return;
  // CUDA IPC mapping refused on some rank: the choice made again without it.
  halo_ = make_halo_exchange<Word>(comm_, context_, halo_plan_, halo_options_, true);
  halo_->set_profiling(profiling_);
  halo_->reserve(std::max(words, width_ * reals_per_value<T>));
}

template <class T>
void DistributedOperator<T>::apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
  reserve(X.cols);
  const double t0 = now();
  halo_->begin(as_words(X));  // pack; post receives, then sends
  const double t1 = now();
  diagonal_plan_->multiply(alpha, X, beta, Y);                     // needs no remote rows: overlaps the messages
  const dense::ConstDenseView<T> H = from_words<T>(halo_->end());  // wait for the halo rows
  const double t4 = now();
  add_off_diagonal(alpha, H, Y);  // Y += alpha A_offd H
  halo_->release();
  record_timings(t0, t1, t4);
}

template <class T>
void DistributedOperator<T>::apply_single_impl(dense::ConstDenseView<float> X, dense::DenseView<T> Y) {
  const std::int64_t k = X.cols;
  if constexpr (is_complex_v<T>)
    throw InputError("apply_single: a complex operator takes complex blocks (applies_single() is false)");
  // fp64 only; the halo buffers move whole doubles, so an odd width widens.
  else if (!std::is_same_v<T, double> || k % 2 != 0) {
    dense::DenseBlock<T> widened(X.space, X.rows, k);
    convert_block(context_, X, widened.view());
    return apply_impl(T(1), dense::ConstDenseView<T>(widened.view()), T(0), Y);
  }
  if constexpr (std::is_same_v<T, double>) {
    reserve(k);
    const double t0 = now();
    halo_->begin(X);
    const double t1 = now();
    spmm::multiply_single_input(context_, diagonal_block_.view(), X, Y);
    const dense::ConstDenseView<T> H = halo_->end();
    const double t4 = now();
    add_off_diagonal_single(H, Y);
    halo_->release();
    record_timings(t0, t1, t4);
  }
}

template <class T>
void DistributedOperator<T>::record_timings(double t0, double t1, double t4) {
  const auto& marks = halo_->marks();
  timings_.add({t0, t1, marks.packed, marks.arrived, t4, now()});
}

template <class T>
void DistributedOperator<T>::add_off_diagonal(T alpha, dense::ConstDenseView<T> H, dense::DenseView<T> Y) {
  const std::int64_t rows = off_diagonal_block_.rows(), k = Y.cols;
  if (H.rows == 0 || rows == 0) return;
  off_diagonal_plan_->multiply(alpha, H, T(0), {context_.space(), rows, k, k, halo_product_.data()});
  scatter_add_product(k, Y);
}

template <class T>
void DistributedOperator<T>::add_off_diagonal_single(dense::ConstDenseView<T> H, dense::DenseView<T> Y) {
  const std::int64_t rows = off_diagonal_block_.rows(), k = Y.cols;
  if (H.rows == 0 || rows == 0) return;
  if constexpr (std::is_same_v<T, double>) {
    const Space space = context_.space();
    const dense::ConstDenseView<float> halo{space, H.rows, k, k, reinterpret_cast<const float*>(H.data)};
    spmm::multiply_single_input(context_, off_diagonal_block_.view(), halo,
                                dense::DenseView<T>{space, rows, k, k, halo_product_.data()});
    scatter_add_product(k, Y);
  }
}

template <class T>
void DistributedOperator<T>::scatter_add_product(std::int64_t k, dense::DenseView<T> Y) {
  scatter_add(context_, halo_product_.data(), k, off_diagonal_rows_.data(), off_diagonal_block_.rows(), Y);
}

template <class T>
void DistributedOperator<T>::scatter_add_product(std::int64_t k, dense::ColumnMajorView<T> Y) {
  scatter_add(context_, halo_product_.data(), k, off_diagonal_rows_.data(), off_diagonal_block_.rows(), Y.data, 1,
              Y.ld);
}

template <class T>
void DistributedOperator<T>::apply_column_major(T alpha, dense::ColumnMajorView<const T> X, T beta,
                                                dense::ColumnMajorView<T> Y) {
  const std::int64_t m = local_rows(), k = X.cols;
  // The blocks' memory as the row-major k x m blocks it also is, for the overlap check.
  const BlockExtent x{X.space, k, m, X.ld, X.data, sizeof(T)}, y{Y.space, k, m, Y.ld, Y.data, sizeof(T)};
  if (X.rows != m || Y.rows != m || Y.cols != k || X.ld < m || Y.ld < m)
    throw InputError(detail::concat("apply_column_major: X is ", X.rows, " x ", k, " (ld ", X.ld, "), Y ", Y.rows,
                                    " x ", Y.cols, " (ld ", Y.ld, "): both need this rank's ", m,
                                    " rows, the same columns and a leading dimension of at least the rows"));
  if (X.space != context_.space() || Y.space != context_.space())
    throw InputError("apply_column_major: X and Y must be in the operator's memory space");
  if (k > 0 && m > 0 && blocks_overlap(x, y)) throw InputError("apply_column_major: X and Y overlap");
  if constexpr (!std::is_same_v<T, double>) {
    throw InputError("apply_column_major: real fp64 operators only");
  } else {
    reserve(k);
    const double t0 = now();
    halo_->begin_column_major(X);
    const double t1 = now();
    spmm::multiply_column_major(context_, diagonal_block_.view(), alpha, X, beta, Y);
    const dense::ConstDenseView<T> H = halo_->end();
    const double t4 = now();
    const std::int64_t rows = off_diagonal_block_.rows();
    if (H.rows > 0 && rows > 0) {
      off_diagonal_plan_->multiply(alpha, H, T(0), {context_.space(), rows, k, k, halo_product_.data()});
      scatter_add_product(k, Y);
    }
    halo_->release();
    record_timings(t0, t1, t4);
  }
}

template <class T>
void DistributedOperator<T>::exchange_only(dense::ConstDenseView<T> X) {
  reserve(X.cols);
  halo_->begin(as_words(X));
  halo_->end();
  halo_->release();
  context_.synchronize();
}

template <class T>
void DistributedOperator<T>::multiply_only(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) {
  reserve(X.cols);
  diagonal_plan_->multiply(alpha, X, beta, Y);
  add_off_diagonal(alpha, from_words<T>(halo_->halo_block(X.cols * reals_per_value<T>)), Y);
  context_.synchronize();
}

// The single-precision copy of an fp64 operator (real or complex): the same
// products as apply_impl, with values of S = single_t<T> over the parent's
// index arrays, and the parent's halo moving rows of S in its words.
template <class T>
class RoundedOperator final : public LinearOperator<single_t<T>>, public DiagonalShiftOperator<single_t<T>> {
 public:
  using S = single_t<T>;
  explicit RoundedOperator(DistributedOperator<T>& parent) : parent_(parent) {
    diagonal_values_ = rounded(parent.diagonal_block_.values(), parent.diagonal_block_.nnz());
    off_diagonal_values_ = rounded(parent.off_diagonal_block_.values(), parent.off_diagonal_block_.nnz());
    diagonal_entries_ = rounded(parent.diagonal_entries_.data(), parent.diagonal_entries_.size());
    if (parent.shift_ != T(0))  // A's own diagonal, whatever shift the parent stands for now
      set_shifted_diagonal(context(), diagonal_values_.data(), parent.diagonal_positions_.data(),
                           diagonal_entries_.data(), S(0), parent.diagonal_block_.rows());
    diagonal_ = with_values(parent.diagonal_block_.view(), diagonal_values_);
    off_diagonal_ = with_values(parent.off_diagonal_block_.view(), off_diagonal_values_);
    const Algorithm algorithm = parent.diagonal_plan_->requested_algorithm();
    collectively(parent.comm_, [&] {
      diagonal_plan_.emplace(parent.context_, diagonal_, algorithm);
      off_diagonal_plan_.emplace(parent.context_, off_diagonal_, algorithm);
    });
  }

  MPI_Comm comm() const override { return parent_.comm(); }
  const dense::Context& context() const override { return parent_.context(); }
  std::int64_t global_rows() const override { return parent_.global_rows(); }
  std::int64_t local_rows() const override { return parent_.local_rows(); }
  std::int64_t first_row() const override { return parent_.first_row(); }
  void diagonal(S* out) const override {
    dense::copy_bytes(out, context().space(), diagonal_entries_.data(), context().space(),
                      diagonal_entries_.size() * sizeof(S));
  }
  // As the parent's (its diagonal positions, found once), on these values; the parent's own shift stays.
  bool set_diagonal_shift(S shift) override {
    if (!parent_.diagonal_positions_found()) return false;
    if (shift != shift_)
      set_shifted_diagonal(context(), diagonal_values_.data(), parent_.diagonal_positions_.data(),
                           diagonal_entries_.data(), shift, parent_.diagonal_block_.rows());
    shift_ = shift;
    return true;
  }

 protected:
  void apply_impl(S alpha, dense::ConstDenseView<S> X, S beta, dense::DenseView<S> Y) override {
    DistributedOperator<T>& p = parent_;
    using R = real_t<S>;  // a row of k values of S is k * reals_per_value<S> values of R in the halo's words
    const std::int64_t k = X.cols, rows = off_diagonal_.rows, parts = k * reals_per_value<S>;
    p.reserve_halo(HaloExchange<double>::words<R>(parts));
    if (halo_product_.rows() != rows || halo_product_.cols() < k)
      halo_product_ = dense::DenseBlock<S>(context().space(), rows, k);
    const double t0 = p.now();
    p.halo_->begin(dense::ConstDenseView<R>{X.space, X.rows, parts, X.ld * reals_per_value<S>,
                                            reinterpret_cast<const R*>(X.data)});
    const double t1 = p.now();
    diagonal_plan_->multiply(alpha, X, beta, Y);  // overlaps the messages
    const dense::ConstDenseView<double> H = p.halo_->end();
    const double t4 = p.now();
    if (H.rows > 0 && rows > 0) {  // Y += alpha A_offd H
      const std::int64_t ld = H.ld * std::int64_t(sizeof(double) / sizeof(S));
      const dense::ConstDenseView<S> halo{H.space, H.rows, k, ld, reinterpret_cast<const S*>(H.data)};
      off_diagonal_plan_->multiply(alpha, halo, S(0), {H.space, rows, k, k, halo_product_.data()});
      scatter_add(context(), halo_product_.data(), k, p.off_diagonal_rows_.data(), rows, Y);
    }
    p.halo_->release();
    p.record_timings(t0, t1, t4);
  }

 private:
  // The values rounded where they are (a column of `count`); complex values as their parts.
  dense::Buffer<S> rounded(const T* values, std::size_t count) const {
    dense::Buffer<S> out(context().space(), count);
    const auto n = static_cast<std::int64_t>(count) * reals_per_value<T>;
    convert_block<double, float>(context(), {context().space(), n, 1, 1, reinterpret_cast<const double*>(values)},
                                 {context().space(), n, 1, 1, reinterpret_cast<float*>(out.data())});
    return out;
  }
  static spmm::CsrView<S> with_values(const spmm::CsrView<T>& A, const dense::Buffer<S>& values) {
    return {A.space, A.rows, A.cols, A.nnz, A.row_offsets, A.col_indices, values.data()};
  }

  DistributedOperator<T>& parent_;
  S shift_ = 0;
  dense::Buffer<S> diagonal_values_, off_diagonal_values_, diagonal_entries_;
  spmm::CsrView<S> diagonal_, off_diagonal_;  // the parent's index arrays, these values
  std::optional<spmm::Plan<S>> diagonal_plan_, off_diagonal_plan_;
  dense::DenseBlock<S> halo_product_;  // off-diagonal block x halo
};

template <class T>
std::unique_ptr<LinearOperator<single_t<T>>> DistributedOperator<T>::rounded_to_single() {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>)
    return std::make_unique<RoundedOperator<T>>(*this);
  else
    return nullptr;
}

#define BLOCKEIGS_OPERATOR(T) template class DistributedOperator<T>;
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_OPERATOR)
#undef BLOCKEIGS_OPERATOR

}  // namespace blockeigs::solver
