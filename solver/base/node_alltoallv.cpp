#include "solver/base/node_alltoallv.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/checks.hpp"

namespace blockeigs::solver {
namespace {

constexpr std::int64_t kWindowBytes = std::int64_t{8} << 20;  // a rank's part of the window
constexpr std::int64_t kCopyUnit = std::int64_t{256} << 10;   // what one thread copies at a time

struct Copy {
  char* to;
  const char* from;
  std::int64_t bytes;
};

// Every copy, cut in units of kCopyUnit shared by the rank's threads.
void copy_all(const std::vector<Copy>& copies) {
  std::vector<std::int64_t> first_unit(copies.size() + 1, 0);
  for (std::size_t c = 0; c < copies.size(); ++c)
    first_unit[c + 1] = first_unit[c] + (copies[c].bytes + kCopyUnit - 1) / kCopyUnit;
  const std::int64_t units = first_unit.back();
#pragma omp parallel for schedule(static) if (units > 1)
  for (std::int64_t u = 0; u < units; ++u) {
    const auto c =
        static_cast<std::size_t>(std::upper_bound(first_unit.begin(), first_unit.end(), u) - first_unit.begin() - 1);
    const std::int64_t offset = (u - first_unit[c]) * kCopyUnit;
    std::memcpy(copies[c].to + offset, copies[c].from + offset,
                static_cast<std::size_t>(std::min(kCopyUnit, copies[c].bytes - offset)));
  }
}

std::vector<std::int64_t> packed_offsets(const std::vector<std::int64_t>& bytes) {
  std::vector<std::int64_t> at(bytes.size() + 1, 0);
  for (std::size_t q = 0; q < bytes.size(); ++q) at[q + 1] = at[q] + bytes[q];
  return at;
}

// The part of a pair's `bytes` that round `round` carries.
std::int64_t in_round(std::int64_t bytes, std::int64_t round, std::int64_t slot) {
  return std::clamp(bytes - round * slot, std::int64_t{0}, slot);
}

// A shared window for a group of ranks and a slot size: two halves (alternate
// rounds), each a slot for every receiver. Made at the group's first exchange
// and kept (making one costs milliseconds: its pages are faulted in anew),
// freed as MPI is finalised.
struct SharedWindow {
  MPI_Comm group = MPI_COMM_NULL;  // a duplicate of the communicator it was made for
  std::int64_t slot = 0;
  MPI_Win window = MPI_WIN_NULL;
  std::vector<char*> of;  // each rank's part
};

std::vector<std::unique_ptr<SharedWindow>>& windows() {
  static std::vector<std::unique_ptr<SharedWindow>> kept;
  return kept;
}

// The delete callback of an attribute of MPI_COMM_SELF, which MPI_Finalize
// runs first: every rank frees its windows in the order they were made, as
// it made them, collectively.
int free_windows(MPI_Comm, int, void*, void*) {
  for (const std::unique_ptr<SharedWindow>& w : windows()) {
    MPI_Win_unlock_all(w->window);
    MPI_Win_free(&w->window);
    MPI_Comm_free(&w->group);
  }
  windows().clear();
  return MPI_SUCCESS;
}

const SharedWindow& window_for(MPI_Comm comm, int ranks, std::int64_t slot) {
  for (const std::unique_ptr<SharedWindow>& w : windows()) {
    int same = MPI_UNEQUAL;  // the same ranks in the same order: the window serves
    BLOCKEIGS_MPI_CHECK(MPI_Comm_compare(w->group, comm, &same));
    if ((same == MPI_IDENT || same == MPI_CONGRUENT) && w->slot == slot) return *w;
  }
  if (windows().empty()) {
    int key = MPI_KEYVAL_INVALID;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_windows, &key, nullptr));
    BLOCKEIGS_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
  }
  auto w = std::make_unique<SharedWindow>();
  w->slot = slot;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(comm, &w->group));
  MPI_Info info = MPI_INFO_NULL;
  BLOCKEIGS_MPI_CHECK(MPI_Info_create(&info));
  BLOCKEIGS_MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  char* base = nullptr;
  BLOCKEIGS_MPI_CHECK(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(2 * ranks * slot), 1, info, w->group, &base, &w->window));
  BLOCKEIGS_MPI_CHECK(MPI_Info_free(&info));
  w->of.resize(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    MPI_Aint size = 0;
    int unit = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Win_shared_query(w->window, q, &size, &unit, &w->of[q]));
  }
  BLOCKEIGS_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, w->window));
  windows().push_back(std::move(w));
  return *windows().back();
}

}  // namespace

