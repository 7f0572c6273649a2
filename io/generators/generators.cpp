#include "io/generators/generators.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/huge_pages.hpp"
#include "core/thread_share.hpp"
#include "io/generators/fem_p1.hpp"
#include "io/generators/grid.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "io/renumbering.hpp"

namespace blockeigs::io {
namespace {

// The generators by what builds their rows.
enum class Family { grid_laplacian, fem_p1, graph_laplacian, random };

Family family(GeneratorKind kind) {
  switch (kind) {
    case GeneratorKind::fem_p1_1d:
    case GeneratorKind::fem_p1_2d:
    case GeneratorKind::fem_p1_3d: return Family::fem_p1;
    case GeneratorKind::graph_laplacian: return Family::graph_laplacian;
    case GeneratorKind::random_spd: return Family::random;
    default: return Family::grid_laplacian;
  }
}

int dimensions(GeneratorKind kind) {
  switch (kind) {
    case GeneratorKind::laplacian_1d:
    case GeneratorKind::fem_p1_1d: return 1;
    case GeneratorKind::laplacian_2d:
    case GeneratorKind::fem_p1_2d: return 2;
    default: return 3;
  }
}

Grid grid_of(const GeneratorSpec& spec) {
  switch (dimensions(spec.kind)) {
    case 1: return {spec.nx, 1, 1};
    case 2: return {spec.nx, spec.ny, 1};
    default: return {spec.nx, spec.ny, spec.nz};
  }
}

// The Laplacians' stencils by GridStencil::slot: the star stencils hold 2 per
// dimension on the diagonal and -1 at the face neighbours (those outside a 1D
// or 2D grid never exist), the 27-point one 26 and -1 everywhere else.
std::array<double, 27> laplacian_stencil(const GeneratorSpec& spec) {
  std::array<double, 27> values{};
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
        double& value = values[GridStencil::slot(dx, dy, dz)];
        if (spec.stencil == 27)
          value = distance == 0 ? 26.0 : -1.0;
        else if (distance <= 1)
          value = distance == 0 ? 2.0 * dimensions(spec.kind) : -1.0;
      }
  return values;
}

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// random_spd's pattern: entry (i, j) exists when a hash of the unordered pair
// passes a threshold, so any row can be built alone and A stays symmetric.
// Candidates lie in a band of half-width 2 * nnz_per_row around the diagonal.
class RandomPattern {
 public:
  explicit RandomPattern(const GeneratorSpec& spec)
      : n_(spec.n), half_width_(std::min(2 * spec.nnz_per_row, spec.n - 1)), seed_(splitmix64(spec.seed)) {
    // Interior rows see min(2w, n-1) candidates; this keeps their mean at nnz_per_row.
    const std::int64_t candidates = std::min(2 * half_width_, spec.n - 1);
    const double p = candidates > 0 ? static_cast<double>(spec.nnz_per_row) / candidates : 0.0;
    threshold_ = static_cast<std::uint64_t>(std::min(p, 1.0) * 0x1p53);
  }

  std::int64_t window_begin(std::int64_t i) const { return std::max<std::int64_t>(0, i - half_width_); }
  std::int64_t window_end(std::int64_t i) const { return std::min(n_, i + half_width_ + 1); }

  std::uint64_t pair_hash(std::int64_t i, std::int64_t j) const {
    const auto low = static_cast<std::uint64_t>(std::min(i, j));
    const auto high = static_cast<std::uint64_t>(std::max(i, j));
    return splitmix64(splitmix64(seed_ + low) ^ high);
  }
  bool linked(std::uint64_t hash) const { return (hash >> 11) < threshold_; }
  // In (-1, 1): the open interval keeps zero-measure ties away, and an
  // independent remix keeps the value uncorrelated with the inclusion test.
  static double value(std::uint64_t hash) {
    const std::uint64_t bits = splitmix64(hash ^ 0xD1B54A32D192ED03ull) >> 11;
    return (static_cast<double>(bits) + 0.5) * 0x1p-52 - 1.0;
  }

  std::int64_t row_length(std::int64_t i) const {
    std::int64_t length = 1;  // the diagonal
    for (std::int64_t j = window_begin(i); j < window_end(i); ++j)
      if (j != i && linked(pair_hash(i, j))) ++length;
    return length;
  }

