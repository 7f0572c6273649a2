// The distributed SpMM operator: Y = alpha * A * X + beta * Y for a matrix
// distributed by contiguous row blocks, one GPU (or the CPU backend) per rank.
//
// Each apply: begin the halo exchange (pack the rows neighbours need, post
// receives and sends), multiply the diagonal block while the rows move, end
// the exchange, add the off-diagonal block times the halo block. The exchange
// is one object per transport (solver/operator/halo/halo_exchange.hpp), chosen
// when the operator is built (solver/operator/halo/halo_transport.hpp): CUDA IPC
// between GPUs of one node, otherwise NCCL where built, otherwise MPI, staged
// through the host unless MPI is CUDA-aware. Buffers are kept across calls.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/csr_rows.hpp"
#include "core/enums.hpp"
#include "core/scalar.hpp"
#include "solver/operator/halo/halo_exchange.hpp"
#include "solver/operator/halo/halo_plan.hpp"
#include "solver/operator/halo/halo_transport.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "solver/operator/row_partition.hpp"
#include "spmm/plan.hpp"

namespace blockeigs::solver {

// Seconds spent in each phase of apply, summed over calls. While profiling
// is on, each boundary synchronises the device and the phases are exact.
// Otherwise they are host times: pack and unpack are what queuing them cost,
// local_spmm includes waiting for the pack (and the device work queued before
// it), and wait is the time blocked on messages once this rank's rows were
// sent, part of which the diagonal multiply overlaps.
struct ApplyTimings {
  int calls = 0;
  double pack = 0;        // gather of send rows (+ device-to-host copy when staged; + sends on the host)
  double local_spmm = 0;  // diagonal block
  double wait = 0;        // sends and MPI_Waitall, after the local SpMM was queued and the pack done
  double unpack = 0;      // host-to-device copy of received rows when staged
  double halo_spmm = 0;   // off-diagonal block
  double total = 0;

  // One apply, from the clock readings at the boundaries of its phases.
  void add(const double (&t)[6]) {
    calls += 1;
    pack += t[1] - t[0];
    local_spmm += t[2] - t[1];
    wait += t[3] - t[2];
    unpack += t[4] - t[3];
    halo_spmm += t[5] - t[4];
    total += t[5] - t[0];
  }
};

template <class T>
struct LocalBlocks;
template <class T>
class RoundedOperator;  // DistributedOperator<T>::rounded_to_single's single-precision copy

template <class T>
class DistributedOperator final : public SingleInputOperator<T>, public DiagonalShiftOperator<T> {
 public:
  // `rows` are this rank's rows (global columns), `partition` every rank's
  // range; `halo` how halo rows travel (make_halo_exchange). Collective. The
  // context must outlive the operator.
  DistributedOperator(MPI_Comm comm, const dense::Context& context, const RowsFor<T>& rows,
                      const RowPartition& partition, Algorithm algorithm = Algorithm::automatic,
                      const HaloOptions& halo = {});
  // The same from this rank's rows [a.begin, a.end) of a replicated matrix in
  // device memory (a device context), split where they are: no upload, only
  // the halo columns' ids on the host. `partition` must give this rank those rows.
  // Complex values give complex double operators (complex single ones are rounded from those).
  DistributedOperator(MPI_Comm comm, const dense::Context& context, const ReplicatedCsr& a,
                      const RowPartition& partition, Algorithm algorithm = Algorithm::automatic,
                      const HaloOptions& halo = {});
  ~DistributedOperator() override;

  MPI_Comm comm() const override { return comm_; }
  const dense::Context& context() const override { return context_; }
  std::int64_t global_rows() const override { return partition_.global_rows(); }
  std::int64_t local_rows() const override { return partition_.rows(rank_); }
  std::int64_t first_row() const override { return partition_.begin(rank_); }
  void diagonal(T* out) const override;
  // DiagonalShiftOperator: the diagonal block's stored diagonal entries set to
  // A(i, i) + shift (from the entries as built; the fp32 copy has a shift of
  // its own). The first call finds each row's diagonal entry and agrees over
  // the ranks whether every row has one.
  bool set_diagonal_shift(T shift) override;

  // The two halves of apply, for measuring overlap: only the exchange (pack,
  // send, receive, unpack), and only the two multiplies (with the halo block
  // as it stands).
  void exchange_only(dense::ConstDenseView<T> X);
  void multiply_only(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y);

  // Y = alpha A X + beta Y for column-major X and Y of this rank's rows
  // (PETSc's dense blocks), without row-major copies: X's halo rows gathered
  // from its columns, the diagonal block by spmm::multiply_column_major, the
  // off-diagonal product added into Y's columns. The checks of apply(); fp64
  // operators only. Collective.
  void apply_column_major(T alpha, dense::ColumnMajorView<const T> X, T beta, dense::ColumnMajorView<T> Y);

