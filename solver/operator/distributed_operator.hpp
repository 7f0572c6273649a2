// The distributed SpMM operator: Y = alpha * A * X + beta * Y for a matrix
// distributed by contiguous row blocks, one GPU (or the CPU backend) per rank.
//
// Each apply: pack the rows neighbours need (a device kernel on the GPU),
// post non-blocking receives and sends, multiply the diagonal block, wait,
// multiply the off-diagonal block with beta = 1. Between GPUs of one node the
// halo goes device to device through CUDA IPC (solver/operator/peer_halo.hpp); otherwise
// it goes through MPI, staged through the host unless MPI is CUDA-aware.
// Buffers are kept across calls.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/enums.hpp"
#include "io/csr_rows.hpp"
#include "solver/operator/halo_plan.hpp"
#include "solver/operator/linear_operator.hpp"
#include "solver/operator/peer_halo.hpp"
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
  double pack = 0;        // gather of send rows (+ device-to-host copy when staged)
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
class DistributedOperator final : public LinearOperator<T> {
 public:
  // `rows` are this rank's rows (global columns), `partition` every rank's
  // range. Collective. The context must outlive the operator.
  DistributedOperator(MPI_Comm comm, const spmm::Context& context, const io::CsrRows& rows,
                      const RowPartition& partition, Algorithm algorithm = Algorithm::automatic);
  ~DistributedOperator() override;

  MPI_Comm comm() const override { return comm_; }
  const spmm::Context& context() const override { return context_; }
  std::int64_t global_rows() const override { return partition_.global_rows(); }
  std::int64_t local_rows() const override { return partition_.rows(rank_); }
  std::int64_t first_row() const override { return partition_.begin(rank_); }

  void apply(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) override;
  // Y = A X with X in fp32 (fp64 operators): the local products by
  // spmm::multiply_single_input, and the halo moved in fp32, half the bytes
  // (an even width's rows travel as width / 2 doubles of the same buffers;
  // an odd width is widened first, LinearOperator's way).
  void apply_single(spmm::ConstDenseView<float> X, spmm::DenseView<T> Y) override;
  bool applies_single() const override { return std::is_same_v<T, double>; }
  void diagonal(T* out) const override;

  // The two halves of apply, for measuring overlap: only the exchange (pack,
  // send, receive, unpack), and only the two multiplies (with the halo block
  // as it stands).
  void exchange_only(spmm::ConstDenseView<T> X);
  void multiply_only(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y);

  const RowPartition& partition() const { return partition_; }
  const HaloPlan& halo_plan() const { return halo_; }
  std::int64_t local_nnz() const { return diagonal_nnz_ + off_diagonal_nnz_; }
  std::int64_t diagonal_nnz() const { return diagonal_nnz_; }
  std::int64_t off_diagonal_nnz() const { return off_diagonal_nnz_; }
  Algorithm algorithm_for(std::int64_t n) const { return diagonal_plan_->algorithm_for(n); }
  bool device_pointers_to_mpi() const { return cuda_aware_ && !peer_; }
  bool halo_through_peer_copies() const { return peer_ != nullptr; }
  // How halo rows travel, for summaries: "CUDA IPC", "CUDA-aware MPI", ...
  std::string halo_transport() const;

  void set_profiling(bool on) { profiling_ = on; }
  const ApplyTimings& timings() const { return timings_; }
  void reset_timings() { timings_ = {}; }

 private:
  void ensure_buffers(std::int64_t k);
  // Halo through MPI with host copies on both ends.
  bool staged() const { return context_.space() == Space::device && !cuda_aware_ && !peer_; }
  // The exchange in three steps, so that the diagonal multiply can be queued
  // between packing and sending: receives posted first, the packed rows (and
  // their host copy) queued on the stream, then the sends once those are done.
  void post_receives(std::int64_t k, std::vector<MPI_Request>& requests);
  // X's rows packed as U values (T, or fp32 for apply_single).
  template <class U>
  void queue_pack(spmm::ConstDenseView<U> X);
  // Blocks until the packed rows (and their host copy) are ready to send;
  // returns at once when this rank sends nothing.
  void wait_for_pack();
  void post_sends(std::int64_t k, std::vector<MPI_Request>& requests);
  void finish_exchange(std::vector<MPI_Request>& requests);
  // One multiply: the halo exchange of X (in U: T, or fp32 for
  // apply_single) around multiply_diagonal(), which needs no remote rows,
  // then add_halo() once the halo block is in place. Through MPI, or with
  // peer copies (tokens in the messages; the receiver pulls the rows from
  // the sender's mapped buffer on a side stream).
  template <class U, class Diagonal, class Halo>
  void exchange_around(spmm::ConstDenseView<U> X, Diagonal multiply_diagonal, Halo add_halo);
  void pull_peer_rows(std::int64_t k);
  // Y(rows with halo columns) += alpha * off-diagonal block * halo block
  // (single: the halo block's bytes hold k fp32 columns a row).
  void add_halo_product(T alpha, std::int64_t k, spmm::DenseView<T> Y, bool single = false);
  double now() const;

  MPI_Comm comm_;
  int rank_ = 0;
  const spmm::Context& context_;
  RowPartition partition_;
  HaloPlan halo_;
  bool cuda_aware_ = false;

  spmm::CsrMatrix<T> diagonal_block_;
  spmm::CsrMatrix<T> off_diagonal_block_;
  std::int64_t diagonal_nnz_ = 0;
  std::int64_t off_diagonal_nnz_ = 0;
  std::optional<spmm::Plan<T>> diagonal_plan_;
  std::optional<spmm::Plan<T>> off_diagonal_plan_;
  spmm::Buffer<T> diagonal_entries_;
  spmm::Buffer<std::int32_t> send_rows_;  // in the context's space
  spmm::Buffer<std::int32_t> off_diagonal_rows_;  // local rows with halo columns, context space

  // Per-width buffers, grown on demand and kept.
  std::int64_t width_ = -1;
  spmm::Buffer<T> send_buffer_;       // packed rows, context space
  spmm::PinnedBuffer<T> send_staging_;  // host copy when MPI is not CUDA-aware
  spmm::PinnedBuffer<T> recv_staging_;  // host
  spmm::DenseBlock<T> halo_block_;    // received rows, context space
  spmm::DenseBlock<T> halo_product_;  // off-diagonal block x halo, one row per off_diagonal_rows_

  std::unique_ptr<spmm::Event> packed_;  // marks the packed rows ready to send
  std::unique_ptr<PeerHalo> peer_;       // set when halos go device to device
  bool profiling_ = false;
  ApplyTimings timings_;
};

}  // namespace blockeigs::solver
