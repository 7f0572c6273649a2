// Halo rows through NCCL, device to device: one ncclGroupStart/End per
// exchange, a ncclRecv from each sender and a ncclSend to each receiver, on a
// side stream that waits for the pack and that the context's stream waits for
// before the halo multiply. No host thread waits on the device: the diagonal
// multiply queued between begin() and end() runs while the rows move, and
// NCCL picks the path (NVLink, PCIe, InfiniBand with GPUDirect RDMA, sockets).
//
// The NCCL communicator is made once, from the MPI communicator (unique id
// from rank 0 by MPI_Bcast, ncclCommInitRank), and destroyed with the exchange.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

// Whether this build has NCCL (the CMake option BLOCKEIGS_NCCL).
bool nccl_compiled();

template <class T>
class NcclHalo final : public HaloExchange<T> {
 public:
  // Collective. Null on every rank when the context is not a GPU, NCCL is not
  // compiled, or the communicator cannot be made on some rank; `why` then
  // says which (the lowest failing rank's message), for the caller's note.
  static std::unique_ptr<NcclHalo> create(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                          std::string& why);
  ~NcclHalo() override;

  HaloTransport transport() const override { return HaloTransport::nccl; }
  std::string name() const override { return "device to device (NCCL)"; }
  // Queues the context stream's wait for the received rows; returns at once.
  dense::ConstDenseView<T> end() override;

 protected:
  // Queues the pack, then the group of sends and receives behind it on the
  // side stream.
  void start(const typename HaloExchange<T>::Source& X) override;

 private:
  NcclHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan);
  // Host clock after `event` (a cudaEvent_t) completed, while profiling.
  double time_after(void* event) const;

  std::int64_t words_ = 0;
  void* nccl_ = nullptr;      // ncclComm_t
  void* stream_ = nullptr;    // cudaStream_t, high priority: NCCL's kernels start ahead of the multiply's blocks
  void* packed_ = nullptr;    // cudaEvent_t on the context's stream, after the pack
  void* received_ = nullptr;  // cudaEvent_t on stream_, after the group
};

}  // namespace blockeigs::solver