bool all_ranks_on_one_node(MPI_Comm comm) {
  int ranks = 1, node_ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  MPI_Comm node = MPI_COMM_NULL;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(node, &node_ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_free(&node));
  int mine = node_ranks == ranks, all = 0;  // the same on every rank of a node, not across nodes
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
  return all != 0;
}

std::int64_t node_alltoallv_slot_bytes(int ranks) {
  const std::int64_t page = 4096;
  return std::max(16 * page, kWindowBytes / (2 * std::max(ranks, 1)) / page * page);
}

void node_alltoallv(MPI_Comm comm, const void* send, const std::vector<std::int64_t>& send_bytes, void* recv,
                    const std::vector<std::int64_t>& recv_bytes, std::int64_t slot) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  BLOCKEIGS_ASSERT(slot > 0 && send_bytes.size() == std::size_t(ranks) && recv_bytes.size() == send_bytes.size());
  const std::vector<std::int64_t> send_at = packed_offsets(send_bytes), recv_at = packed_offsets(recv_bytes);
  const auto* from = static_cast<const char*>(send);
  auto* to = static_cast<char*>(recv);
  BLOCKEIGS_ASSERT(send_bytes[rank] == recv_bytes[rank]);
  std::vector<Copy> copies;
  if (send_bytes[rank] > 0) copies.push_back({to + recv_at[rank], from + send_at[rank], send_bytes[rank]});

  // Rounds: enough for the largest piece between two ranks, agreed by all.
  std::int64_t largest = 0;
  for (int q = 0; q < ranks; ++q)
    if (q != rank) largest = std::max(largest, send_bytes[q]);
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_INT64_T, MPI_MAX, comm));
  const std::int64_t rounds = (largest + slot - 1) / slot;
  if (rounds == 0) {
    copy_all(copies);
    return;
  }

  const SharedWindow& shared = window_for(comm, ranks, slot);
  char* const mine = shared.of[rank];
  // Step t fills this rank's half t % 2 with round t and empties the others'
  // halves (t - 1) % 2 of round t - 1; the barrier after each step keeps a
  // half from being refilled before every receiver has emptied it.
  for (std::int64_t t = 0; t <= rounds; ++t) {
    if (t < rounds)
      for (int q = 0; q < ranks; ++q) {
        const std::int64_t n = q == rank ? 0 : in_round(send_bytes[q], t, slot);
        if (n > 0) copies.push_back({mine + ((t % 2) * ranks + q) * slot, from + send_at[q] + t * slot, n});
      }
    if (t > 0)
      for (int s = 0; s < ranks; ++s) {
        const std::int64_t n = s == rank ? 0 : in_round(recv_bytes[s], t - 1, slot);
        if (n > 0)
          copies.push_back({to + recv_at[s] + (t - 1) * slot, shared.of[s] + (((t - 1) % 2) * ranks + rank) * slot, n});
      }
    copy_all(copies);
    copies.clear();
    BLOCKEIGS_MPI_CHECK(MPI_Win_sync(shared.window));
    BLOCKEIGS_MPI_CHECK(MPI_Barrier(comm));
    BLOCKEIGS_MPI_CHECK(MPI_Win_sync(shared.window));
  }
}

}  // namespace blockeigs::solver