 private:
  std::int64_t n_;
  std::int64_t half_width_;
  std::uint64_t seed_;
  std::uint64_t threshold_ = 0;
};

// Appends random_spd's row i, columns ascending.
void append_random_row(const RandomPattern& pattern, std::int64_t i, std::vector<std::int64_t>& cols,
                       std::vector<double>& vals) {
  double off_diagonal_sum = 0.0;
  std::size_t diagonal_slot = 0;
  for (std::int64_t j = pattern.window_begin(i); j < pattern.window_end(i); ++j) {
    if (j == i) {
      diagonal_slot = vals.size();
      cols.push_back(i);
      vals.push_back(0.0);  // set below, once the row's sum is known
      continue;
    }
    const std::uint64_t hash = pattern.pair_hash(i, j);
    if (!pattern.linked(hash)) continue;
    const double v = RandomPattern::value(hash);
    cols.push_back(j);
    vals.push_back(v);
    off_diagonal_sum += std::abs(v);
  }
  // Strict diagonal dominance with a positive diagonal makes A SPD.
  vals[diagonal_slot] = off_diagonal_sum + 1.0;
}

// graph_laplacian's row i: the vertex's degree on the diagonal, -1 for each neighbour.
std::int64_t graph_row_length(const GeneratorSpec& spec, std::int64_t i) {
  if (spec.graph == GraphKind::cycle) return 3;
  return 1 + (i > 0) + (i + 1 < spec.n);
}

void append_graph_row(const GeneratorSpec& spec, std::int64_t i, std::vector<std::int64_t>& cols,
                      std::vector<double>& vals) {
  const std::int64_t n = spec.n;
  std::int64_t neighbours[2];
  int count = 0;
  if (spec.graph == GraphKind::cycle) {  // n >= 3: two distinct neighbours
    neighbours[count++] = std::min((i + n - 1) % n, (i + 1) % n);
    neighbours[count++] = std::max((i + n - 1) % n, (i + 1) % n);
  } else {
    if (i > 0) neighbours[count++] = i - 1;
    if (i + 1 < n) neighbours[count++] = i + 1;
  }
  bool diagonal_done = false;
  for (int k = 0; k < count; ++k) {
    if (!diagonal_done && neighbours[k] > i) {
      cols.push_back(i);
      vals.push_back(count);
      diagonal_done = true;
    }
    cols.push_back(neighbours[k]);
    vals.push_back(-1.0);
  }
  if (!diagonal_done) {
    cols.push_back(i);
    vals.push_back(count);
  }
}

// The natural matrix one row at a time, at any row (what the renumbered
// generator reads through the permutation), or grid point by grid point.
class NaturalRows {
 public:
  explicit NaturalRows(const GeneratorSpec& spec) : spec_(spec), family_(family(spec.kind)), grid_(grid_of(spec)) {
    if (family_ == Family::random) pattern_.emplace(spec);
    if (family_ == Family::fem_p1) stencil_.emplace(grid_, fem::TensorStencil(spec).values());
    if (family_ == Family::grid_laplacian) stencil_.emplace(grid_, laplacian_stencil(spec));
  }

  bool on_grid() const { return family_ == Family::grid_laplacian || family_ == Family::fem_p1; }
  const Grid& grid() const { return grid_; }

  std::int64_t length(const GridCursor& at) const { return stencil_->length(at); }
  std::int64_t fill(const GridCursor& at, std::int64_t index, std::int64_t* col, double* val) const {
    return stencil_->fill(at, index, col, val);
  }

  std::int64_t length(std::int64_t i) const {
    if (on_grid()) return length(GridCursor(grid_, i));
    if (family_ == Family::graph_laplacian) return graph_row_length(spec_, i);
    return pattern_->row_length(i);
  }

  void append(std::int64_t i, std::vector<std::int64_t>& cols, std::vector<double>& vals) const {
    if (family_ == Family::random) return append_random_row(*pattern_, i, cols, vals);
    if (family_ == Family::graph_laplacian) return append_graph_row(spec_, i, cols, vals);
    const GridCursor at(grid_, i);
    const std::size_t start = cols.size();
    cols.resize(start + static_cast<std::size_t>(length(at)));
    vals.resize(cols.size());
    fill(at, i, cols.data() + start, vals.data() + start);
  }

