// NcclHalo in a build with NCCL (nccl_halo_stub.cpp without it).
#include "solver/operator/halo/nccl_halo.hpp"

#include <nccl.h>

#include <exception>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {

bool nccl_compiled() { return true; }

namespace {

#define BLOCKEIGS_NCCL_CHECK(call)                                                                                \
  do {                                                                                                            \
    const ncclResult_t blockeigs_nccl_status_ = (call);                                                           \
    if (blockeigs_nccl_status_ != ncclSuccess)                                                                    \
      throw LibraryError(blockeigs::detail::concat("NCCL error in ", #call, ": ",                                 \
                                                   ncclGetErrorString(blockeigs_nccl_status_), " (",              \
                                                   ncclGetLastError(nullptr), ") at ", __FILE__, ":", __LINE__)); \
  } while (0)

ncclComm_t as_comm(void* p) { return static_cast<ncclComm_t>(p); }
cudaStream_t as_stream(void* p) { return static_cast<cudaStream_t>(p); }
cudaEvent_t as_event(void* p) { return static_cast<cudaEvent_t>(p); }

}  // namespace

template <class T>
std::unique_ptr<NcclHalo<T>> NcclHalo<T>::create(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                                 std::string& why) {
  if (context.space() != Space::device) {
    why = "NCCL needs device blocks";
    return nullptr;
  }
  if (ranks_share_a_device(comm, context)) {
    why = "ranks share a GPU (NCCL needs one GPU per rank)";
    return nullptr;
  }
  int rank = 0, size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  std::unique_ptr<NcclHalo> halo(new NcclHalo(comm, context, plan));
  // NCCL reads its settings from the environment at its first communicator;
  // the apps set their defaults for the halo there (apps/environment.hpp).
  try {
    ncclUniqueId id{};
    collectively(comm, [&] {
      if (rank == 0) BLOCKEIGS_NCCL_CHECK(ncclGetUniqueId(&id));
    });
    BLOCKEIGS_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm));
    collectively(comm, [&] {
      BLOCKEIGS_CUDA_CHECK(cudaSetDevice(context.device()));
      ncclComm_t made = nullptr;
      BLOCKEIGS_NCCL_CHECK(ncclCommInitRank(&made, size, id, rank));
      halo->nccl_ = made;
    });
  } catch (const AgreedError& e) {
    why = e.what();
    // Made here but not everywhere: aborted, which needs no other rank.
    if (halo->nccl_) ncclCommAbort(as_comm(halo->nccl_));
    halo->nccl_ = nullptr;
    return nullptr;
  }
  return halo;
}

template <class T>
NcclHalo<T>::NcclHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan) {
  int least = 0, greatest = 0;
  BLOCKEIGS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t stream = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
  stream_ = stream;
  cudaEvent_t packed = nullptr, received = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&packed, cudaEventDisableTiming));
  packed_ = packed;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&received, cudaEventDisableTiming));
  received_ = received;
}

// Unwinding from an error (possibly on this rank alone), the communicator is
// aborted, which needs no other rank; otherwise destroyed once its work is done.
template <class T>
NcclHalo<T>::~NcclHalo() {
  if (nccl_) {
    if (std::uncaught_exceptions() > 0 || !stream_) {
      ncclCommAbort(as_comm(nccl_));
    } else {
      BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(as_stream(stream_)));
      ncclCommDestroy(as_comm(nccl_));
    }
  }
  if (packed_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(as_event(packed_)));
  if (received_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(as_event(received_)));
  if (stream_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaStreamDestroy(as_stream(stream_)));
}

// The side stream waits for the pack, which the context's stream queued after
// the previous exchange's halo multiply: neither buffer is overwritten early.
template <class T>
void NcclHalo<T>::start(const typename HaloExchange<T>::Source& X) {
  words_ = X.words;
  this->queue_pack(X);
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(as_event(packed_), as_stream(this->context_.stream())));
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(as_stream(stream_), as_event(packed_), 0));
  const HaloPlan& plan = this->plan_;
  const std::size_t row_bytes = static_cast<std::size_t>(words_) * sizeof(T);
  auto* into = reinterpret_cast<char*>(this->halo_block_.data());
  const auto* from = reinterpret_cast<const char*>(this->send_buffer_.data());
  BLOCKEIGS_NCCL_CHECK(ncclGroupStart());
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) {
    const std::int64_t first = plan.recv_offsets[q], rows = plan.recv_offsets[q + 1] - first;
    BLOCKEIGS_NCCL_CHECK(ncclRecv(into + first * row_bytes, rows * row_bytes, ncclUint8, plan.recv_ranks[q],
                                  as_comm(nccl_), as_stream(stream_)));
  }
  for (std::size_t q = 0; q < plan.send_ranks.size(); ++q) {
    const std::int64_t first = plan.send_offsets[q], rows = plan.send_offsets[q + 1] - first;
    BLOCKEIGS_NCCL_CHECK(ncclSend(from + first * row_bytes, rows * row_bytes, ncclUint8, plan.send_ranks[q],
                                  as_comm(nccl_), as_stream(stream_)));
  }
  BLOCKEIGS_NCCL_CHECK(ncclGroupEnd());
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(as_event(received_), as_stream(stream_)));
}

template <class T>
dense::ConstDenseView<T> NcclHalo<T>::end() {
  this->marks_.packed = time_after(packed_);
  this->marks_.arrived = time_after(received_);
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(as_stream(this->context_.stream()), as_event(received_), 0));
  return this->halo_block(words_);
}

template <class T>
double NcclHalo<T>::time_after(void* event) const {
  if (this->profiling_) BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(as_event(event)));
  return MPI_Wtime();
}

template class NcclHalo<float>;
template class NcclHalo<double>;

}  // namespace blockeigs::solver
