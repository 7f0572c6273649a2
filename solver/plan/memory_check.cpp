#include "solver/plan/memory_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/checks.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/halo/halo_plan.hpp"
#include "solver/operator/local_blocks.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {
namespace {

constexpr std::int64_t unlimited = std::numeric_limits<std::int64_t>::max() / 4;

// A number from the first line of a file ("max" and unreadable files: none).
std::int64_t number_in(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return unlimited;
  try {
    return std::stoll(word);
  } catch (...) {
    return unlimited;
  }
}

// Ranks grouped: a communicator per node, and per device within it; each
// group named by its lowest rank.
int group_leader(MPI_Comm comm, MPI_Comm group) {
  int rank = 0, leader = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, group));
  return leader;
}

struct RankNeeds {
  std::int64_t host_peak, host_free, host_held, node;  // node: its lowest rank
  std::int64_t device_peak, device_free, device_held, gpu;
};

// The most crowded node (host) or GPU: the ranks' summed peaks against its
// capacity, the free memory plus what its ranks already hold of their plans.
struct Crowded {
  std::int64_t need = 0, capacity = 0;
  int ranks = 1, leader = 0;
  std::int64_t per_rank = unlimited;  // the least capacity a rank of any group gets
};

Crowded most_crowded(const std::vector<RankNeeds>& all, bool host, std::int64_t limit) {
  Crowded worst;
  double ratio = -1;
  for (const RankNeeds& r : all) {
    const std::int64_t id = host ? r.node : r.gpu;
    std::int64_t need = 0, held = 0, free = unlimited;
    int count = 0;
    for (const RankNeeds& o : all) {
      if ((host ? o.node : o.gpu) != id) continue;
      need += host ? o.host_peak : o.device_peak;
      held += host ? o.host_held : o.device_held;
      free = std::min(free, host ? o.host_free : o.device_free);
      ++count;
    }
    const std::int64_t capacity = std::min(limit, free + held);
    worst.per_rank = std::min(worst.per_rank, capacity / count);
    if (double(need) / double(std::max<std::int64_t>(capacity, 1)) > ratio) {
      ratio = double(need) / double(std::max<std::int64_t>(capacity, 1));
      worst.need = need, worst.capacity = capacity, worst.ranks = count, worst.leader = static_cast<int>(id);
    }
  }
  return worst;
}

// The smallest rank count at which `fits` holds, searched up to 2^20 ranks; 0: none.
int ranks_that_fit(int ranks, const std::function<bool(int)>& fits) {
  int low = ranks, high = std::max(2, 2 * ranks);
  while (!fits(high)) {
    if (high >= (1 << 20)) return 0;
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const int mid = low + (high - low) / 2;
    (fits(mid) ? high : low) = mid;
  }
  return high;
}

}  // namespace

std::int64_t available_host_memory() {
  std::int64_t available = unlimited;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") available = kib * 1024;
  if (available == unlimited) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = std::int64_t{pages} * page;
  }
  // A batch job's cgroup may allow less than the node has.
  const std::int64_t max = number_in("/sys/fs/cgroup/memory.max");
  if (max < unlimited) available = std::min(available, max - std::min(max, number_in("/sys/fs/cgroup/memory.current")));
  return available;
}