 private:
  const GeneratorSpec& spec_;
  Family family_;
  Grid grid_;
  std::optional<RandomPattern> pattern_;
  std::optional<GridStencil> stencil_;  // the grid families
};

// Room for `rows` rows of random_spd or graph_laplacian: 3 per row for the
// graphs; for random_spd its expected count with room for the spread, so that
// the arrays are rarely grown.
std::int64_t expected_entries(const GeneratorSpec& spec, std::int64_t rows) {
  if (family(spec.kind) != Family::random) return 3 * rows;
  const std::int64_t expected = rows * (spec.nnz_per_row + 1);
  return expected + expected / 32 + 4 * spec.nnz_per_row + 1;
}

// Rows [row_begin, row_end) of P A P^T, `room` entries reserved: row i is the natural row perm[i] (`append(r,
// cols, vals)` appends natural row r) with its columns renumbered and sorted again. Real or complex values.
template <class V, class Append>
CsrRowsOf<V> permuted_rows(const RandomPermutation& perm, std::int64_t n, std::int64_t row_begin, std::int64_t row_end,
                           std::int64_t room, const Append& append) {
  CsrRowsOf<V> out;
  out.global_rows = out.global_cols = n;
  out.first_row = row_begin;
  reserve_in_huge_pages(out.row_offsets, static_cast<std::size_t>(row_end - row_begin + 1));
  out.row_offsets.push_back(0);
  reserve_in_huge_pages(out.col_indices, static_cast<std::size_t>(room));
  reserve_in_huge_pages(out.values, static_cast<std::size_t>(room));
  std::vector<std::int64_t> cols;
  std::vector<V> vals;
  std::vector<std::pair<std::int64_t, V>> row;
  for (std::int64_t i = row_begin; i < row_end; ++i) {
    cols.clear();
    vals.clear();
    append(perm.natural_of(i), cols, vals);
    row.clear();
    for (std::size_t k = 0; k < cols.size(); ++k) row.emplace_back(perm.renumbered_of(cols[k]), vals[k]);
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      out.col_indices.push_back(c);
      out.values.push_back(v);
    }
    out.row_offsets.push_back(static_cast<std::int64_t>(out.col_indices.size()));
  }
  return out;
}

// The real generators' rows of P A P^T.
CsrRows generate_renumbered_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end) {
  const NaturalRows natural(spec);
  const RandomPermutation perm(generated_rows(spec), spec.renumber_seed);
  std::int64_t room = 0;  // the grid families' exact count; random_spd's expected one
  if (natural.on_grid())
    for (std::int64_t i = row_begin; i < row_end; ++i) room += natural.length(perm.natural_of(i));
  else
    room = expected_entries(spec, row_end - row_begin);
  return permuted_rows<double>(perm, generated_rows(spec), row_begin, row_end, room,
                               [&](std::int64_t r, std::vector<std::int64_t>& cols, std::vector<double>& vals) {
                                 natural.append(r, cols, vals);
                               });
}

void check_row_range(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end) {
  const std::int64_t rows = generated_rows(spec);
  if (row_begin < 0 || row_begin > row_end || row_end > rows)
    fail_input(describe(spec), ": rows [", row_begin, ", ", row_end, ") are outside the matrix's ", rows, " rows");
}

