// A window's memory plan (solver::WindowMemory: the largest slice's blocks
// and the pairs it will hold) beside what the rank holds once the operators
// are built, checked against the free memory before the first slice.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>

#include "core/csr_rows.hpp"
#include "dense/context.hpp"
#include "solver/plan/memory_plan.hpp"
#include "solver/window/window.hpp"

namespace blockeigs::solver {

// The plan of this rank: the rows it holds (`rows`, of a global_rows x global_rows matrix with global_nnz
// nonzeros) and the Buffers held now, then the window's blocks in the operator's memory. Refuses on every
// rank (AgreedError naming eigensolver.interval) where some rank's share does not fit the free memory or
// `memory_limit` (execution.memory_limit_bytes), naming how many ranks would do. Real or complex rows.
// Collective.
template <class V>
MemoryPlan check_window_memory(const WindowMemory& window, const CsrRowsOf<V>& rows, std::int64_t global_rows,
                               std::int64_t global_nnz, const dense::Context& context, MPI_Comm comm,
                               std::optional<std::int64_t> memory_limit);

}  // namespace blockeigs::solver
