// Halo rows through MPI staged through pinned host memory, for device blocks
// where MPI is not CUDA-aware (and NCCL is not taken), pipelined: each
// neighbour's message travels in pieces of at most `piece_bytes` (1 MiB by
// default, execution.halo.piece_bytes; never more than mpi_chunk_limit()). begin()
// queues the copy of each packed piece to the host on a copy stream behind
// the pack, so that the context's stream goes straight on to the diagonal
// multiply; end() sends each piece as soon as its copy is done and queues the
// copy of each received piece to the device, on a second copy stream, as soon
// as it arrives. The device-to-host copy of one piece, the wire and the
// host-to-device copy of another thus overlap each other and the multiply;
// the context's stream waits for the last copy before the halo multiply.
// On host blocks the copies are plain memcpy and nothing is pipelined.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend_lists.hpp"
#include "core/enums.hpp"
#include "solver/operator/halo/halo_exchange.hpp"

namespace blockeigs::solver {

// StagedMpiHalo's device half, in staged_mpi_halo_cuda.cpp (or its stub,
// which throws "not compiled with CUDA"): the copy streams and events made,
// the previous exchange's copies in waited for, the pack's copies to the host
// queued, and end()'s loop, which sends each piece whose copy to the host is
// done and queues the copy to the device of each piece that has arrived,
// until all have. Each member as OP(signature, name) (core/backend_lists.hpp),
// its name qualified by C (empty in the class, StagedMpiHalo<float>:: where it
// is instantiated).
#define BLOCKEIGS_STAGED_MPI_HALO_DEVICE_HALF(C, OP)                   \
  OP(void C create_copy_streams(), "StagedMpiHalo")                    \
  OP(void C wait_for_copies_in(), "StagedMpiHalo::wait_for_copies_in") \
  OP(void C start_on_device(), "StagedMpiHalo::start_on_device")       \
  OP(void C pipeline_on_device(), "StagedMpiHalo::pipeline_on_device")

template <class T>
class StagedMpiHalo final : public HaloExchange<T> {
 public:
  // Every rank passes the same piece_bytes: both ends of a message cut it with it.
  StagedMpiHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                std::int64_t piece_bytes = default_halo_piece_bytes);
  ~StagedMpiHalo() override;

  HaloTransport transport() const override;
  std::string name() const override { return "MPI, staged through host"; }
  dense::ConstDenseView<T> end() override;

 protected:
  void start(const typename HaloExchange<T>::Source& X) override;
  bool on_reserve(std::int64_t cols, const T* send_buffer) override;

 private:
  struct Piece {
    std::int64_t offset, bytes;  // into the staging buffer
    int rank;
  };
  // The plan's messages (by rank and row offsets) of words_ T values a row, in pieces.
  std::vector<Piece> cut(const std::vector<int>& ranks, const std::vector<std::int64_t>& offsets) const;
  // The device half (BLOCKEIGS_STAGED_MPI_HALO_DEVICE_HALF, and the copy streams' release).
  BLOCKEIGS_STAGED_MPI_HALO_DEVICE_HALF(, BLOCKEIGS_BACKEND_DECLARE)
  void release_copy_streams() noexcept;

  dense::PinnedBuffer<T> send_staging_;  // host copy of the packed rows
  dense::PinnedBuffer<T> recv_staging_;  // received rows before their copy to the halo block
  std::vector<Piece> send_pieces_, recv_pieces_;
  std::vector<MPI_Request> send_requests_, recv_requests_;
  std::int64_t words_ = 0;
  std::int64_t piece_bytes_ = 0;
  // Device only (CUDA handles as void*): the copy streams, an event per send
  // piece (its copy to the host done), the pack, and the last copy in.
  void* to_host_ = nullptr;
  void* to_device_ = nullptr;
  std::vector<void*> staged_;
  void* packed_ = nullptr;
  void* copied_in_ = nullptr;
  bool copies_in_queued_ = false;  // copied_in_ recorded: the next start waits for it
};

}  // namespace blockeigs::solver