  const RowPartition& partition() const { return partition_; }
  const HaloPlan& halo_plan() const { return halo_plan_; }
  // Host seconds in the halo's phases (pack, wait, unpack) over the applies
  // timed; 0 where this rank exchanges nothing (its phases then hold only
  // waits for device work queued before them).
  double halo_seconds() const {
    if (halo_plan_.recv_ranks.empty() && halo_plan_.send_ranks.empty()) return 0;
    return timings_.pack + timings_.wait + timings_.unpack;
  }
  std::int64_t local_nnz() const { return diagonal_nnz_ + off_diagonal_nnz_; }
  std::int64_t diagonal_nnz() const { return diagonal_nnz_; }
  std::int64_t off_diagonal_nnz() const { return off_diagonal_nnz_; }
  std::int64_t off_diagonal_rows() const { return off_diagonal_block_.rows(); }  // local rows with halo columns
  Algorithm algorithm_for(std::int64_t n) const { return diagonal_plan_->algorithm_for(n); }
  HaloTransport transport() const { return halo_->transport(); }
  bool device_pointers_to_mpi() const { return context_.space() == Space::device && transport() == HaloTransport::mpi; }
  bool halo_through_peer_copies() const { return transport() == HaloTransport::peer; }
  // How halo rows travel, for summaries, and why: "device to device (CUDA IPC)
  // (auto: every neighbour on this node)", with the reason it stands in for
  // NCCL where it does.
  std::string halo_transport() const {
    const std::string& note = halo_->fallback_note();
    const std::string why = halo_->reason() + (note.empty() || halo_->reason().empty() ? "" : "; ") + note;
    return why.empty() ? halo_->name() : halo_->name() + " (" + why + ")";
  }

  void set_profiling(bool on);
  const ApplyTimings& timings() const { return timings_; }
  void reset_timings() { timings_ = {}; }

  // The matrix in single precision (SingleInputOperator::rounded_to_single):
  // it shares this operator's index arrays, halo plan and halo exchange (its
  // rows travel in the fp64 buffers, their time counted in timings() and
  // halo_seconds()), and holds its own values (nnz + local rows) and SpMM
  // plans. Null for a single-precision operator. Collective.
  std::unique_ptr<LinearOperator<single_t<T>>> rounded_to_single() override;

 protected:
  void apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) override;
  // The local products by spmm::multiply_single_input and the halo moved in
  // fp32, half the bytes (an even width's rows travel as width / 2 doubles);
  // an odd width, or an fp32 operator, widens X first.
  void apply_single_impl(dense::ConstDenseView<float> X, dense::DenseView<T> Y) override;

 private:
  friend class RoundedOperator<T>;

  // Whether every row of every rank stores its diagonal entry, its positions found at the first call. Collective.
  bool diagonal_positions_found();
  // Room for blocks of k columns (collective when it grows).
  void reserve(std::int64_t k);
  // Room in the halo for rows of `words` Word values (collective when it grows).
  // A transport that cannot serve the new buffers (CUDA IPC mapping refused
  // on some rank) gives way to MPI on every rank.
  void reserve_halo(std::int64_t words);
  // Y(rows with halo columns) += alpha * off-diagonal block * H.
  void add_off_diagonal(T alpha, dense::ConstDenseView<T> H, dense::DenseView<T> Y);
  // The same with alpha = 1 for the halo block of an fp32 exchange, whose
  // rows hold Y.cols fp32 values.
  void add_off_diagonal_single(dense::ConstDenseView<T> H, dense::DenseView<T> Y);
  // Y(off_diagonal_rows_) += the rows of halo_product_.
  void scatter_add_product(std::int64_t k, dense::DenseView<T> Y);
  void scatter_add_product(std::int64_t k, dense::ColumnMajorView<T> Y);
  void record_timings(double t0, double t1, double t4);
  // The operator from this rank's split rows (the constructors' common part). Collective.
  void build(LocalBlocks<T>&& blocks, Algorithm algorithm);
  double now() const;

  MPI_Comm comm_;
  int rank_ = 0;
  const dense::Context& context_;
  RowPartition partition_;
  HaloPlan halo_plan_;

  spmm::CsrMatrix<T> diagonal_block_;
  spmm::CsrMatrix<T> off_diagonal_block_;
  std::int64_t diagonal_nnz_ = 0;
  std::int64_t off_diagonal_nnz_ = 0;
  std::optional<spmm::Plan<T>> diagonal_plan_;
  std::optional<spmm::Plan<T>> off_diagonal_plan_;
  dense::Buffer<T> diagonal_entries_;
  dense::Buffer<std::int32_t> off_diagonal_rows_;  // local rows with halo columns, context space
  // Where each local row's diagonal entry is in diagonal_block_'s values (set_diagonal_shift), and
  // whether every row of every rank has one; found at the first shift.
  dense::Buffer<std::int64_t> diagonal_positions_;
  std::optional<bool> shiftable_;
  T shift_ = 0;

  // Complex rows travel as twice as many real words: the halo moves bytes.
  using Word = real_t<T>;
  HaloOptions halo_options_;
  std::unique_ptr<HaloExchange<Word>> halo_;  // reads halo_plan_
  std::int64_t width_ = -1;                   // columns the buffers hold
  dense::DenseBlock<T> halo_product_;         // off-diagonal block x halo, one row per off_diagonal_rows_

  bool profiling_ = false;
  ApplyTimings timings_;
};

}  // namespace blockeigs::solver