// Cartesian combination of per-dimension eigenvalues, for the tensor-structured Laplacians.
std::vector<double> combine(const std::vector<std::vector<double>>& factors, double start, bool multiply) {
  std::vector<double> out{start};
  for (const auto& factor : factors) {
    std::vector<double> next;
    next.reserve(out.size() * factor.size());
    for (const double a : out)
      for (const double b : factor) next.push_back(multiply ? a * b : a + b);
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::string_view to_string(FemPart part) { return part == FemPart::stiffness ? "stiffness" : "mass"; }
std::string_view to_string(GraphKind graph) { return graph == GraphKind::path ? "path" : "cycle"; }

bool generates_complex(const GeneratorSpec& spec) { return spec.periodic; }

namespace {
TwistedLaplacian twisted_of(const GeneratorSpec& spec) { return {spec.nx, spec.ny, spec.nz, spec.phase}; }
}  // namespace

void validate(const GeneratorSpec& spec, const std::string& source) {
  const Family f = family(spec.kind);
  if (spec.periodic) {
    if (spec.kind != GeneratorKind::laplacian_3d || spec.stencil != 7)
      fail_input(source, ": boundary: periodic takes the 7-point laplacian_3d");
    validate(twisted_of(spec), source);
    return;
  }
  for (const double t : spec.phase)
    if (t != 0) fail_input(source, ": phase needs boundary: periodic (a Dirichlet grid has no phases)");
  if (f == Family::random) {
    if (spec.n <= 0) fail_input(source, ": n must be positive, got ", spec.n);
    if (spec.nnz_per_row < 0 || spec.nnz_per_row >= spec.n)
      fail_input(source, ": nnz_per_row must be in 0..", spec.n - 1, " (below n = ", spec.n, "), got ",
                 spec.nnz_per_row);
    return;
  }
  if (f == Family::graph_laplacian) {
    const std::int64_t least = spec.graph == GraphKind::cycle ? 3 : 2;
    if (spec.n < least)
      fail_input(source, ": n must be at least ", least, " for a ", to_string(spec.graph), ", got ", spec.n);
    return;
  }
  const int dims = dimensions(spec.kind);
  const std::pair<const char*, std::int64_t> extents[] = {{"nx", spec.nx}, {"ny", spec.ny}, {"nz", spec.nz}};
  std::int64_t points = 1;
  for (int d = 0; d < dims; ++d) {
    const auto [name, extent] = extents[d];
    if (extent <= 0) fail_input(source, ": ", name, " must be positive, got ", extent);
    if (points > std::numeric_limits<std::int64_t>::max() / 4 / extent)
      fail_input(source, ": the grid has too many points for 64-bit indices");
    points *= extent;
  }
  if (f == Family::fem_p1) return;
  const bool stencil_fits = (dims == 1 && spec.stencil == 3) || (dims == 2 && spec.stencil == 5) ||
                            (dims == 3 && (spec.stencil == 7 || spec.stencil == 27));
  if (!stencil_fits)
    fail_input(source, ": a ", dims, "D Laplacian takes a ",
               dims == 1   ? "3"
               : dims == 2 ? "5"
                           : "7- or 27",
               "-point stencil, got ", spec.stencil);
}

std::int64_t generated_rows(const GeneratorSpec& spec) {
  const Family f = family(spec.kind);
  if (f == Family::random || f == Family::graph_laplacian) return spec.n;
  return grid_of(spec).points();
}

std::int64_t generated_nnz(const GeneratorSpec& spec) {
  validate(spec, describe(spec));
  if (spec.periodic) return generated_rows(spec) * twisted_laplacian_row_length(twisted_of(spec));
  switch (family(spec.kind)) {
    case Family::random: return spec.n * (1 + spec.nnz_per_row);
    case Family::graph_laplacian: return spec.graph == GraphKind::cycle ? 3 * spec.n : 3 * spec.n - 2;
    case Family::fem_p1: return fem::TensorStencil(spec).nnz();
    case Family::grid_laplacian: break;
  }
  const Grid g = grid_of(spec);
  // Along each dimension a 1D stencil has 3n - 2 entries; the box stencil is
  // their product, a star stencil the points plus both off-diagonals of each.
  if (spec.stencil == 27) return (3 * g.nx - 2) * (3 * g.ny - 2) * (3 * g.nz - 2);
  const std::int64_t points = g.nx * g.ny * g.nz;
  return points + 2 * ((g.nx - 1) * g.ny * g.nz + g.nx * (g.ny - 1) * g.nz + g.nx * g.ny * (g.nz - 1));
}

std::vector<std::int64_t> generated_row_offsets(const GeneratorSpec& spec) {
  validate(spec, describe(spec));
  const std::int64_t rows = generated_rows(spec);
  std::vector<std::int64_t> offsets;
  reserve_in_huge_pages(offsets, static_cast<std::size_t>(rows) + 1);
  offsets.push_back(0);
  if (spec.periodic) {
    const std::int64_t length = twisted_laplacian_row_length(twisted_of(spec));
    for (std::int64_t i = 0; i < rows; ++i) offsets.push_back(offsets.back() + length);
    return offsets;
  }
  const NaturalRows natural(spec);
  if (spec.renumber) {
    const RandomPermutation perm(rows, spec.renumber_seed);
    for (std::int64_t i = 0; i < rows; ++i) offsets.push_back(offsets.back() + natural.length(perm.natural_of(i)));
  } else if (natural.on_grid()) {
    GridCursor at(natural.grid(), 0);
    for (std::int64_t i = 0; i < rows; ++i, at.advance()) offsets.push_back(offsets.back() + natural.length(at));
  } else {
    for (std::int64_t i = 0; i < rows; ++i) offsets.push_back(offsets.back() + natural.length(i));
  }
  return offsets;
}

namespace {

// The twisted Laplacian's rows of P A P^T (one natural row at a time).
ComplexCsrRows renumbered_complex_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end) {
  const TwistedLaplacian twisted = twisted_of(spec);
  const RandomPermutation perm(generated_rows(spec), spec.renumber_seed);
  const std::int64_t room = (row_end - row_begin) * twisted_laplacian_row_length(twisted);
  return permuted_rows<std::complex<double>>(
      perm, generated_rows(spec), row_begin, row_end, room,
      [&](std::int64_t r, std::vector<std::int64_t>& cols, std::vector<std::complex<double>>& vals) {
        const ComplexCsrRows one = twisted_laplacian_rows(twisted, r, r + 1);
        cols.insert(cols.end(), one.col_indices.begin(), one.col_indices.end());
        vals.insert(vals.end(), one.values.begin(), one.values.end());
      });
}

}  // namespace

ComplexCsrRows generate_complex_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end) {
  validate(spec, describe(spec));
  if (!spec.periodic) fail_input(describe(spec), ": a real generator (generate_rows)");
  check_row_range(spec, row_begin, row_end);
  if (spec.renumber) return renumbered_complex_rows(spec, row_begin, row_end);
  return twisted_laplacian_rows(twisted_of(spec), row_begin, row_end);
}

