#include "apps/run/output/input_order_block.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/checks.hpp"
#include "core/counting_sort.hpp"
#include "core/huge_pages.hpp"
#include "solver/blocks/host_copy.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::apps {
namespace {

ExchangeSeconds spent;

// Adds the seconds since `start` to `to` and returns now.
double lap(double& to, double start) {
  const double now = MPI_Wtime();
  to += now - start;
  return now;
}

// True on every rank when the operator's numbering keeps each rank's rows of
// the input on that rank (a local order without a graph partition, or one
// rank): the rows are then only permuted in place. Collective.
bool rows_stay_on_their_ranks(const solver::RowNumbering& numbering, int rank, MPI_Comm comm) {
  const solver::RowPartition &input = numbering.original(), &now = numbering.current();
  int stay = input.begin(rank) == now.begin(rank) && input.end(rank) == now.end(rank);
  for (const std::int64_t row : numbering.current_of_original()) stay &= row >= now.begin(rank) && row < now.end(rank);
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &stay, 1, MPI_INT, MPI_MIN, comm));
  return stay == 1;
}

// X on the host: X itself, or a copy of it held by `keep`.
template <class T>
dense::ConstDenseView<T> on_host(dense::ConstDenseView<T> X, std::shared_ptr<const void>& keep) {
  if (X.space == Space::host || X.rows == 0) return {Space::host, X.rows, X.cols, X.ld, X.data};
  const auto span = static_cast<std::size_t>((X.rows - 1) * X.ld + X.cols);
  std::shared_ptr<T[]> copy = shared_array_in_huge_pages<T>(span);
  // The pages faulted in by every thread first: the copy from the device then runs at the bus's speed
  // (it faults them in on one thread otherwise).
  char* bytes = reinterpret_cast<char*>(copy.get());
  const auto pages = static_cast<std::int64_t>((sizeof(T) * span + 4095) / 4096);
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pages; ++p) bytes[p * 4096] = 0;
  dense::copy_bytes(copy.get(), Space::host, X.data, X.space, sizeof(T) * span);
  const dense::ConstDenseView<T> host(Space::host, X.rows, X.cols, X.ld, copy.get());
  keep = std::move(copy);
  return host;
}

template <class T>
void widen_row(const T* row, std::int64_t cols, double* out) {
  for (std::int64_t j = 0; j < cols; ++j) out[j] = static_cast<double>(row[j]);
}

