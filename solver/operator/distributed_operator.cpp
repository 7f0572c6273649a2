#include "solver/operator/distributed_operator.hpp"

#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "solver/operator/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/operator/local_blocks.hpp"
#include "spmm/single_input_spmm.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "solver/operator/halo/cuda/halo_pack.hpp"
#endif

namespace blockeigs::solver {

template <class T>
DistributedOperator<T>::DistributedOperator(MPI_Comm comm, const spmm::Context& context,
                                            const io::CsrRows& rows, const RowPartition& partition,
                                            Algorithm algorithm, HaloTransport transport)
    : comm_(comm), context_(context), partition_(partition) {
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  LocalBlocks<T> blocks = collectively(comm_, [&] {
    if (rows.first_row != partition_.begin(rank_) || rows.local_rows() != partition_.rows(rank_))
      throw Error("DistributedOperator: the rows given do not match the partition");
    return split_local_rows<T>(rows);
  });
  halo_plan_ = build_halo_plan(comm_, partition_, blocks.halo_columns);

  const Space space = context_.space();
  diagonal_nnz_ = blocks.diagonal.nnz();
  off_diagonal_nnz_ = blocks.off_diagonal.nnz();
  diagonal_block_ = spmm::CsrMatrix<T>(space, blocks.diagonal);
  off_diagonal_block_ = spmm::CsrMatrix<T>(space, blocks.off_diagonal);
  diagonal_entries_ = spmm::Buffer<T>(space, blocks.diagonal_entries);
  halo_ = make_halo_exchange<T>(comm_, context_, halo_plan_, transport);
  off_diagonal_rows_ = spmm::Buffer<std::int32_t>(space, blocks.off_diagonal_rows);
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
  spmm::copy_bytes(out, context_.space(), diagonal_entries_.data(), context_.space(),
                   diagonal_entries_.size() * sizeof(T));
}

template <class T>
void DistributedOperator<T>::reserve(std::int64_t k) {
  if (k <= width_) return;
  if (!halo_->reserve(k)) {
    // CUDA IPC mapping refused on some rank: NCCL where built, else MPI.
    const bool staged = context_.space() == Space::device && !mpi_is_cuda_aware();
    halo_ = make_halo_exchange<T>(comm_, context_, halo_plan_,
                                  nccl_compiled() && context_.space() == Space::device ? HaloTransport::nccl
                                  : staged                                            ? HaloTransport::staged_mpi
                                                                                      : HaloTransport::mpi);
    halo_->set_profiling(profiling_);
    halo_->reserve(k);
  }
  halo_product_ = spmm::DenseBlock<T>(context_.space(), off_diagonal_block_.rows(), k);
  width_ = k;
}

template <class T>
void DistributedOperator<T>::apply_impl(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) {
  reserve(X.cols);
  const double t0 = now();
  halo_->begin(X);                               // pack; post receives, then sends
  const double t1 = now();
  diagonal_plan_->multiply(alpha, X, beta, Y);   // needs no remote rows: overlaps the messages
  const spmm::ConstDenseView<T> H = halo_->end();  // wait for the halo rows
  const double t4 = now();
  add_off_diagonal(alpha, H, Y);                 // Y += alpha A_offd H
  halo_->release();
  record_timings(t0, t1, t4);
}

template <class T>
void DistributedOperator<T>::apply_single_impl(spmm::ConstDenseView<float> X, spmm::DenseView<T> Y) {
  const std::int64_t k = X.cols;
  // fp64 only; the halo buffers move whole doubles, so an odd width widens.
  if (!std::is_same_v<T, double> || k % 2 != 0) {
    spmm::DenseBlock<T> widened(X.space, X.rows, k);
    convert_block(context_, X, widened.view());
    return apply_impl(T(1), spmm::ConstDenseView<T>(widened.view()), T(0), Y);
  }
  if constexpr (std::is_same_v<T, double>) {
    reserve(k);
    const double t0 = now();
    halo_->begin(X);
    const double t1 = now();
    spmm::multiply_single_input(context_, diagonal_block_.view(), X, Y);
    const spmm::ConstDenseView<T> H = halo_->end();
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
void DistributedOperator<T>::add_off_diagonal(T alpha, spmm::ConstDenseView<T> H, spmm::DenseView<T> Y) {
  const std::int64_t rows = off_diagonal_block_.rows(), k = Y.cols;
  if (H.rows == 0 || rows == 0) return;
  off_diagonal_plan_->multiply(alpha, H, T(0), {context_.space(), rows, k, k, halo_product_.data()});
  scatter_add_product(k, Y);
}

template <class T>
void DistributedOperator<T>::add_off_diagonal_single(spmm::ConstDenseView<T> H, spmm::DenseView<T> Y) {
  const std::int64_t rows = off_diagonal_block_.rows(), k = Y.cols;
  if (H.rows == 0 || rows == 0) return;
  if constexpr (std::is_same_v<T, double>) {
    const Space space = context_.space();
    const spmm::ConstDenseView<float> halo{space, H.rows, k, k, reinterpret_cast<const float*>(H.data)};
    spmm::multiply_single_input(context_, off_diagonal_block_.view(), halo,
                                spmm::DenseView<T>{space, rows, k, k, halo_product_.data()});
    scatter_add_product(k, Y);
  }
}

template <class T>
void DistributedOperator<T>::scatter_add_product(std::int64_t k, spmm::DenseView<T> Y) {
  const std::int64_t rows = off_diagonal_block_.rows();
  const T* product = halo_product_.data();
  if (context_.space() == Space::host) {
    const std::int32_t* target = off_diagonal_rows_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      T* y = Y.data + std::int64_t(target[r]) * Y.ld;
      const T* p = product + r * k;
      for (std::int64_t j = 0; j < k; ++j) y[j] += p[j];
    }
  } else {
#ifdef BLOCKEIGS_HAVE_CUDA
    cuda::scatter_add_rows(product, k, off_diagonal_rows_.data(), rows, Y.data, Y.ld, context_.stream());
#endif
  }
}

template <class T>
void DistributedOperator<T>::exchange_only(spmm::ConstDenseView<T> X) {
  reserve(X.cols);
  halo_->begin(X);
  halo_->end();
  halo_->release();
  context_.synchronize();
}

template <class T>
void DistributedOperator<T>::multiply_only(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) {
  reserve(X.cols);
  diagonal_plan_->multiply(alpha, X, beta, Y);
  add_off_diagonal(alpha, halo_->halo_block(X.cols), Y);
  context_.synchronize();
}

template class DistributedOperator<float>;
template class DistributedOperator<double>;

}  // namespace blockeigs::solver