CsrRows generate_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end) {
  validate(spec, describe(spec));
  if (spec.periodic) fail_input(describe(spec), ": complex values (generate_complex_rows)");
  check_row_range(spec, row_begin, row_end);
  if (spec.renumber) return generate_renumbered_rows(spec, row_begin, row_end);
  CsrRows out;
  out.global_rows = out.global_cols = generated_rows(spec);
  out.first_row = row_begin;
  const std::int64_t count = row_end - row_begin;
  reserve_in_huge_pages(out.row_offsets, static_cast<std::size_t>(count) + 1);
  out.row_offsets.push_back(0);
  const NaturalRows natural(spec);

  if (natural.on_grid()) {
    // Row lengths are known from the grid point: the offsets, then every row
    // straight into its place, each thread a contiguous share of the rows
    // from its own cursor (the arrays' fresh pages faulted in by all threads).
    resize_for_parallel_fill(out.row_offsets, static_cast<std::size_t>(count) + 1);
    out.row_offsets[0] = 0;
#pragma omp parallel
    {
      const auto [first, last] = thread_share(count);
      GridCursor at(natural.grid(), row_begin + first);
      for (std::int64_t r = first; r < last; ++r, at.advance()) out.row_offsets[r + 1] = natural.length(at);
    }
    for (std::int64_t r = 0; r < count; ++r) out.row_offsets[r + 1] += out.row_offsets[r];
    resize_for_parallel_fill(out.col_indices, static_cast<std::size_t>(out.row_offsets.back()));
    resize_for_parallel_fill(out.values, static_cast<std::size_t>(out.row_offsets.back()));
#pragma omp parallel
    {
      const auto [first, last] = thread_share(count);
      GridCursor at(natural.grid(), row_begin + first);
      for (std::int64_t r = first; r < last; ++r, at.advance())
        natural.fill(at, row_begin + r, out.col_indices.data() + out.row_offsets[r],
                     out.values.data() + out.row_offsets[r]);
    }
    return out;
  }

  const std::int64_t room = expected_entries(spec, count);
  reserve_in_huge_pages(out.col_indices, static_cast<std::size_t>(room));
  reserve_in_huge_pages(out.values, static_cast<std::size_t>(room));
  for (std::int64_t r = 0; r < count; ++r) {
    natural.append(row_begin + r, out.col_indices, out.values);
    out.row_offsets.push_back(static_cast<std::int64_t>(out.col_indices.size()));
  }
  return out;
}