// Moves the rows of a host block (the operator's numbering) to the ranks that
// hold them in the input's numbering, one piece of every rank's input range
// at a time, as the file takes them: piece p carries rows [p piece_rows,
// (p + 1) piece_rows) of each rank's range. A row travels as a record (its
// input row, then its values in T); rows that stay are copied directly.
template <class T>
class PieceExchange {
 public:
  PieceExchange(MPI_Comm comm, dense::ConstDenseView<T> host, const solver::RowNumbering& numbering,
                std::int64_t piece_rows)
      : comm_(comm), host_(host), input_(numbering.original()), piece_rows_(piece_rows) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks_));
    const double start = MPI_Wtime();
    for (int r = 0; r < ranks_; ++r) pieces_ = std::max(pieces_, (input_.rows(r) + piece_rows - 1) / piece_rows);
    // The local rows sorted by (piece, destination): a counting sort.
    const std::int64_t rows = host.rows;
    reserve_in_huge_pages(target_, static_cast<std::size_t>(rows));
    target_.resize(static_cast<std::size_t>(rows));
    std::vector<std::int64_t> key;
    reserve_in_huge_pages(key, target_.size());
    key.resize(target_.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < rows; ++i) {
      target_[i] = numbering.original_row(i);
      const int owner = input_.owner(target_[i]);
      key[i] = (target_[i] - input_.begin(owner)) / piece_rows * ranks_ + owner;
    }
    reserve_in_huge_pages(order_, target_.size());
    counting_sort(key.data(), rows, pieces_ * ranks_, order_, start_);
    // Buffers for the largest piece, reused.
    std::int64_t most_sent = 0;
    for (std::int64_t p = 0; p < pieces_; ++p)
      most_sent = std::max(most_sent, start_[(p + 1) * ranks_] - start_[p * ranks_]);
    send_ = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(most_sent * record()));
    recv_ = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(piece_rows * record()));
    lap(spent.plan, start);
  }

  std::int64_t pieces() const { return pieces_; }

  // The next piece: this rank's input rows [begin, end) into `out`. Collective.
  void next(std::int64_t begin, std::int64_t end, double* out) {
    BLOCKEIGS_ASSERT(next_ < pieces_);
    const std::int64_t p = next_++, cols = host_.cols, first = input_.begin(rank_) + begin;
    double clock = MPI_Wtime();
    std::vector<std::int64_t> send_bytes(static_cast<std::size_t>(ranks_), 0);
    char* packed = send_.get();
    for (int q = 0; q < ranks_; ++q) {
      const std::int64_t from = start_[p * ranks_ + q], to = start_[p * ranks_ + q + 1];
      if (q == rank_) {
#pragma omp parallel for schedule(static)
        for (std::int64_t k = from; k < to; ++k) {
          const std::int64_t i = order_[k];
          widen_row(host_.data + i * host_.ld, cols, out + (target_[i] - first) * cols);
        }
        continue;
      }
#pragma omp parallel for schedule(static)
      for (std::int64_t k = from; k < to; ++k) {
        const std::int64_t i = order_[k];
        char* record_at = packed + (k - from) * record();
        std::memcpy(record_at, &target_[i], sizeof(std::int64_t));
        std::memcpy(record_at + sizeof(std::int64_t), host_.data + i * host_.ld, sizeof(T) * cols);
      }
      send_bytes[q] = (to - from) * record();
      packed += send_bytes[q];
    }
    clock = lap(spent.pack, clock);
    const std::vector<std::int64_t> recv_bytes = solver::exchange_counts(comm_, send_bytes);
    std::int64_t received = 0;
    for (const std::int64_t b : recv_bytes) received += b;
    BLOCKEIGS_ASSERT(received <= (end - begin) * record());
    solver::large_alltoallv(comm_, send_.get(), send_bytes, recv_.get(), recv_bytes);
    clock = lap(spent.exchange, clock);
    const std::int64_t records = received / record();
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < records; ++r) {
      const char* at = recv_.get() + r * record();
      std::int64_t target = 0;
      std::memcpy(&target, at, sizeof target);
      BLOCKEIGS_ASSERT(target >= first && target < input_.begin(rank_) + end);
      double* to = out + (target - first) * cols;
      for (std::int64_t j = 0; j < cols; ++j) {
        T value;
        std::memcpy(&value, at + sizeof(std::int64_t) + sizeof(T) * j, sizeof(T));
        to[j] = static_cast<double>(value);
      }
    }
    lap(spent.unpack, clock);
  }

 private:
  std::int64_t record() const { return static_cast<std::int64_t>(sizeof(std::int64_t) + sizeof(T) * host_.cols); }

  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 1;
  dense::ConstDenseView<T> host_;
  solver::RowPartition input_;
  std::int64_t piece_rows_ = 1, pieces_ = 0, next_ = 0;
  std::vector<std::int64_t> target_;  // each local row's row in the input
  std::vector<std::int64_t> order_;   // the local rows by (piece, destination)
  std::vector<std::int64_t> start_;   // where each (piece, destination) starts in order_
  std::unique_ptr<char[]> send_, recv_;
};

