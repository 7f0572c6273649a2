// The pieces the facade's files share (python/src/facade*.cpp, not the
// module): MPI handles, the library's exceptions as the module's two kinds,
// the execution reader, the caller's blocks in and the library's out, the
// preconditioner, the stop request, the operator of a distributed Matrix and
// the Matrix's state.
#pragma once

#include "python/src/facade.hpp"

#include <mpi.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/checks.hpp"
#include "core/enums.hpp"
#include "core/error.hpp"
#include "config/keywords.hpp"
#include "config/run_config.hpp"
#include "core/csr_rows.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/eigen_method.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/precond/preconditioner_options.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::python {

struct Matrix::Impl {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the caller's, errors returned
  solver::DistributedRows input;  // this rank's input rows (contiguous ranges)
  std::optional<solver::DistributedRows> distributed;
  std::pair<PartitionMethod, LocalOrder> distributed_by{};
  // from_replicated with device arrays: the caller's arrays; input.rows stays
  // empty until a host path needs the rank's rows (host_input).
  std::optional<solver::ReplicatedCsr> replicated;
  bool host_copied = false;
  bool on_device = false;  // distributed holds no rows: the operator splits `replicated`

  // The input with this rank's rows on the host (copied from the device once, where they are there).
  solver::DistributedRows& host_input() {
    if (replicated && !host_copied) {
      if (input.complex)
        input.complex_rows = solver::host_complex_rows(*replicated);
      else
        input.rows = solver::host_rows(*replicated);
      host_copied = true;
    }
    return input;
  }

  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};

namespace internal {

// MPI_Comm is a pointer in Open MPI and an int in MPICH: a template, so that
// only the branch of this MPI is compiled.
template <class Comm = MPI_Comm>
Comm to_comm(CommHandle handle) {
  if constexpr (std::is_pointer_v<Comm>)
    return reinterpret_cast<Comm>(handle);
  else
    return static_cast<Comm>(handle);
}

template <class Comm = MPI_Comm>
CommHandle to_handle(Comm comm) {
  if constexpr (std::is_pointer_v<Comm>)
    return reinterpret_cast<CommHandle>(comm);
  else
    return static_cast<CommHandle>(comm);
}

// The library's exceptions as the module's two kinds.
template <class Step>
auto translated(Step&& step) -> decltype(step()) {
  try {
    return step();
  } catch (const solver::AgreedError& e) {
    if (e.is_input_error()) throw InputError(e.what());
    throw Error(e.what());
  } catch (const blockeigs::InputError& e) {
    throw InputError(e.what());
  } catch (const InputError&) {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

int rank_of(MPI_Comm comm);

// The execution keys a request names, read by the config's own reader (a bad
// value gets a config's message). Collective.
cfg::ExecutionConfig read_execution(const Section& execution, MPI_Comm comm);

double now();

// A caller's block as a view in `space`: its own memory where it is there already, else a copy in `copy`.
// T: double, or std::complex<double> (the block must be complex then, and real for double).
template <class T>
dense::ConstDenseView<T> in_space(const BlockRef& block, Space space, std::optional<dense::DenseBlock<T>>& copy,
                                  const char* name);

// The preconditioner eigensolver.preconditioner describes, on `op` (null for none); T double or complex<double>.
template <class T>
std::unique_ptr<solver::Preconditioner<T>> make_preconditioner(const solver::PreconditionerOptions& config,
                                                               solver::LinearOperator<T>& op, SpectrumEnd end,
                                                               bool eigensolver, std::string& description);

// The library's block, kept alive by the OwnedBlock the caller gets (double or complex<double>).
template <class T>
OwnedBlock own(dense::DenseBlock<T>&& block, const dense::Context& context);

// Between iterations: whether any rank's caller asks to stop. Collective.
std::function<bool()> agreed_stop(const std::function<bool()>& interrupted, MPI_Comm comm);

// A's operator on `context`: split from the device arrays in place where distribute kept them there and
// the context runs on their device (every rank agreeing), else from the rows on the host (a device input's
// rows copied there now; the numbering stays the input's). Collective.
// T: double, or std::complex<double> for a complex matrix.
template <class T>
std::unique_ptr<solver::DistributedOperator<T>> make_operator(Matrix& a, const dense::Context& context);

// The pairs, their residuals, the history and the solver's phase times of r, into out (not the eigenvectors).
template <class T>
void copy_result(const solver::LobpcgResult<T>& r, EigsResult& out);

// lobpcg's request with eigensolver.interval: every pair in the window (facade_window.cpp). T: double, or
// std::complex<double> for a complex matrix (counted by the density: count 'inertia' refused).
template <class T>
EigsResult window_pairs(Matrix& a, const Matrix* b, const EigsRequest& request,
                        const cfg::EigensolverSettings& settings, double begin);

// A phase's time, by name, in `t`.
void add_phase(Timings& t, const char* name, double seconds);

// solve() between two synchronisations of the context's device: t.setup is the time from `begin` to the
// solve's start, t.solve the solve's own. Returns what solve() returns.
template <class Solve>
auto timed_solve(const dense::Context& context, double begin, Timings& t, Solve&& solve) {
  context.synchronize();
  const double start = now();
  t.setup = start - begin;
  auto result = solve();
  context.synchronize();
  t.solve = now() - start;
  return result;
}

}  // namespace internal
}  // namespace blockeigs::python