std::vector<double> laplacian_eigenvalues(const GeneratorSpec& spec) {
  const Family f = family(spec.kind);
  if (f != Family::grid_laplacian && f != Family::graph_laplacian)
    fail_input(describe(spec), ": only the Laplacians have closed-form eigenvalues",
               f == Family::fem_p1 ? " (fem_p1's pencil: fem_p1_eigenvalues)" : "");
  validate(spec, describe(spec));
  if (spec.periodic) return twisted_laplacian_eigenvalues(twisted_of(spec));
  if (f == Family::graph_laplacian) {
    // 2 - 2 cos t = 4 sin^2(t / 2): accurate for the small ones.
    const double step = (spec.graph == GraphKind::cycle ? 2.0 : 1.0) * std::numbers::pi / static_cast<double>(spec.n);
    std::vector<double> eigenvalues(static_cast<std::size_t>(spec.n));
    for (std::int64_t j = 0; j < spec.n; ++j) {
      const double s = std::sin(0.5 * step * static_cast<double>(j));
      eigenvalues[j] = 4.0 * s * s;
    }
    std::sort(eigenvalues.begin(), eigenvalues.end());
    return eigenvalues;
  }
  const Grid g = grid_of(spec);
  const std::int64_t extents[] = {g.nx, g.ny, g.nz};
  const bool box = spec.stencil == 27;

  std::vector<std::vector<double>> factors;
  for (int d = 0; d < dimensions(spec.kind); ++d) {
    const std::int64_t n = extents[d];
    std::vector<double> factor(static_cast<std::size_t>(n));
    for (std::int64_t j = 1; j <= n; ++j) {
      const double c = std::cos(std::numbers::pi * static_cast<double>(j) / static_cast<double>(n + 1));
      // Star stencils add the 1D operators 2 - 2cos. The 27-point one is
      // 27 I - T (x) T (x) T, where T = tridiag(1, 1, 1) has eigenvalues 1 + 2cos.
      factor[j - 1] = box ? 1.0 + 2.0 * c : 2.0 - 2.0 * c;
    }
    factors.push_back(std::move(factor));
  }
  std::vector<double> eigenvalues = combine(factors, box ? 1.0 : 0.0, box);
  if (box)
    for (double& value : eigenvalues) value = 27.0 - value;
  std::sort(eigenvalues.begin(), eigenvalues.end());
  return eigenvalues;
}

std::vector<double> fem_p1_eigenvalues(const GeneratorSpec& spec) {
  if (family(spec.kind) != Family::fem_p1)
    fail_input(describe(spec), ": fem_p1_eigenvalues is the closed form of fem_p1's pencil only");
  validate(spec, describe(spec));
  return fem::generalized_eigenvalues(spec);
}

std::string describe(const GeneratorSpec& spec) {
  std::ostringstream out;
  switch (spec.kind) {
    case GeneratorKind::laplacian_1d: out << "1D Laplacian " << spec.nx << " (" << spec.stencil << "-point)"; break;
    case GeneratorKind::laplacian_2d:
      out << "2D Laplacian " << spec.nx << "x" << spec.ny << " (" << spec.stencil << "-point)";
      break;
    case GeneratorKind::laplacian_3d:
      out << "3D Laplacian " << spec.nx << "x" << spec.ny << "x" << spec.nz << " (" << spec.stencil << "-point";
      if (spec.periodic) out << ", periodic, phases " << spec.phase[0] << " " << spec.phase[1] << " " << spec.phase[2];
      out << ")";
      break;
    case GeneratorKind::random_spd:
      out << "random SPD " << spec.n << "x" << spec.n << " (~" << spec.nnz_per_row << " off-diagonals per row, seed "
          << spec.seed << ")";
      break;
    case GeneratorKind::fem_p1_1d:
    case GeneratorKind::fem_p1_2d:
    case GeneratorKind::fem_p1_3d: {
      const int dims = dimensions(spec.kind);
      out << dims << "D fem_p1 " << to_string(spec.part) << " " << spec.nx;
      if (dims > 1) out << "x" << spec.ny;
      if (dims > 2) out << "x" << spec.nz;
      out << " (linear elements" << (dims > 1 ? ", tensor product" : "") << ", Dirichlet)";
      break;
    }
    case GeneratorKind::graph_laplacian:
      out << "graph Laplacian of a " << to_string(spec.graph) << " of " << spec.n << " vertices";
      break;
  }
  if (spec.renumber) out << ", renumbered (seed " << spec.renumber_seed << ")";
  return out.str();
}

}  // namespace blockeigs::io
