// The C++ surface the Python module calls. It names one library type, the
// keyword tree of config/keywords.hpp (plain data: the arguments' road into the
// readers that read a config file's sections, so that a check and its message
// are a config's); every call into the library (loading and distributing rows,
// the operator, the preconditioners, LOBPCG and block CG and their options and
// results) is in facade*.cpp, so that a change of the library's API is a change
// there only.
// Every function is collective over its matrix's communicator unless it says
// otherwise; errors are agreed on by all ranks before they are thrown.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/keywords.hpp"

namespace blockeigs::python {

// The library's input errors (a bad matrix, a bad option), the same message on
// every rank: ValueError in Python.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Everything else the library throws (MPI, CUDA, HDF5 failures): RuntimeError.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An MPI communicator's handle as an integer (mpi4py's MPI._handleof(comm)).
using CommHandle = std::uintptr_t;

// MPI_Init_thread (MPI_THREAD_FUNNELED) where MPI is not yet initialised;
// true when this call initialised it (the caller then finalises at exit).
bool initialize_mpi();
// MPI_Get_library_version's text: the MPI this module was built and linked with (callable before MPI_Init).
std::string mpi_library();
void finalize_mpi();  // where initialised and not yet finalised
CommHandle comm_world();
int comm_rank(CommHandle comm);
int comm_size(CommHandle comm);
bool cuda_compiled();  // the CUDA backend is built in
// Throws InputError on every rank, with the lowest rank's message, where any
// rank's `message` is not empty: a check of data that differs between ranks.
void agree_on_input(CommHandle comm, const std::string& message);
// Every rank's rows of a host block (row-major, `cols` columns), in rank order, on every rank.
std::vector<double> allgather_rows(CommHandle comm, const std::vector<double>& rows, std::int64_t cols);
std::string version();

// RowPartition::balanced: where each of `ranks` ranks' rows start (ranks + 1
// entries), from the global row offsets, as the apps split a matrix. Local.
std::vector<std::int64_t> balanced_partition(const std::int64_t* row_offsets, std::int64_t rows, int ranks);

// A dense block the caller owns: row-major, leading dimension `ld` elements,
// in host or device memory; complex: data holds (re, im) pairs, `ld` counted in complex values.
struct BlockRef {
  const double* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  bool device = false;
  bool complex = false;
};

// A block the library allocated; `keep` owns its memory. Complex values: data
// holds rows x cols (re, im) pairs, ld counted in complex values.
struct OwnedBlock {
  double* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  bool device = false;
  bool complex = false;
  int device_id = 0;
  std::shared_ptr<void> keep;
};

// Where this rank's rows are in the operator's numbering against the input's.
struct Numbering {
  std::int64_t input_first = 0, input_rows = 0;  // this rank's range of the input's rows
  std::int64_t rows = 0;                         // this rank's rows in the operator's numbering
  bool identity = true;                          // the same rows in the same order
  bool stay_on_rank = true;  // on every rank, its operator rows are its own input rows (reordered at most)
  // For each operator row of this rank, its input row (global); empty for the identity.
  std::vector<std::int64_t> input_row;
};

// A config section's keys given by keyword (Python's arguments, by their
// config spelling) and the caller's name for messages ("blockeigs.lobpcg").
struct Section {
  cfg::Keywords keywords;
  std::string source;
};

// A CSR matrix every rank holds whole (a SciPy or CuPy matrix's arrays): host
// or device memory, int32 or int64 indices (both the same), fp64 values or
// complex128 ones (nnz (re, im) pairs, NumPy's layout).
struct CsrArrays {
  std::int64_t n = 0, nnz = 0;  // n x n
  const void* offsets = nullptr;
  const void* columns = nullptr;
  bool wide = false;  // int64 indices
  const double* values = nullptr;
  bool complex = false;
  bool device = false;
  int device_id = 0;
};

// A symmetric (or, with complex values, Hermitian) matrix distributed by rows:
// each rank's rows of the input (a contiguous range), and, once distributed
// (distribute), the rows as the operator holds them. Complex rows stay as
// given (partition contiguous, local order none).
class Matrix {
 public:
  // This rank's rows [first_rows[rank], first_rows[rank + 1]) of `whole`,
  // checked where the arrays are (on the device for device arrays: offsets,
  // columns in range and ascending within rows, finite values, symmetry;
  // the host check's messages). Host arrays are copied into the rank's rows;
  // device arrays are read in place, never copied to the host, and must
  // outlive the Matrix: the operator is split from them on the device where
  // the distribution keeps the input's rows (partition auto or contiguous,
  // local order auto or none, backend not cpu, the context's device the
  // arrays'); otherwise the rank's rows are copied to the host once and take
  // the host path (so is B of a pencil).
  static std::shared_ptr<Matrix> from_replicated(CommHandle comm, const CsrArrays& whole,
                                                 std::vector<std::int64_t> first_rows, const std::string& description);
  // This rank's rows [first_row, first_row + local rows) of an n x n matrix,
  // CSR with global column indices. Checked (offsets, column range, finite
  // values, ranges of the ranks forming a partition of the rows, symmetry).
  static std::shared_ptr<Matrix> from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                           std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                           std::vector<double> values, const std::string& description);
  // The same with complex values, checked Hermitian (solver::check_hermitian's messages).
  static std::shared_ptr<Matrix> from_rows(CommHandle comm, std::int64_t n, std::int64_t first_row,
                                           std::vector<std::int64_t> row_offsets, std::vector<std::int64_t> columns,
                                           std::vector<std::complex<double>> values, const std::string& description);
  // The library's HDF5 reader (each rank reads its balanced range), checked as the apps check it (real or
  // complex values, as the file holds them).
  static std::shared_ptr<Matrix> load(CommHandle comm, const std::string& file, const std::string& group);
  // A Matrix on a duplicate of `comm` (MPI errors returned) that holds no rows yet: the constructors' start.
  static std::shared_ptr<Matrix> empty(CommHandle comm);
  ~Matrix();