template <class T>
DistributedBlock real_block_in_input_order(const std::string& dataset, dense::ConstDenseView<T> X,
                                           const solver::RowNumbering& numbering, MPI_Comm comm,
                                           std::int64_t piece_bytes) {
  const double start = MPI_Wtime();
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const solver::RowPartition& input = numbering.original();
  DistributedBlock block;
  block.dataset = dataset;
  block.global_rows = input.global_rows();
  block.cols = X.cols;
  block.first_row = input.begin(rank);
  block.local_rows = input.rows(rank);
  block.piece_rows = std::max<std::int64_t>(1, piece_bytes / (8 * std::max<std::int64_t>(1, X.cols)));
  if (numbering.is_identity()) {
    if (std::is_same_v<T, double> && X.space == Space::host && X.ld == X.cols) {
      block.rows = reinterpret_cast<const double*>(X.data);  // written straight from the solver's block
    } else {
      // Copied to the host and widened a piece at a time.
      block.copy_rows = [X](std::int64_t begin, std::int64_t end, double* out) {
        solver::copy_to_host_doubles(
            dense::ConstDenseView<T>(X.space, end - begin, X.cols, X.ld, X.data + begin * X.ld), out);
      };
    }
  } else if (rows_stay_on_their_ranks(numbering, rank, comm)) {
    // Permuted in place: each piece gathers its rows.
    const dense::ConstDenseView<T> host = on_host(X, block.held);
    const std::int64_t* position = numbering.current_of_original().data();
    const std::int64_t first = numbering.current().begin(rank);
    block.copy_rows = [host, position, first](std::int64_t begin, std::int64_t end, double* out) {
      for (std::int64_t i = begin; i < end; ++i, out += host.cols)
        widen_row(host.data + (position[i] - first) * host.ld, host.cols, out);
    };
  } else {
    std::shared_ptr<const void> copy;
    const double copying = MPI_Wtime();
    const dense::ConstDenseView<T> host = on_host(X, copy);
    lap(spent.to_host, copying);
    auto exchange = std::make_shared<PieceExchange<T>>(comm, host, numbering, block.piece_rows);
    block.collective_pieces = exchange->pieces();
    block.copy_rows = [exchange, copy](std::int64_t begin, std::int64_t end, double* out) {
      exchange->next(begin, end, out);
    };
  }
  block.seconds = MPI_Wtime() - start;
  return block;
}

}  // namespace

// Complex values go as the pairs of reals they are, into a complex dataset.
template <class T>
DistributedBlock block_in_input_order(const std::string& dataset, dense::ConstDenseView<T> X,
                                      const solver::RowNumbering& numbering, MPI_Comm comm, std::int64_t piece_bytes) {
  if constexpr (is_complex_v<T>) {
    using R = real_t<T>;
    const dense::ConstDenseView<R> parts = dense::parts_of(X);
    DistributedBlock block = real_block_in_input_order<R>(dataset, parts, numbering, comm, piece_bytes);
    block.complex = true;
    return block;
  } else {
    return real_block_in_input_order<T>(dataset, X, numbering, comm, piece_bytes);
  }
}

DistributedBlock block_in_input_order(const std::string& dataset, std::vector<double> local, std::int64_t cols,
                                      const solver::RowNumbering& numbering, MPI_Comm comm) {
  const double start = MPI_Wtime();
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const solver::RowPartition& input = numbering.original();
  if (!numbering.is_identity()) local = numbering.to_original_rows(comm, local, cols);
  DistributedBlock block = held_block(dataset, input.global_rows(), cols, input.begin(rank), std::move(local));
  block.seconds = MPI_Wtime() - start;
  return block;
}

ExchangeSeconds take_exchange_seconds() { return std::exchange(spent, ExchangeSeconds{}); }

#define BLOCKEIGS_INPUT_ORDER(T)                                                               \
  template DistributedBlock block_in_input_order(const std::string&, dense::ConstDenseView<T>, \
                                                 const solver::RowNumbering&, MPI_Comm, std::int64_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INPUT_ORDER)
#undef BLOCKEIGS_INPUT_ORDER

}  // namespace blockeigs::apps
