// The memory a rank needs for a run, estimated before it allocates: the
// matrix as loaded on the host, its diagonal and off-diagonal blocks and the
// halo buffers in the operator's memory, the solver's blocks, and the host
// copies of the output. Sizes follow the code that allocates them
// (solver/operator, solver/lobpcg/lobpcg_iteration.hpp, solver/cg/block_cg.cpp,
// apps/); `buffers` is the part held in dense::Buffer, which
// dense::memory_counters measures, so the model can be checked against a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/enums.hpp"
#include "solver/precond/preconditioner_memory.hpp"

namespace blockeigs::solver {

// One rank's share of the matrix: estimated from the matrix's size alone
// (rows and nonzeros split evenly, halo unknown) or measured once the rows
// are loaded and the halo plan is built (`exact`).
struct RankShape {
  std::int64_t global_rows = 0, global_nnz = 0;
  std::int64_t local_rows = 0, local_nnz = 0;
  std::int64_t off_diagonal_nnz = 0, off_diagonal_rows = 0;
  std::int64_t halo_rows = 0, packed_rows = 0, neighbours = 0;
  bool exact = false;
};

// The largest rank's share when `ranks` split `rows` x `nnz` evenly (what a
// partition balanced by nonzeros plus rows gives a uniform matrix).
RankShape even_share(std::int64_t rows, std::int64_t nnz, int ranks);

// How the rows reach the rank, which decides what the host holds while loading.
enum class MatrixOrigin { generator, hdf5, matrix_market };
struct MatrixSourceSize {
  MatrixOrigin origin = MatrixOrigin::generator;
  bool symmetric_by_construction = true;  // else the rows are checked for symmetry
  // Matrix Market only: every rank parses the whole file.
  std::int64_t text_bytes = 0;      // the file's text, uncompressed
  std::int64_t stored_entries = 0;  // entries after a symmetric file's expansion
};

// The solver and what the app keeps beside it.
struct SolverShape {
  enum class Kind { lobpcg, block_cg, chebyshev_filter } kind = Kind::lobpcg;
  int value_bytes = 8;                         // the blocks' values (4 or 8; complex: 8 or 16)
  bool complex = false;                        // the matrix's values complex: its rows loaded as complex double
  std::int64_t columns = 0;                    // LOBPCG: k; block CG: right-hand sides
  std::int64_t block = 0;                      // LOBPCG's block size nb; the filter's block m
  std::int64_t alignment = 1;                  // LOBPCG: [X P] and Z span multiples of this many columns
  bool preconditioner = false;                 // any (block CG then keeps its Z block)
  PreconditionerMemory preconditioner_memory;  // what it holds (solver::preconditioner_memory)
  bool norm_estimate = false;                  // LOBPCG's backward test: two vectors for the power method
  std::int64_t start_columns = 0;       // LOBPCG: a start block (read from a file, or random for the input's rows)
  bool generalized = false;             // LOBPCG on A x = lambda B x: B [X P] and B W beside [X P] and W
  bool mixed_filter = false;            // the filter's fp32 copy of A and its fp32 blocks (chfsi.hpp)
  std::int64_t constraint_columns = 0;  // LOBPCG: the constraint block Y (and B Y)
  bool known_solution = false;          // block CG: the known X beside B
  bool output = false;                  // results written: host copies of the big block
  bool output_rhs = false;              // block CG: its generated right-hand sides written too, beside the solution
  bool output_renumbered = true;        // the operator's numbering is not the input's (unknown before loading: assumed)
};

// A second matrix on the first's rows (B of A x = lambda B x): its share
// (A's rows, its own nonzeros and halo) and how it reaches the rank.
struct SecondMatrix {
  RankShape shape;
  MatrixSourceSize source;
};

// cuBLAS's and cuSOLVER's work space, cuSPARSE's buffers and the stream-ordered scratch of the block kernels:
// not Buffers, so not counted, and a few tens of MiB whatever the problem; a plan allows this much.
inline constexpr std::int64_t device_library_allowance = 96ll << 20;

// Results reach their file in pieces of this many bytes where they are not
// written straight from the solver's block (apps/run/output/distributed_output.hpp).
inline constexpr std::int64_t output_piece_bytes = std::int64_t{16} << 20;

// LOBPCG's shape: k, the block size (0: automatic), the test and the
// precision as the solver resolves them (lobpcg.hpp). The preconditioner's
// memory is the caller's to set (preconditioner_memory).
SolverShape lobpcg_shape(int k, int block_size, bool backward_test, bool preconditioner, int value_bytes, Space space,
                         std::int64_t global_rows);

// Chebyshev-filtered subspace iteration's shape: k and its block (0: automatic; chfsi.hpp), its filter mixed
// as the solver resolves search_precision (filter_mixed).
SolverShape filter_shape(int k, int block_size, int value_bytes, std::int64_t global_rows, SearchPrecision precision,
                         Space space);

// One line of the plan: bytes in plain host memory (std::vector) and in the
// operator's memory (the GPU's, or the host's on the CPU backend).
struct MemoryItem {
  std::string what;
  std::int64_t host = 0;
  std::int64_t operator_space = 0;
};

struct MemoryPlan {
  RankShape shape;
  Space space = Space::host;      // the operator's memory
  std::vector<MemoryItem> items;  // everything the run allocates at some point
  // The most held at once, by phase: loading (rows, offsets, a Matrix Market
  // file), building the operator (the split blocks beside the rows), solving.
  std::int64_t host_peak = 0;
  std::int64_t device_peak = 0;  // 0 on the CPU backend
  // The peak of what Buffers hold in the operator's space (solving): what
  // dense::memory_counters(space).peak measures.
  std::int64_t buffers_peak = 0;
  // What stays the same however many ranks share the work (every rank's copy
  // of the row offsets or of a Matrix Market file).
  std::int64_t host_replicated = 0;
};

// `b`: B of A x = lambda B x, held and applied beside A (none: B = I).
MemoryPlan plan_memory(const RankShape& shape, const MatrixSourceSize& source, const SolverShape& solver, Space space,
                       const SecondMatrix* b = nullptr);

// "1.25 GiB", "312.0 MiB", "4.0 KiB", "17 B".
std::string format_bytes(double bytes);

// The plan's items and peaks, one line each, indented by two spaces.
std::string describe(const MemoryPlan& plan);

}  // namespace blockeigs::solver