  std::int64_t global_rows() const;
  std::int64_t global_nnz() const;
  std::int64_t first_row() const;  // this rank's input range
  std::int64_t local_rows() const;
  const std::string& description() const;
  CommHandle comm() const;
  bool complex() const;  // complex values (A = A^H)

  // Distributes the rows by `execution`'s partition and local order (the
  // execution section's keys; kept for the next call with the same ones); the
  // numbering that results.
  Numbering distribute(const Section& execution);
  // Whether the last distribute kept the rows on the device (from_replicated with device arrays).
  bool distributed_on_device() const;
  // The partition and local order used and why, in a line ("contiguous (auto: ...), local order none").
  std::string distribution_summary() const;
  // Host blocks moved between the input's numbering (this rank's input rows)
  // and the operator's (this rank's operator rows), after distribute.
  std::vector<double> to_input_order(const std::vector<double>& block, std::int64_t cols) const;
  std::vector<double> from_input_order(const std::vector<double>& block, std::int64_t cols) const;

  struct Impl;
  std::unique_ptr<Impl> impl;

 private:
  Matrix();
};

// Seconds: set-up (distribution, operators, preconditioner) and solve.
struct Timings {
  double setup = 0, solve = 0;
  std::vector<std::pair<std::string, double>> phases;  // the solver's own split of the solve
};

struct EigsRequest {
  // The config's eigensolver keys (k, tolerance, which, preconditioner, ...)
  // and execution keys, read by the config's own readers.
  Section eigensolver, execution;
  std::optional<BlockRef> start, constraints;  // the operator's numbering, this rank's rows
  // Polled between iterations on every rank (with the GIL taken by the
  // caller's function); the ranks agree, and a true on any rank stops the run.
  std::function<bool()> interrupted;
};

// A window's (eigensolver.interval) counts and slices.
struct WindowSlice {
  double lower = 0, upper = 0, expected = 0, expected_error = 0;
  std::int64_t certified = -1;  // by inertia, or -1
  int found = 0, block = 0, degree = 0, iterations = 0;
  double seconds = 0;
  bool complete = false;
  int group = 0, merged = 0;  // the group of ranks that solved it; pairs at its lower end merged away
};
struct WindowSummary {
  double lower = 0, upper = 0;
  std::int64_t count = 0;                             // the pairs found
  std::string count_method;                           // "inertia (MUMPS ...)" or "density", with why
  std::int64_t certified = -1, certified_below = -1;  // by inertia, or -1
  double expected = 0, expected_error = 0;            // the density of states' count and its standard error
  double spectrum_lower = 0, spectrum_upper = 0;      // the bounds A was scaled by
  int groups = 1;                                     // the groups of ranks the slices ran on
  std::vector<WindowSlice> slices;
};

struct EigsResult {
  std::vector<double> eigenvalues, residual_norms, relative_residuals;
  std::vector<bool> converged;
  int iterations = 0, block_size = 0;
  std::string stop;  // converged, iteration_limit, diverged, stagnated, below_floor, no_search_direction, interrupted
  std::string preconditioner;  // what was built
  std::string method;          // the eigensolver and why: "chebyshev_filter (auto: k = 200 >= 64, ...)"
  std::vector<std::vector<double>> history_eigenvalues, history_residual_norms;
  Timings timings;
  std::optional<WindowSummary> window;  // with eigensolver.interval
  OwnedBlock eigenvectors;              // this rank's operator rows x k, in the backend's memory
};

// A (and B for A x = lambda B x, null for B = I) distributed as `request`'s
// execution says (B like A). A complex A takes Chebyshev-filtered subspace
// iteration on A x = lambda x (what a complex run takes so far; every other
// setting refused naming it) and gives complex eigenvectors.
EigsResult lobpcg(Matrix& a, Matrix* b, const EigsRequest& request);

struct CgRequest {
  Section block_cg, execution;    // the config's block_cg keys (rtol, atol, ...) and execution keys
  BlockRef rhs;                   // the operator's numbering, this rank's rows
  std::optional<BlockRef> start;  // the same shape as rhs; none: zeros
  std::function<bool()> interrupted;
};

struct CgResult {
  std::vector<int> iterations;
  std::vector<bool> converged;
  std::vector<double> rhs_norms, residual_norms, true_residual_norms;
  int total_iterations = 0;
  std::string stop;  // converged, iteration_limit, stagnated, no_search_direction, interrupted
  std::string preconditioner;
  std::vector<std::vector<double>> history;  // per iteration, every column's ||r|| / ||b||
  Timings timings;
  OwnedBlock solution;
};

CgResult cg(Matrix& a, const CgRequest& request);

}  // namespace blockeigs::python
