// Halo exchange between GPUs of one node through CUDA IPC, bypassing MPI's
// data path (which, when MPI is not CUDA-aware, stages every halo through
// host memory twice).
//
// Each rank maps its neighbours' packed send buffers into its own address
// space once per buffer (re)allocation (reserve). In an exchange, MPI carries
// only empty tokens: a sender announces "packed" once its pack kernel is done
// (end); the receiver then copies its rows device to device on a side stream,
// which the main stream waits for before the halo multiply; and once those
// copies are done (release) it answers "consumed", so the sender may
// overwrite its buffer in the next exchange. No host thread ever waits for
// the diagonal multiply.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

template <class T>
class PeerHalo final : public HaloExchange<T> {
 public:
  // Collective. Returns null on every rank unless the context is a GPU, every
  // rank's neighbours are on its node, and every rank passes `allowed`
  // (HaloOptions::peer); whether mapping works is only known at reserve().
  static std::unique_ptr<PeerHalo> create(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                          bool allowed);
  ~PeerHalo() override;

  HaloTransport transport() const override { return HaloTransport::peer; }
  std::string name() const override { return "device to device (CUDA IPC)"; }
  dense::ConstDenseView<T> end() override;
  // Marks the halo block free after the work queued so far, waits (on the
  // host) for this rank's copies, tells the senders, and waits for this
  // rank's receivers to say the same.
  void release() override;

 protected:
  void start(const typename HaloExchange<T>::Source& X) override;
  // Hands the new send buffer to the ranks that receive from this one and
  // maps theirs: false on every rank if mapping failed on any.
  bool on_reserve(std::int64_t cols, const T* send_buffer) override;

 private:
  PeerHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan);
  void close_mapped();

  std::int64_t words_ = 0;
  std::vector<std::int64_t> peer_first_row_;  // per receive neighbour: our rows' offset in its send buffer
  std::vector<void*> mapped_;                 // per receive neighbour: its send buffer, mapped here
  std::vector<MPI_Request> packed_tokens_;    // "packed" from the ranks this rank receives from
  std::vector<MPI_Request> sent_tokens_;      // tokens sent, and "consumed" from this rank's receivers
  void* copy_stream_ = nullptr;               // cudaStream_t
  void* copies_done_ = nullptr;               // cudaEvent_t on the copy stream
  void* block_released_ = nullptr;            // cudaEvent_t on the context's stream
  bool released_recorded_ = false;
};

}  // namespace blockeigs::solver
