// PeerHalo in a build with CUDA (peer_halo_stub.cpp without it).
#include "solver/operator/halo/peer_halo.hpp"

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver {

namespace {

// Tags of the token and set-up messages; halo data over MPI uses tag 0.
constexpr int packed_tag = 1;
constexpr int consumed_tag = 2;
constexpr int first_row_tag = 3;
constexpr int handle_tag = 4;

// True when every rank this rank exchanges halos with runs on its node.
bool neighbours_on_node(MPI_Comm comm, const HaloPlan& plan) {
  MPI_Comm node;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Group all, local;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_group(comm, &all));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_group(node, &local));
  std::vector<int> ranks(plan.send_ranks);
  ranks.insert(ranks.end(), plan.recv_ranks.begin(), plan.recv_ranks.end());
  std::vector<int> translated(ranks.size());
  if (!ranks.empty())
    BLOCKEIGS_MPI_CHECK(
        MPI_Group_translate_ranks(all, static_cast<int>(ranks.size()), ranks.data(), local, translated.data()));
  BLOCKEIGS_MPI_CHECK(MPI_Group_free(&all));
  BLOCKEIGS_MPI_CHECK(MPI_Group_free(&local));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_free(&node));
  for (int r : translated)
    if (r == MPI_UNDEFINED) return false;
  return true;
}

bool on_every_rank(MPI_Comm comm, bool local) {
  int mine = local ? 1 : 0, all = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
  return all == 1;
}

void wait_all(std::vector<MPI_Request>& requests) {
  BLOCKEIGS_MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  requests.clear();
}

}  // namespace

template <class T>
std::unique_ptr<PeerHalo<T>> PeerHalo<T>::create(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan,
                                                 bool allowed) {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  const bool wanted = size > 1 && context.space() == Space::device && allowed && neighbours_on_node(comm, plan);
  if (!on_every_rank(comm, wanted)) return nullptr;
  std::unique_ptr<PeerHalo> peer(new PeerHalo(comm, context, plan));

  // Where this rank's rows start in each sender's packed buffer.
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(&peer->peer_first_row_[q], 1, MPI_INT64_T, plan.recv_ranks[q], first_row_tag, comm,
                                  &requests.back()));
  }
  for (std::size_t q = 0; q < plan.send_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(
        MPI_Isend(&plan.send_offsets[q], 1, MPI_INT64_T, plan.send_ranks[q], first_row_tag, comm, &requests.back()));
  }
  wait_all(requests);
  return peer;
}

template <class T>
PeerHalo<T>::PeerHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan),
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

template <class T>
PeerHalo<T>::~PeerHalo() {
  close_mapped();
  if (copies_done_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(static_cast<cudaEvent_t>(copies_done_)));
  if (block_released_) BLOCKEIGS_CUDA_CHECK_NOTHROW(cudaEventDestroy(static_cast<cudaEvent_t>(block_released_)));
  if (copy_stream_) cudaStreamDestroy(static_cast<cudaStream_t>(copy_stream_));
}

template <class T>
void PeerHalo<T>::close_mapped() {
  for (void*& p : mapped_) {
    if (p) cudaIpcCloseMemHandle(p);
    p = nullptr;
  }
}

template <class T>
bool PeerHalo<T>::on_reserve(std::int64_t, const T* send_buffer) {
  close_mapped();
  const HaloPlan& plan = this->plan_;
  cudaIpcMemHandle_t mine{};
  bool exported = true;
  if (!plan.send_ranks.empty() && cudaIpcGetMemHandle(&mine, const_cast<T*>(send_buffer)) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
    exported = false;
  }
  if (!on_every_rank(this->comm_, exported)) return false;

  std::vector<cudaIpcMemHandle_t> theirs(plan.recv_ranks.size());
  std::vector<MPI_Request> requests;
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(&theirs[q], sizeof(cudaIpcMemHandle_t), MPI_BYTE, plan.recv_ranks[q], handle_tag,
                                  this->comm_, &requests.back()));
  }
  for (int to : plan.send_ranks) {
    requests.emplace_back();
    BLOCKEIGS_MPI_CHECK(
        MPI_Isend(&mine, sizeof(cudaIpcMemHandle_t), MPI_BYTE, to, handle_tag, this->comm_, &requests.back()));
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
  if (on_every_rank(this->comm_, mapped)) return true;
  close_mapped();
  return false;
}

// Receives for the senders' "packed" tokens first, then this rank's pack.
template <class T>
void PeerHalo<T>::start(const typename HaloExchange<T>::Source& X) {
  words_ = X.words;
  for (int from : this->plan_.recv_ranks) {
    packed_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, from, packed_tag, this->comm_, &packed_tokens_.back()));
  }
  this->pack(X);
}

// Once this rank's pack is done: tell the receivers, wait for the senders'
// word, and queue the copies of their rows on the side stream, which the
// context's stream then waits for.
template <class T>
dense::ConstDenseView<T> PeerHalo<T>::end() {
  const HaloPlan& plan = this->plan_;
  this->wait_for_pack();
  this->marks_.packed = this->now();
  for (int to : plan.send_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, to, packed_tag, this->comm_, &sent_tokens_.back()));
  }
  wait_all(packed_tokens_);
  auto stream = static_cast<cudaStream_t>(copy_stream_);
  // The previous halo multiply may still be reading the halo block.
  if (released_recorded_)
    BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(block_released_), 0));
  const std::size_t row_bytes = static_cast<std::size_t>(words_) * sizeof(T);
  auto* halo = reinterpret_cast<char*>(this->halo_block_.data());
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) {
    const std::int64_t first = plan.recv_offsets[q], rows = plan.recv_offsets[q + 1] - first;
    const char* from = static_cast<const char*>(mapped_[q]) + peer_first_row_[q] * row_bytes;
    BLOCKEIGS_CUDA_CHECK(
        cudaMemcpyAsync(halo + first * row_bytes, from, rows * row_bytes, cudaMemcpyDeviceToDevice, stream));
  }
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(copies_done_), stream));
  this->marks_.arrived = this->now();
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(this->context_.stream()),
                                           static_cast<cudaEvent_t>(copies_done_), 0));
  return this->halo_block(words_);
}

template <class T>
void PeerHalo<T>::release() {
  const HaloPlan& plan = this->plan_;
  BLOCKEIGS_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(block_released_), static_cast<cudaStream_t>(this->context_.stream())));
  released_recorded_ = true;
  BLOCKEIGS_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(copies_done_)));
  for (int from : plan.recv_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Isend(nullptr, 0, MPI_BYTE, from, consumed_tag, this->comm_, &sent_tokens_.back()));
  }
  for (int to : plan.send_ranks) {
    sent_tokens_.emplace_back();
    BLOCKEIGS_MPI_CHECK(MPI_Irecv(nullptr, 0, MPI_BYTE, to, consumed_tag, this->comm_, &sent_tokens_.back()));
  }
  wait_all(sent_tokens_);
}

template class PeerHalo<float>;
template class PeerHalo<double>;

}  // namespace blockeigs::solver