void check_memory_fits(MPI_Comm comm, const MemoryPlan& plan, std::int64_t host_held, std::int64_t device_held,
                       int device, const std::function<MemoryPlan(int ranks)>& plan_at,
                       std::optional<std::int64_t> memory_limit, MemorySides sides) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const std::int64_t limit = memory_limit ? std::min(*memory_limit, unlimited) : unlimited;
  MPI_Comm node = MPI_COMM_NULL, gpu = MPI_COMM_NULL;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_split(node, std::max(device, 0), 0, &gpu));
  const bool on_device = plan.space == Space::device && sides != MemorySides::host;
  const bool on_host = sides != MemorySides::device;
  std::int64_t device_free = unlimited, device_total = 0;
  if (on_device) dense::device_memory(&device_free, &device_total);
  const RankNeeds mine{
      plan.host_peak, available_host_memory(), host_held, group_leader(comm, node), plan.device_peak, device_free,
      device_held,    group_leader(comm, gpu)};
  BLOCKEIGS_MPI_CHECK(MPI_Comm_free(&gpu));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_free(&node));
  std::vector<RankNeeds> all(static_cast<std::size_t>(ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Allgather(&mine, 8, MPI_INT64_T, all.data(), 8, MPI_INT64_T, comm));

  const Crowded host = most_crowded(all, true, limit);
  const Crowded gpu_side = on_device ? most_crowded(all, false, limit) : Crowded{};
  const bool host_short = on_host && host.need > host.capacity;
  const bool device_short = on_device && gpu_side.need > gpu_side.capacity;
  if (!host_short && !device_short) return;

  std::int64_t largest_host = 0, largest_device = 0;
  for (const RankNeeds& r : all) {
    largest_host = std::max(largest_host, r.host_peak);
    largest_device = std::max(largest_device, r.device_peak);
  }
  auto plural = [](int n) { return n > 1 ? "s" : ""; };
  std::ostringstream message;
  message << "not enough memory for this run (" << plan.shape.global_rows << " rows, " << plan.shape.global_nnz
          << " nonzeros, " << ranks << " rank" << plural(ranks) << "): ";
  if (host_short)
    message << "it needs up to " << format_bytes(double(largest_host)) << " of host memory per rank, "
            << format_bytes(double(host.need)) << " for the " << host.ranks << " rank" << plural(host.ranks)
            << " on the node of rank " << host.leader << ", which has " << format_bytes(double(host.capacity))
            << " available" << (device_short ? "; " : "");
  if (device_short)
    message << "it needs up to " << format_bytes(double(largest_device)) << " of device memory per rank, "
            << format_bytes(double(gpu_side.need)) << " for the " << gpu_side.ranks << " rank" << plural(gpu_side.ranks)
            << " on the GPU of rank " << gpu_side.leader << ", which has " << format_bytes(double(gpu_side.capacity))
            << " free";
  const std::int64_t host_per_rank = host.per_rank, device_per_rank = gpu_side.per_rank;
  // How many ranks would do, with nodes and GPUs like these (as crowded as the most crowded here).
  const int enough = ranks_that_fit(ranks, [&](int r) {
    const MemoryPlan p = plan_at(r);
    return (!on_host || p.host_peak <= host_per_rank) && (!on_device || p.device_peak <= device_per_rank);
  });
  const std::string host_share = format_bytes(double(host_per_rank)) + " of host memory";
  const std::string device_share = format_bytes(double(device_per_rank)) + " of a GPU's";
  if (enough > 0)
    message << ". About " << enough << " ranks would fit it, each with "
            << (on_host && on_device ? host_share + " and " + device_share
                : on_host            ? host_share
                                     : device_share)
            << " as here ('block-eigs --dry-run' or 'block-cg --dry-run' at that rank count shows its plan)";
  else if (!on_host || plan.host_replicated <= host_per_rank)
    message << ". Not even " << (1 << 20) << " ranks would fit it";
  else
    message << ". No number of ranks would fit it: every rank holds " << format_bytes(double(plan.host_replicated))
            << " whatever the rank count (the whole matrix's row offsets while loading, or its whole Matrix "
               "Market file), more than the "
            << format_bytes(double(host_per_rank)) << " of host memory a rank has here";
  fail_input_everywhere(message.str());
}

template <class T>
RankShape measured_shape(const DistributedOperator<T>& op, std::int64_t global_nnz) {
  RankShape s;
  s.global_rows = op.global_rows();
  s.global_nnz = global_nnz;
  s.local_rows = op.local_rows();
  s.local_nnz = op.local_nnz();
  s.off_diagonal_nnz = op.off_diagonal_nnz();
  s.off_diagonal_rows = op.off_diagonal_rows();
  s.halo_rows = op.halo_plan().halo_rows();
  s.packed_rows = op.halo_plan().packed_rows();
  s.neighbours = static_cast<std::int64_t>(op.halo_plan().recv_ranks.size());
  s.exact = true;
  return s;
}

template <class V>
RankShape measured_shape(MPI_Comm comm, const CsrRowsOf<V>& rows, const RowPartition& partition,
                         std::int64_t global_nnz) {
  const LocalBlockShape blocks = collectively(comm, [&] { return local_block_shape(rows); });
  const HaloPlan halo = build_halo_plan(comm, partition, blocks.halo_columns);
  RankShape s;
  s.global_rows = partition.global_rows();
  s.global_nnz = global_nnz;
  s.local_rows = rows.local_rows();
  s.local_nnz = rows.nnz();
  s.off_diagonal_nnz = blocks.off_diagonal_nnz;
  s.off_diagonal_rows = blocks.off_diagonal_rows;
  s.halo_rows = halo.halo_rows();
  s.packed_rows = halo.packed_rows();
  s.neighbours = static_cast<std::int64_t>(halo.recv_ranks.size());
  s.exact = true;
  return s;
}

template RankShape measured_shape(MPI_Comm, const CsrRows&, const RowPartition&, std::int64_t);
template RankShape measured_shape(MPI_Comm, const ComplexCsrRows&, const RowPartition&, std::int64_t);
#define BLOCKEIGS_SHAPE(T) template RankShape measured_shape(const DistributedOperator<T>&, std::int64_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SHAPE)
#undef BLOCKEIGS_SHAPE

}  // namespace blockeigs::solver
