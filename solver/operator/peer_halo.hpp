// Halo exchange between GPUs of one node through CUDA IPC, bypassing MPI's
// data path (which, when MPI is not CUDA-aware, stages every halo through
// host memory twice).
//
// Each rank maps its neighbours' packed send buffers into its own address
// space once per buffer (re)allocation. In an apply, MPI carries only empty
// tokens: a sender announces "packed" once its pack kernel is done; the
// receiver then copies its rows device to device on a side stream, which the
// main stream waits for before the halo multiply; and once those copies are
// done it answers "consumed", so the sender may overwrite its buffer in the
// next apply. No host thread ever waits for the diagonal multiply.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "solver/operator/halo_plan.hpp"
#include "spmm/context.hpp"

namespace blockeigs::solver {

class PeerHalo {
 public:
  // Collective. Returns null on every rank unless the context is a GPU, every
  // rank's neighbours are on its node, and BLOCKEIGS_HALO_PEER is not 0 on any
  // rank; whether mapping works is only known at publish().
  static std::unique_ptr<PeerHalo> create(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan);
  ~PeerHalo();
  PeerHalo(const PeerHalo&) = delete;
  PeerHalo& operator=(const PeerHalo&) = delete;

  // Collective: hands this rank's (new) device send buffer to the ranks that
  // receive from it and maps theirs. False on every rank if mapping failed on
  // any rank (the caller then falls back to MPI).
  bool publish(const void* send_buffer);

  // The steps of one exchange of rows of `row_bytes` bytes, in this order:
  void post_packed_receives();                 // tokens from the ranks this rank receives from
  void announce_packed();                      // after the pack is complete on the device
  void queue_copies(void* halo_block, std::size_t row_bytes);  // waits for tokens, queues copies
  // After the copies were queued: waits (on the host) for them, tells the
  // senders, and waits for this rank's receivers to say the same.
  void finish();
  // Makes the context's stream wait for the queued copies.
  void stream_waits_for_copies();
  // Marks the point in the context's stream after which the halo block may be
  // overwritten again (after the halo multiply has been queued).
  void halo_block_released();

 private:
  PeerHalo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan);
  void close_mapped();

  MPI_Comm comm_;
  const spmm::Context& context_;
  const HaloPlan& plan_;
  std::vector<std::int64_t> peer_first_row_;  // per receive neighbour: our rows' offset in its send buffer
  std::vector<void*> mapped_;                  // per receive neighbour: its send buffer, mapped here
  std::vector<MPI_Request> packed_tokens_;  // "packed" from the ranks this rank receives from
  std::vector<MPI_Request> sent_tokens_;    // tokens sent, and "consumed" from this rank's receivers
  void* copy_stream_ = nullptr;    // cudaStream_t
  void* copies_done_ = nullptr;    // cudaEvent_t on the copy stream
  void* block_released_ = nullptr; // cudaEvent_t on the context's stream
  bool released_recorded_ = false;
};

}  // namespace blockeigs::solver
