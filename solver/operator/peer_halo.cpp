#include "solver/operator/peer_halo.hpp"

#include <cstdlib>
#include <string>

#include "solver/operator/collective.hpp"

#ifdef BLOCKEIGS_HAVE_CUDA
#include "spmm/cuda/cuda_check.hpp"
#endif

namespace blockeigs::solver {

#ifdef BLOCKEIGS_HAVE_CUDA

namespace {

// Tags of the token and set-up messages; halo data over MPI uses tag 0.
constexpr int packed_tag = 1;
constexpr int consumed_tag = 2;
constexpr int first_row_tag = 3;
constexpr int handle_tag = 4;

bool disabled_by_environment() {
  const char* env = std::getenv("BLOCKEIGS_HALO_PEER");
  return env && std::string(env) == "0";
}

// True when every rank this rank exchanges halos with runs on its node.
bool neighbours_on_node(MPI_Comm comm, const HaloPlan& plan) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Group all, local;
  MPI_Comm_group(comm, &all);
  MPI_Comm_group(node, &local);
  std::vector<int> ranks(plan.send_ranks);
  ranks.insert(ranks.end(), plan.recv_ranks.begin(), plan.recv_ranks.end());
  std::vector<int> translated(ranks.size());
  if (!ranks.empty())
    MPI_Group_translate_ranks(all, static_cast<int>(ranks.size()), ranks.data(), local, translated.data());
  MPI_Group_free(&all);
  MPI_Group_free(&local);
  MPI_Comm_free(&node);
  for (int r : translated)
    if (r == MPI_UNDEFINED) return false;
  return true;
}

bool on_every_rank(MPI_Comm comm, bool local) {
  int mine = local ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

void wait_all(std::vector<MPI_Request>& requests) {
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

}  // namespace

std::unique_ptr<PeerHalo> PeerHalo::create(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const bool wanted = size > 1 && context.space() == Space::device && !disabled_by_environment() &&
                      neighbours_on_node(comm, plan);
  if (!on_every_rank(comm, wanted)) return nullptr;
  std::unique_ptr<PeerHalo> peer(new PeerHalo(comm, context, plan));

  // Where this rank's rows start in each sender's packed buffer.
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(&peer->peer_first_row_[q], 1, MPI_INT64_T, plan.recv_ranks[q], first_row_tag,
                                  comm, &requests.back()));
  }
  for (std::size_t q = 0; q < plan.send_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(&plan.send_offsets[q], 1, MPI_INT64_T, plan.send_ranks[q], first_row_tag, comm,
                                  &requests.back()));
  }
  wait_all(requests);
  return peer;
}

PeerHalo::PeerHalo(MPI_Comm comm, const spmm::Context& context, const HaloPlan& plan)
    : comm_(comm),
      context_(context),
      plan_(plan),
      peer_first_row_(plan.recv_ranks.size(), 0),
      mapped_(plan.recv_ranks.size(), nullptr) {
  cudaStream_t stream = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  copy_stream_ = stream;
  cudaEvent_t done = nullptr, released = nullptr;
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&released, cudaEventDisableTiming));
  copies_done_ = done;
  block_released_ = released;
}

PeerHalo::~PeerHalo() {
  close_mapped();
  if (copies_done_) cudaEventDestroy(static_cast<cudaEvent_t>(copies_done_));
  if (block_released_) cudaEventDestroy(static_cast<cudaEvent_t>(block_released_));
  if (copy_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(copy_stream_));
}

void PeerHalo::close_mapped() {
  for (void*& p : mapped_) {
    if (p) cudaIpcCloseMemHandle(p);
    p = nullptr;
  }
}

bool PeerHalo::publish(const void* send_buffer) {
  close_mapped();
  cudaIpcMemHandle_t mine{};
  bool exported = true;
  if (!plan_.send_ranks.empty() &&
      cudaIpcGetMemHandle(&mine, const_cast<void*>(send_buffer)) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
    exported = false;
  }
  if (!on_every_rank(comm_, exported)) return false;

  std::vector<cudaIpcMemHandle_t> theirs(plan_.recv_ranks.size());
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < plan_.recv_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(&theirs[q], sizeof(cudaIpcMemHandle_t), MPI_BYTE, plan_.recv_ranks[q], handle_tag,
                                  comm_, &requests.back()));
  }
  for (int to : plan_.send_ranks) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(
        MPI_Isend(&mine, sizeof(cudaIpcMemHandle_t), MPI_BYTE, to, handle_tag, comm_, &requests.back()));
  }
  wait_all(requests);

  bool mapped = true;
  for (std::size_t q = 0; q < theirs.size() && mapped; ++q) {
    if (cudaIpcOpenMemHandle(&mapped_[q], theirs[q], cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      cudaGetLastError();
      mapped_[q] = nullptr;
      mapped = false;
    }
  }
  if (on_every_rank(comm_, mapped)) return true;
  close_mapped();
  return false;
}

void PeerHalo::post_packed_receives() {
  for (int from : plan_.recv_ranks) {
    packed_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, from, packed_tag, comm_, &packed_tokens_.back()));
  }
}

void PeerHalo::announce_packed() {
  for (int to : plan_.send_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, to, packed_tag, comm_, &sent_tokens_.back()));
  }
}

void PeerHalo::queue_copies(void* halo_block, std::size_t row_bytes) {
  wait_all(packed_tokens_);
  auto stream = static_cast<cudaStream_t>(copy_stream_);
  // The previous halo multiply may still be reading the halo block.
  if (released_recorded_)
    BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(block_released_), 0));
  auto* halo = static_cast<char*>(halo_block);
  for (std::size_t q = 0; q < plan_.recv_ranks.size(); ++q) {
    const std::int64_t first = plan_.recv_offsets[q], rows = plan_.recv_offsets[q + 1] - first;
    const char* from = static_cast<const char*>(mapped_[q]) + peer_first_row_[q] * row_bytes;
    BLOCKEIGS_CUDA_CHECK(cudaMemcpyAsync(halo + first * row_bytes, from, rows * row_bytes,
                                         cudaMemcpyDeviceToDevice, stream));
  }
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(copies_done_), stream));
}

void PeerHalo::stream_waits_for_copies() {
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(context_.stream()),
                                           static_cast<cudaEvent_t>(copies_done_), 0));
}

void PeerHalo::halo_block_released() {
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(block_released_),
                                       static_cast<cudaStream_t>(context_.stream())));
  released_recorded_ = true;
}

void PeerHalo::finish() {
  BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(copies_done_)));
  for (int from : plan_.recv_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, from, consumed_tag, comm_, &sent_tokens_.back()));
  }
  for (int to : plan_.send_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, to, consumed_tag, comm_, &sent_tokens_.back()));
  }
  wait_all(sent_tokens_);
}

#else  // without CUDA there is nothing to map: the operator always uses MPI.

std::unique_ptr<PeerHalo> PeerHalo::create(MPI_Comm, const spmm::Context&, const HaloPlan&) { return nullptr; }
PeerHalo::~PeerHalo() = default;
void PeerHalo::close_mapped() {}
bool PeerHalo::publish(const void*) { return false; }
void PeerHalo::post_packed_receives() {}
void PeerHalo::announce_packed() {}
void PeerHalo::queue_copies(void*, std::size_t) {}
void PeerHalo::stream_waits_for_copies() {}
void PeerHalo::halo_block_released() {}
void PeerHalo::finish() {}

#endif

}  // namespace blockeigs::solver
