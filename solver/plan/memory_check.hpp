// Whether a memory plan fits, and each rank's share of a matrix measured for
// it. The host's memory is the node's, shared by the ranks on it
// (MPI_COMM_TYPE_SHARED); a device's is shared by the ranks that use it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "core/csr_rows.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/row_partition.hpp"
#include "solver/plan/memory_plan.hpp"

namespace blockeigs::solver {

// This node's available host memory: MemAvailable (/proc/meminfo, else
// sysconf), within the cgroup's limit where one is set (memory.max).
std::int64_t available_host_memory();

// Collective. Refuses the run (AgreedError, the same message on every rank)
// when some node's ranks need more host memory than it has, or some
// device's ranks more than it has: the plan's peaks against what is free now
// plus what this rank already holds of the plan (`host_held`, `device_held`:
// the rows it loaded, the Buffers it allocated). The message names the
// largest need per rank, what is available, and how many ranks would do,
// from `plan_at(ranks)` (the plan with the rows split over that many ranks).
// `memory_limit` (execution.memory_limit_bytes), where given, caps what every
// node's host and every device is taken to have (bytes; every rank passes the same).
// `sides` checks the host's memory or the device's alone: the host's before
// the rows are read, the device's once its context is made (StartingContext).
enum class MemorySides { both, host, device };
void check_memory_fits(MPI_Comm comm, const MemoryPlan& plan, std::int64_t host_held, std::int64_t device_held,
                       int device, const std::function<MemoryPlan(int ranks)>& plan_at,
                       std::optional<std::int64_t> memory_limit = std::nullopt, MemorySides sides = MemorySides::both);

// This rank's share, measured: from a built operator, or (without one, for
// a dry run) by splitting the loaded rows and building the halo plan. Collective.
template <class T>
RankShape measured_shape(const DistributedOperator<T>& op, std::int64_t global_nnz);
template <class V>
RankShape measured_shape(MPI_Comm comm, const CsrRowsOf<V>& rows, const RowPartition& partition,
                         std::int64_t global_nnz);

}  // namespace blockeigs::solver
