#include "solver/plan/memory_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "solver/chfsi/chfsi.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/operator/local_blocks.hpp"

namespace blockeigs::solver {
namespace {

std::int64_t csr_bytes(std::int64_t rows, std::int64_t nnz, int index_bytes, int value_bytes) {
  return (rows + 1) * index_bytes + nnz * (index_bytes + value_bytes);
}

// The rows as loaded (CsrRows: int64 offsets and columns, double or complex double values).
std::int64_t loaded_rows_bytes(const RankShape& s, bool complex) {
  return csr_bytes(s.local_rows, s.local_nnz, 8, complex ? 16 : 8);
}

struct Phases {
  std::int64_t load = 0, build = 0, solve = 0;  // host, plain memory
  std::int64_t op_build = 0, op_solve = 0;      // the operator's space, Buffers
};

// A matrix ("matrix" or "matrix B"): loading, the split blocks, the operator's copies.
void add_matrix(const char* name, const RankShape& s, const MatrixSourceSize& source, const SolverShape& solver,
                Space space, std::vector<MemoryItem>& items, Phases& p, std::int64_t& replicated) {
  const int v = solver.value_bytes;
  const std::string m = name;
  const std::int64_t rows = loaded_rows_bytes(s, solver.complex);
  items.push_back(
      {m + " rows as loaded (int64 columns, " + (solver.complex ? "complex128" : "fp64") + " values)", rows, 0});
  p.load += rows;
  p.build += rows;
  p.solve += rows;
  if (source.origin != MatrixOrigin::matrix_market) {
    // Every rank holds the whole row offsets while the partition is made.
    const std::int64_t offsets = 8 * (s.global_rows + 1);
    items.push_back({"row offsets of the whole " + m + ", on every rank, while loading", offsets, 0});
    p.load += offsets;
    replicated += offsets;
  } else {
    // Every rank parses the whole file: its text, the entries, the whole CSR.
    const std::int64_t whole = source.text_bytes + 24 * source.stored_entries +
                               csr_bytes(s.global_rows, s.global_nnz, 8, solver.complex ? 16 : 8);
    items.push_back({"the whole Matrix Market file of the " + m + " parsed on every rank, while loading", whole, 0});
    p.load += whole;
    replicated += whole;
  }
  if (!source.symmetric_by_construction) {
    const std::int64_t check = 3 * 24 * s.local_nnz;  // (row, column, value) entries sent, received, kept
    items.push_back({m + ": symmetry check (entries exchanged), while loading", check, 0});
    p.load += check;
  }
  const std::int64_t diagonal_nnz = s.local_nnz - s.off_diagonal_nnz;
  const std::int64_t split = csr_bytes(s.local_rows, diagonal_nnz, 4, v) +
                             csr_bytes(s.off_diagonal_rows, s.off_diagonal_nnz, 4, v) + 4 * s.off_diagonal_rows +
                             8 * s.halo_rows + std::int64_t{v} * s.local_rows;
  items.push_back({m + ": diagonal and off-diagonal blocks, split on the host while the operator is built", split, 0});
  p.build += split;
  if (space == Space::device) {
    // The device splits instead (solver/operator/local_blocks.hpp) only where it has room for this beyond the
    // plan, so the peaks leave it out and keep the host's split.
    const std::int64_t scratch = device_split_scratch_bytes(s.local_rows, s.local_nnz, s.off_diagonal_nnz);
    items.push_back(
        {m + ": or split on the device where it has room beyond this plan (the rows as loaded, scratch)", 0, scratch});
  }

  // The operator's copies: both blocks, the diagonal entries, the off-diagonal rows.
  const std::int64_t blocks = split - 8 * s.halo_rows;
  items.push_back({m + ": diagonal and off-diagonal blocks (int32 columns)", 0, blocks});
  p.op_build += blocks;
  p.op_solve += blocks;
}

// The halo at its widest block, `width` columns of T: the rows to pack, the
// packed rows, the received rows and the off-diagonal product.
void add_halo(const RankShape& s, std::int64_t width, int v, std::vector<MemoryItem>& items, Phases& p,
              const char* of = "") {
  const std::int64_t bytes = 4 * s.packed_rows + (s.packed_rows + s.halo_rows + s.off_diagonal_rows) * width * v;
  std::ostringstream what;
  what << "halo" << of << ": send, receive and off-diagonal product at " << width << " columns";
  items.push_back({what.str(), 0, bytes});
  p.op_solve += bytes;
}

// The fp32 copy of the operator's values (both blocks, the diagonal entries)
// and its off-diagonal product at `width` columns; the index arrays are shared.
void add_preconditioner_matrix(const RankShape& s, const SolverShape& o, std::int64_t width,
                               std::vector<MemoryItem>& items, Phases& p) {
  if (!o.preconditioner_memory.matrix_copy) return;
  const std::int64_t bytes = 4 * (s.local_nnz + s.local_rows + s.off_diagonal_rows * width);
  items.push_back({"preconditioner: the matrix's values in fp32 and their halo product", 0, bytes});
  p.op_solve += bytes;
}

// Results on their way to a file (apps/run/output/input_order_block.cpp): nothing
// for fp64 on the host in the input's numbering; else a staging piece; where
// the rows are renumbered also each row's indices, a piece's exchange
// buffers and a host copy of a device block.
std::int64_t output_bytes(std::int64_t m, const SolverShape& o, Space space) {
  const std::int64_t v = o.value_bytes, staging = std::min(m * o.columns * 8, output_piece_bytes);
  const bool in_place = space == Space::host && v == 8 && !o.output_renumbered;
  std::int64_t bytes = in_place ? 0 : staging;
  if (o.output_renumbered) bytes += 3 * 8 * m + 2 * staging + (space == Space::device ? m * o.columns * v : 0);
  return bytes;
}

void add_lobpcg(const RankShape& s, const SolverShape& o, const SecondMatrix* b, std::vector<MemoryItem>& items,
                Phases& p) {
  using lobpcg_detail::round_up;
  const std::int64_t m = s.local_rows, v = o.value_bytes, nb = o.block, k = o.columns;
  const std::int64_t widest_xp = round_up(2 * nb, o.alignment), w = round_up(nb, o.alignment);
  add_halo(s, widest_xp, o.value_bytes, items, p);
  if (b) add_halo(b->shape, widest_xp, o.value_bytes, items, p, " of B");
  if (o.constraint_columns > 0) {
    // The app's Y: read as host doubles, then a block in the operator's memory that the solver copies.
    const std::int64_t c = o.constraint_columns, y = m * c * v;
    items.push_back({"constraints: Y as read and passed to LOBPCG (" + std::to_string(c) + " columns)", 8 * m * c, y});
    p.op_solve += y;
    p.solve += 8 * m * c;
  }
  // Z in fp32 holds two fp32 blocks and one fp64 copy: as many bytes as two fp64 blocks.
  const std::int64_t sas = 2 * m * 2 * widest_xp * v, z = 2 * m * w * v, aw = 2 * m * w * v;
  std::ostringstream what;
  what << "LOBPCG: [X P | A X A P] twice (" << 2 * widest_xp << " columns), Z and A W twice (" << w << " each)";
  items.push_back({what.str(), 0, sas + z + aw});
  const std::int64_t scratch = m * nb * v, kept = 2 * m * k * v;
  items.push_back({"LOBPCG: scratch block (block size), best iterate and eigenvectors (k each)", 0, scratch + kept});
  if (o.generalized || o.constraint_columns > 0) {
    const std::int64_t pencil = (o.generalized ? 2 * m * widest_xp * v + m * w * v : 0) +
                                3 * m * o.constraint_columns * v;  // Y, B Y and their set-up's scratch
    items.push_back({"LOBPCG: B [X P] twice and B W (A x = lambda B x); constraints Y, B Y", 0, pencil});
    p.op_solve += pencil;
  }
  add_preconditioner_matrix(s, o, nb, items, p);
  std::int64_t extra = 0;
  const PreconditionerMemory& pm = o.preconditioner_memory;
  extra += (pm.vector_bytes + pm.block_bytes * nb) * m;  // diagonals, Chebyshev's blocks
  if (o.norm_estimate) extra += 2 * m * v;               // the power method's two vectors
  if (o.start_columns > 0) extra += m * o.start_columns * v;
  if (extra > 0) items.push_back({"preconditioner, norm estimate, start block", 0, extra});
  p.op_solve += sas + z + aw + scratch + kept + extra;
}

// The filter's blocks: V, A V and a scratch block of m columns, the k eigenvectors handed back, Lanczos' three
// vectors, a start block; its products' halo is m columns wide.
void add_filter(const RankShape& s, const SolverShape& o, std::vector<MemoryItem>& items, Phases& p) {
  const std::int64_t m = s.local_rows, v = o.value_bytes, nb = o.block, k = o.columns;
  add_halo(s, nb, o.value_bytes, items, p);
  const std::int64_t blocks = 3 * m * nb * v, kept = m * k * v + 3 * m * v + m * o.start_columns * v;
  items.push_back({"Chebyshev filter: V, A V and scratch (" + std::to_string(nb) + " columns each)", 0, blocks});
  items.push_back({"Chebyshev filter: eigenvectors (k), Lanczos vectors, start block", 0, kept});
  p.op_solve += blocks + kept;
  if (o.mixed_filter) {  // A's values and diagonal in fp32 (complex fp32) with their off-diagonal product; V, scratch
    const std::int64_t single = v / 2 * (s.local_nnz + s.local_rows + s.off_diagonal_rows * nb + 2 * m * nb);
    items.push_back({"Chebyshev filter in fp32: the matrix's values, their halo product, V and scratch (" +
                         std::to_string(nb) + " columns)",
                     0, single});
    p.op_solve += single;
  }
}

void add_block_cg(const RankShape& s, const SolverShape& o, std::vector<MemoryItem>& items, Phases& p) {
  const std::int64_t m = s.local_rows, v = o.value_bytes, c = o.columns;
  add_halo(s, c, o.value_bytes, items, p);
  const std::int64_t solver = m * c * v * (3 + 1 + 1 + (o.preconditioner ? 1 : 0));
  items.push_back({o.preconditioner ? "block CG: [P Q R], X, scratch and Z (right-hand sides each)"
                                    : "block CG: [P Q R], X, scratch (right-hand sides each)",
                   0, solver});
  add_preconditioner_matrix(s, o, c, items, p);
  const PreconditionerMemory& pm = o.preconditioner_memory;
  const std::int64_t app = m * c * v * (2 + (o.known_solution ? 1 : 0)) + (pm.vector_bytes + pm.block_bytes * c) * m;
  items.push_back(
      {o.known_solution ? "right-hand sides B, solution X, known solution" : "right-hand sides B, solution X", 0, app});
  p.op_solve += solver + app;
}

}  // namespace

RankShape even_share(std::int64_t rows, std::int64_t nnz, int ranks) {
  RankShape s;
  s.global_rows = rows;
  s.global_nnz = nnz;
  const std::int64_t r = std::max(1, ranks);
  s.local_rows = (rows + r - 1) / r;
  s.local_nnz = (nnz + r - 1) / r;
  return s;
}

SolverShape lobpcg_shape(int k, int block_size, bool backward_test, bool preconditioner, int value_bytes, Space space,
                         std::int64_t global_rows) {
  SolverShape s;
  s.kind = SolverShape::Kind::lobpcg;
  s.value_bytes = value_bytes;
  s.columns = k;
  s.block = block_size > 0 ? block_size : default_block_size(k, global_rows);
  const LobpcgOptions automatic;
  s.alignment = value_bytes == 8 ? lobpcg_detail::column_alignment<double>(automatic, space)
                                 : lobpcg_detail::column_alignment<float>(automatic, space);
  s.preconditioner = preconditioner;
  s.norm_estimate = backward_test;
  return s;
}

SolverShape filter_shape(int k, int block_size, int value_bytes, std::int64_t global_rows, SearchPrecision precision,
                         Space space) {
  SolverShape s;
  s.kind = SolverShape::Kind::chebyshev_filter;
  s.value_bytes = value_bytes;
  s.columns = k;
  s.block = block_size > 0 ? block_size : default_filter_block_size(k, global_rows);
  s.mixed_filter = filter_mixed(precision, space, value_bytes);
  return s;
}

MemoryPlan plan_memory(const RankShape& shape, const MatrixSourceSize& source, const SolverShape& solver, Space space,
                       const SecondMatrix* b) {
  MemoryPlan plan;
  plan.shape = shape;
  plan.space = space;
  Phases p;
  add_matrix(b ? "matrix A" : "matrix", shape, source, solver, space, plan.items, p, plan.host_replicated);
  if (b) add_matrix("matrix B", b->shape, b->source, solver, space, plan.items, p, plan.host_replicated);
  if (solver.kind == SolverShape::Kind::lobpcg)
    add_lobpcg(shape, solver, b, plan.items, p);
  else if (solver.kind == SolverShape::Kind::chebyshev_filter)
    add_filter(shape, solver, plan.items, p);
  else
    add_block_cg(shape, solver, plan.items, p);
  if (solver.output) {
    // The blocks of one file are prepared together: the right-hand sides' copies beside the solution's.
    const std::int64_t out = output_bytes(shape.local_rows, solver, space) * (solver.output_rhs ? 2 : 1);
    const char* what = solver.kind != SolverShape::Kind::block_cg ? "eigenvectors on their way to the result file"
                       : solver.output_rhs ? "solution and right-hand sides on their way to the result file"
                                           : "solution on its way to the result file";
    plan.items.push_back({what, out, 0});
    p.solve += out;
  }
  plan.buffers_peak = std::max(p.op_build, p.op_solve);
  if (space == Space::device) {
    plan.items.push_back(
        {"libraries' work space (cuBLAS, cuSOLVER, cuSPARSE, kernel scratch), allowance", 0, device_library_allowance});
    plan.device_peak = plan.buffers_peak + device_library_allowance;
    plan.host_peak = std::max({p.load, p.build, p.solve});
  } else {
    plan.host_peak = std::max({p.load, p.build + p.op_build, p.solve + p.op_solve});
  }
  return plan;
}

std::string format_bytes(double bytes) {
  char text[32];
  if (bytes >= double(1ll << 50))
    std::snprintf(text, sizeof text, "%.2f PiB", bytes / double(1ll << 50));
  else if (bytes >= double(1ll << 40))
    std::snprintf(text, sizeof text, "%.2f TiB", bytes / double(1ll << 40));
  else if (bytes >= double(1ll << 30))
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ll << 30));
  else if (bytes >= double(1 << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

std::string describe(const MemoryPlan& plan) {
  const char* op = plan.space == Space::device ? "device" : "host*";
  std::ostringstream out;
  char line[320];
  for (const MemoryItem& item : plan.items) {
    if (item.host > 0) {
      std::snprintf(line, sizeof line, "  %-7s %12s  %s\n", "host", format_bytes(double(item.host)).c_str(),
                    item.what.c_str());
      out << line;
    }
    if (item.operator_space > 0) {
      std::snprintf(line, sizeof line, "  %-7s %12s  %s\n", op, format_bytes(double(item.operator_space)).c_str(),
                    item.what.c_str());
      out << line;
    }
  }
  out << "  peak    host " << format_bytes(double(plan.host_peak));
  if (plan.space == Space::device)
    out << ", device " << format_bytes(double(plan.device_peak));
  else
    out << " (host* are the CPU backend's blocks, in host memory)";
  out << "\n";
  return out.str();
}

}  // namespace blockeigs::solver
