// Vocabulary shared by the config (io/), the kernels (spmm/) and the solvers.
// Kept here so that io/ can name an algorithm or a solver option without
// including spmm/ or solver/. to_string gives each value's config spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/scalar.hpp"

namespace blockeigs {

// Where memory lives. Every API that takes data says which space.
enum class Space { host, device };

// Local SpMM algorithms. Dispatch is always on this enum, never on strings.
enum class Algorithm { reference, row_split, merge_based, cusparse, automatic };

// Which machine runs the solver; automatic picks CUDA when a GPU is present.
enum class Backend { cpu, cuda, automatic };

enum class Precision { fp32, fp64 };

// Which end of the spectrum an eigensolver looks for (eigensolver.which).
enum class SpectrumEnd { smallest, largest };

// How an eigensolver judges a residual converged (eigensolver.convergence_test);
// solver/lobpcg/lobpcg.hpp states the two tests.
enum class StoppingTest { backward, relative };

// The precision LOBPCG stores its raw search block in (eigensolver.search_precision);
// solver/lobpcg/lobpcg.hpp says what each choice does.
enum class SearchPrecision { automatic, fp64, fp32 };

// A preconditioner writes the search block itself, in the blocks' precision,
// so fp32 beside fp64 blocks is had only without one. The config and lobpcg
// both refuse `precision` with a preconditioner where this is false, saying
// why after the key's name.
constexpr bool search_precision_allows_preconditioner(SearchPrecision precision) {
  return precision != SearchPrecision::fp32;
}
inline constexpr std::string_view search_precision_needs_no_preconditioner =
    "fp32 needs preconditioner: none (a preconditioner writes the search block itself, in the blocks' precision); "
    "use fp64 or auto";

// The preconditioner an app builds for its solver (eigensolver.preconditioner,
// block_cg.preconditioner); the solvers take a solver::Preconditioner object.
// chebyshev: a polynomial in A (solver/precond/chebyshev_preconditioner.hpp);
// petsc: a PETSc PC (solver/precond/petsc_pc.hpp); automatic (an eigensolver's
// default): what the measurements say for the end it wants
// (solver/precond/preconditioner_options.hpp, resolve_preconditioner).
enum class PreconditionerKind { none, jacobi, chebyshev, petsc, automatic };

// The Chebyshev preconditioner's degree (operator products per apply) is
// 1 to this; higher degrees cost more products than they save iterations.
inline constexpr int max_chebyshev_degree = 100;

// The precision the Chebyshev polynomial runs in (the preconditioner's
// `precision`); solver/precond/chebyshev_preconditioner.hpp says what each does.
enum class ChebyshevPrecision { automatic, fp64, fp32 };

// How the rows are distributed over the ranks (execution.partition):
// contiguous ranges of the input's numbering, a graph partition of the
// matrix (rows renumbered behind the user's back), or automatic: the graph
// partition where the contiguous split's halo is large.
enum class PartitionMethod { automatic, contiguous, graph };

// The order of each rank's rows within its range (execution.local_order): as
// they came, a bandwidth-reducing (band) ordering of the rank's own graph,
// or automatic: band after a graph partition or where the order is scattered.
enum class LocalOrder { automatic, none, band };

// How a window's eigenvalues are counted (eigensolver.count): by the inertia
// of LDL^T factorizations (exact; PETSc with MUMPS), by the density of
// states' estimate, or automatic: the inertia where the build has it and the
// matrix is small enough for a factorization to be cheap beside the solve.
enum class WindowCount { automatic, inertia, density };

// How a distributed operator's halo rows travel (execution.halo.transport;
// solver/operator/halo/halo_transport.hpp says what each does).
enum class HaloTransport {
  automatic,   // the rules of solver::make_halo_exchange
  mpi,         // MPI on the blocks' own memory (host, or device with CUDA-aware MPI)
  staged_mpi,  // MPI through pinned host copies
  peer,        // CUDA IPC copies between GPUs of one node, MPI tokens
  nccl,        // NCCL sends and receives between GPUs (builds with NCCL)
};

// The staged MPI halo's message pieces (execution.halo.piece_bytes) and the
// largest MPI message (execution.mpi_chunk_bytes; MPI counts are int), by default.
inline constexpr std::int64_t default_halo_piece_bytes = std::int64_t{1} << 20;
inline constexpr std::int64_t default_mpi_chunk_bytes = std::int64_t{1} << 30;

// The precision of an element type: float (and std::complex<float>) is fp32,
// double (and std::complex<double>) fp64.
template <class T>
constexpr Precision precision_of() {
  return sizeof(real_t<T>) == 4 ? Precision::fp32 : Precision::fp64;
}

std::string_view to_string(Space space);
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(Backend backend);
std::string_view to_string(Precision precision);
std::string_view to_string(SpectrumEnd end);
std::string_view to_string(StoppingTest test);
std::string_view to_string(SearchPrecision precision);  // "auto", "fp64", "fp32"
std::string_view to_string(PreconditionerKind kind);
std::string_view to_string(ChebyshevPrecision precision);  // "auto", "fp64", "fp32"
std::string_view to_string(PartitionMethod method);        // "auto", "contiguous", "graph"
std::string_view to_string(LocalOrder order);              // "auto", "none", "band"
std::string_view to_string(WindowCount count);             // "auto", "inertia", "density"
std::string_view to_string(HaloTransport transport);       // "auto", "mpi", "staged", "ipc", "nccl"

std::optional<Algorithm> parse_algorithm(std::string_view name);
std::optional<Backend> parse_backend(std::string_view name);
std::optional<Precision> parse_precision(std::string_view name);

}  // namespace blockeigs
