#include "solver/plan/window_memory.hpp"

#include <cmath>
#include <string>

#include "dense/memory.hpp"
#include "solver/base/collective.hpp"
#include "solver/plan/memory_check.hpp"

namespace blockeigs::solver {
namespace {

MemoryPlan window_plan(const WindowMemory& m, const RankShape& shape, Space space, std::int64_t host_held,
                       std::int64_t device_held) {
  const bool device = space == Space::device;
  const auto in_space = [&](const std::string& what, std::int64_t bytes) {
    return MemoryItem{what, device ? 0 : bytes, device ? bytes : 0};
  };
  MemoryPlan plan;
  plan.space = space;
  plan.shape = shape;
  plan.items.push_back(
      {"held before the slices: the matrix's rows, the operators (A's, its group's copy)", host_held, device_held});
  const std::int64_t columns = m.rows * m.value_bytes;
  const std::int64_t blocks = m.device ? 4 : 3;
  plan.items.push_back(in_space("window: the largest slice's V, A V and scratch" +
                                    std::string(m.device ? " and the copy locking permutes" : "") + " (" +
                                    std::to_string(m.block) + " columns each)",
                                blocks * columns * m.block));
  if (m.mixed)
    plan.items.push_back(in_space("window: the slice's fp32 blocks", m.rows * m.value_bytes / 2 * 3 * m.block));
  plan.items.push_back(
      in_space("window: the pairs found (" + std::to_string(m.pairs) +
                   " columns; at the end beside the result they are gathered into, once the slices' blocks are freed)",
               columns * m.pairs));
  // Buffers: the operator's memory's (the host's Buffers on the CPU backend are in host_held).
  plan.buffers_peak = (device ? device_held : dense::memory_counters(Space::host).current) + m.bytes();
  if (device) {
    plan.items.push_back(
        {"libraries' work space (cuBLAS, cuSOLVER, cuSPARSE, kernel scratch), allowance", 0, device_library_allowance});
    plan.device_peak = device_held + m.bytes() + device_library_allowance;
    plan.host_peak = host_held;
  } else {
    plan.host_peak = host_held + m.bytes();
  }
  return plan;
}

}  // namespace

template <class V>
MemoryPlan check_window_memory(const WindowMemory& window, const CsrRowsOf<V>& rows, std::int64_t global_rows,
                               std::int64_t global_nnz, const dense::Context& context, MPI_Comm comm,
                               std::optional<std::int64_t> memory_limit) {
  const Space space = context.space();
  const auto loaded = static_cast<std::int64_t>(8 * (rows.row_offsets.size() + rows.col_indices.size()) +
                                                sizeof(V) * rows.values.size());
  // What this rank holds already counts as the plan's: the rows, the Buffers (host and device).
  const std::int64_t host_held = loaded + dense::memory_counters(Space::host).current;
  const std::int64_t device_held = space == Space::device ? dense::memory_counters(Space::device).current : 0;
  RankShape shape;  // the matrix's size, for the message
  shape.global_rows = global_rows;
  shape.global_nnz = global_nnz;
  const MemoryPlan plan = window_plan(window, shape, space, host_held, device_held);
  int ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  // At `r` ranks every share scales by ranks / r.
  const auto plan_at = [&](int r) {
    const double f = double(ranks) / double(r);
    WindowMemory m = window;
    m.rows = static_cast<std::int64_t>(std::ceil(double(window.rows) * f));
    return window_plan(m, shape, space, static_cast<std::int64_t>(double(host_held) * f),
                       static_cast<std::int64_t>(double(device_held) * f));
  };
  try {
    check_memory_fits(comm, plan, host_held, device_held, context.device(), plan_at, memory_limit);
  } catch (const AgreedError& e) {  // every rank has it
    throw AgreedError(std::string("eigensolver.interval: the window's slices (the largest a block of ") +
                          std::to_string(window.block) + " columns, " + std::to_string(window.pairs) +
                          " pairs in all) do not fit: " + e.what(),
                      e.is_input_error());
  }
  return plan;
}

template MemoryPlan check_window_memory(const WindowMemory&, const CsrRows&, std::int64_t, std::int64_t,
                                        const dense::Context&, MPI_Comm, std::optional<std::int64_t>);
template MemoryPlan check_window_memory(const WindowMemory&, const ComplexCsrRows&, std::int64_t, std::int64_t,
                                        const dense::Context&, MPI_Comm, std::optional<std::int64_t>);

}  // namespace blockeigs::solver
