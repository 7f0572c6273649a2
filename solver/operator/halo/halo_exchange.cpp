#include "solver/operator/halo/halo_exchange.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/operator/halo/cuda/halo_pack.hpp"

namespace blockeigs::solver {
namespace {

// Element (i, j) of X at X[i * row_stride + j * col_stride].
template <class U>
void gather_rows(const dense::Context& context, const HaloPlan& plan, const std::int32_t* device_rows, const U* X,
                 std::int64_t row_stride, std::int64_t col_stride, std::int64_t k, U* packed, std::int64_t packed_ld) {
  if (context.space() == Space::host) {
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < plan.packed_rows(); ++s) {
      const U* from = X + std::int64_t(plan.send_rows[s]) * row_stride;
      for (std::int64_t j = 0; j < k; ++j) packed[s * packed_ld + j] = from[j * col_stride];
    }
    return;
  }
  cuda::pack_rows(X, row_stride, col_stride, k, device_rows, plan.packed_rows(), packed, packed_ld, context.stream());
}

}  // namespace

template <class T>
HaloExchange<T>::HaloExchange(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : comm_(comm),
      context_(context),
      plan_(plan),
      send_rows_(context.space(), plan.send_rows),
      packed_(std::make_unique<dense::Event>(context)) {}

template <class T>
HaloExchange<T>::~HaloExchange() = default;

template <class T>
bool HaloExchange<T>::reserve(std::int64_t cols) {
  if (cols <= capacity_) return true;
  const Space space = context_.space();
  // The new send buffer exists before the old one is freed (a transport may
  // hand it to its neighbours in on_reserve, collectively).
  dense::Buffer<T> send(space, static_cast<std::size_t>(plan_.packed_rows() * cols));
  const bool usable = on_reserve(cols, send.data());
  send_buffer_ = std::move(send);
  halo_block_ = dense::Buffer<T>(space, static_cast<std::size_t>(plan_.halo_rows() * cols));
  capacity_ = cols;
  return usable;
}

template <class T>
void HaloExchange<T>::queue_pack(const Source& X) {
  BLOCKEIGS_ASSERT(X.words <= capacity_);
  if (context_.space() == Space::device && plan_.packed_rows() == 0) return;  // nothing to send
  if (X.element_bytes == sizeof(T))
    gather_rows(context_, plan_, send_rows_.data(), static_cast<const T*>(X.data), X.ld, X.col_stride, X.cols,
                send_buffer_.data(), X.words);
  else  // fp32 rows in fp64 words
    gather_rows(context_, plan_, send_rows_.data(), static_cast<const float*>(X.data), X.ld, X.col_stride, X.cols,
                reinterpret_cast<float*>(send_buffer_.data()),
                X.words * std::int64_t{sizeof(T)} / std::int64_t{sizeof(float)});
}

template <class T>
void HaloExchange<T>::record_packed() {
  if (context_.space() == Space::device && plan_.packed_rows() > 0) packed_->record();
}

template <class T>
void HaloExchange<T>::pack(const Source& X) {
  queue_pack(X);
  record_packed();
}

template <class T>
void HaloExchange<T>::wait_for_pack() {
  if (plan_.packed_rows() > 0) packed_->synchronize();
}

template <class T>
void HaloExchange<T>::post_receives(T* into, std::int64_t words, std::vector<MPI_Request>& requests) const {
  for (std::size_t q = 0; q < plan_.recv_ranks.size(); ++q) {
    const std::int64_t first = plan_.recv_offsets[q];
    const std::int64_t bytes = (plan_.recv_offsets[q + 1] - first) * words * std::int64_t{sizeof(T)};
    large_irecv(comm_, into + first * words, bytes, plan_.recv_ranks[q], 0, requests);
  }
}

template <class T>
void HaloExchange<T>::post_sends(const T* from, std::int64_t words, std::vector<MPI_Request>& requests) const {
  for (std::size_t q = 0; q < plan_.send_ranks.size(); ++q) {
    const std::int64_t first = plan_.send_offsets[q];
    const std::int64_t bytes = (plan_.send_offsets[q + 1] - first) * words * std::int64_t{sizeof(T)};
    large_isend(comm_, from + first * words, bytes, plan_.send_ranks[q], 0, requests);
  }
}

template <class T>
double HaloExchange<T>::now() const {
  if (profiling_) context_.synchronize();
  return MPI_Wtime();
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace blockeigs::solver
