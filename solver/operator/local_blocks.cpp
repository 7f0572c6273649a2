#include "solver/operator/local_blocks.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace blockeigs::solver {
namespace {

// Columns within a row are sorted, so a row's diagonal-block entries are one
// run: [first, last) of its entries have columns in [begin, end).
struct Run {
  std::int64_t first, last;
};

template <class V>
Run diagonal_run(const CsrRowsOf<V>& rows, std::int64_t i, std::int64_t begin, std::int64_t end) {
  const std::int64_t* col = rows.col_indices.data();
  const std::int64_t* lo = col + rows.row_offsets[i];
  const std::int64_t* hi = col + rows.row_offsets[i + 1];
  const std::int64_t* first = lo;
  while (first < hi && *first < begin) ++first;  // rows are short: a scan beats a search
  const std::int64_t* last = first;
  while (last < hi && *last < end) ++last;
  return {first - col, last - col};
}

template <class V>
void check_fits(const CsrRowsOf<V>& rows) {
  constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
  if (rows.nnz() > int32_max)
    fail_input("one rank holds ", rows.nnz(),
               " nonzeros; local blocks are limited to 2^31 - 1: ", "run with more ranks");
}

// Each row's diagonal-block count in `diagonal` (size m + 1, exclusive prefix
// sums on return), its off-diagonal count likewise in `off`, and the halo
// columns sorted and unique.
template <class V>
void count_rows(const CsrRowsOf<V>& rows, std::vector<std::int64_t>& diagonal, std::vector<std::int64_t>& off,
                std::vector<std::int64_t>& halo_columns) {
  const std::int64_t m = rows.local_rows();
  const std::int64_t begin = rows.first_row, end = rows.first_row + m;
  diagonal.assign(static_cast<std::size_t>(m + 1), 0);
  off.assign(static_cast<std::size_t>(m + 1), 0);
  std::int64_t halo_entries = 0;
#pragma omp parallel for schedule(static) reduction(+ : halo_entries)
  for (std::int64_t i = 0; i < m; ++i) {
    const Run run = diagonal_run(rows, i, begin, end);
    diagonal[i + 1] = run.last - run.first;
    off[i + 1] = rows.row_offsets[i + 1] - rows.row_offsets[i] - diagonal[i + 1];
    halo_entries += off[i + 1];
  }
  for (std::int64_t i = 0; i < m; ++i) {
    diagonal[i + 1] += diagonal[i];
    off[i + 1] += off[i];
  }
  halo_columns.clear();
  halo_columns.reserve(static_cast<std::size_t>(halo_entries));
  for (std::int64_t i = 0; i < m; ++i) {
    if (off[i + 1] == off[i]) continue;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      const std::int64_t c = rows.col_indices[k];
      if (c < begin || c >= end) halo_columns.push_back(c);
    }
  }
  std::sort(halo_columns.begin(), halo_columns.end());
  halo_columns.erase(std::unique(halo_columns.begin(), halo_columns.end()), halo_columns.end());
}

}  // namespace

template <class V>
LocalBlockShape local_block_shape(const CsrRowsOf<V>& rows) {
  check_fits(rows);
  std::vector<std::int64_t> diagonal, off;
  LocalBlockShape shape;
  count_rows(rows, diagonal, off, shape.halo_columns);
  const std::int64_t m = rows.local_rows();
  shape.diagonal_nnz = diagonal.back();
  shape.off_diagonal_nnz = off.back();
  for (std::int64_t i = 0; i < m; ++i) shape.off_diagonal_rows += off[i + 1] > off[i] ? 1 : 0;
  return shape;
}

template <class T>
LocalBlocks<T> split_local_rows(const RowsFor<T>& rows) {
  check_fits(rows);
  const std::int64_t m = rows.local_rows();
  const std::int64_t begin = rows.first_row, end = rows.first_row + m;
  std::vector<std::int64_t> diagonal, off;
  LocalBlocks<T> out;
  count_rows(rows, diagonal, off, out.halo_columns);
  const std::vector<std::int64_t>& halo = out.halo_columns;

  // Which row of the off-diagonal block each local row with halo entries is.
  std::int64_t off_rows = 0;
  for (std::int64_t i = 0; i < m; ++i) off_rows += off[i + 1] > off[i] ? 1 : 0;
  out.off_diagonal_rows = dense::Buffer<std::int32_t>(Space::host, static_cast<std::size_t>(off_rows));
  for (std::int64_t i = 0, r = 0; i < m; ++i)
    if (off[i + 1] > off[i]) out.off_diagonal_rows.data()[r++] = static_cast<std::int32_t>(i);
  const std::int32_t* off_row = out.off_diagonal_rows.data();

  dense::Buffer<std::int32_t> d_offsets(Space::host, static_cast<std::size_t>(m + 1));
  dense::Buffer<std::int32_t> d_cols(Space::host, static_cast<std::size_t>(diagonal.back()));
  dense::Buffer<T> d_values(Space::host, static_cast<std::size_t>(diagonal.back()));
  dense::Buffer<std::int32_t> o_offsets(Space::host, static_cast<std::size_t>(off_rows + 1));
  dense::Buffer<std::int32_t> o_cols(Space::host, static_cast<std::size_t>(off.back()));
  dense::Buffer<T> o_values(Space::host, static_cast<std::size_t>(off.back()));
  out.diagonal_entries = dense::Buffer<T>(Space::host, static_cast<std::size_t>(m));
  T* diagonal_entries = out.diagonal_entries.data();
  std::fill(diagonal_entries, diagonal_entries + m, T(0));
  for (std::int64_t i = 0; i <= m; ++i) d_offsets.data()[i] = static_cast<std::int32_t>(diagonal[i]);
  o_offsets.data()[0] = 0;
  for (std::int64_t r = 0; r < off_rows; ++r) o_offsets.data()[r + 1] = static_cast<std::int32_t>(off[off_row[r] + 1]);

  // Columns stay sorted within a row: the renumbering is monotone in each block.
  std::int32_t* dc = d_cols.data();
  T* dv = d_values.data();
  std::int32_t* oc = o_cols.data();
  T* ov = o_values.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const Run run = diagonal_run(rows, i, begin, end);
    std::int64_t d = diagonal[i];
    for (std::int64_t k = run.first; k < run.last; ++k, ++d) {
      const std::int64_t c = rows.col_indices[k] - begin;
      dc[d] = static_cast<std::int32_t>(c);
      dv[d] = static_cast<T>(rows.values[k]);
      if (c == i) diagonal_entries[i] = dv[d];
    }
    std::int64_t o = off[i];
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k) {
      if (k == run.first) k = run.last;
      if (k >= rows.row_offsets[i + 1]) break;
      const auto at = std::lower_bound(halo.begin(), halo.end(), rows.col_indices[k]);
      oc[o] = static_cast<std::int32_t>(at - halo.begin());
      ov[o] = static_cast<T>(rows.values[k]);
      ++o;
    }
  }
  out.diagonal = spmm::CsrMatrix<T>(m, m, std::move(d_offsets), std::move(d_cols), std::move(d_values));
  out.off_diagonal = spmm::CsrMatrix<T>(off_rows, static_cast<std::int64_t>(halo.size()), std::move(o_offsets),
                                        std::move(o_cols), std::move(o_values));
  return out;
}

namespace {

// Room on the device for the blocks and the device split's scratch, with an
// eighth of the device's memory to spare for what the run allocates next.
bool device_split_fits(const CsrRows& rows, int value_bytes) {
  std::int64_t free = 0, total = 0;
  if (!dense::device_memory(&free, &total)) return false;
  const std::int64_t m = rows.local_rows(), nnz = rows.nnz();
  const std::int64_t blocks = 4 * (2 * m + 2) + (4 + std::int64_t{value_bytes}) * nnz + std::int64_t{value_bytes} * m;
  return blocks + device_split_scratch_bytes(m, nnz, nnz) + total / 8 <= free;
}

}  // namespace

template <class T>
LocalBlocks<T> split_local_rows(const dense::Context& context, const RowsFor<T>& rows) {
  const Space space = context.space();
  if constexpr (!is_complex_v<T>)
    if (space == Space::device && device_split_fits(rows, sizeof(T)))
      return split_local_rows_on_device<T>(context, rows);
  LocalBlocks<T> blocks = split_local_rows<T>(rows);
  blocks.diagonal = std::move(blocks.diagonal).to_space(space);
  blocks.off_diagonal = std::move(blocks.off_diagonal).to_space(space);
  blocks.off_diagonal_rows = dense::in_space(std::move(blocks.off_diagonal_rows), space);
  blocks.diagonal_entries = dense::in_space(std::move(blocks.diagonal_entries), space);
  return blocks;
}

std::int64_t device_split_scratch_bytes(std::int64_t local_rows, std::int64_t nnz, std::int64_t off_diagonal_nnz) {
  // The rows as loaded (int64 offsets and columns, fp64 values), three int32
  // counts a row, and 32 bytes an off-diagonal entry: its column gathered,
  // sorted (with the sort's work space) and made unique; and the scans' space.
  const std::int64_t m = local_rows + 1;
  return 8 * m + 16 * nnz + 12 * m + 32 * off_diagonal_nnz + (std::int64_t{16} << 20);
}

template LocalBlockShape local_block_shape(const CsrRows&);
template LocalBlockShape local_block_shape(const ComplexCsrRows&);
#define BLOCKEIGS_SPLIT(T)                                        \
  template LocalBlocks<T> split_local_rows<T>(const RowsFor<T>&); \
  template LocalBlocks<T> split_local_rows<T>(const dense::Context&, const RowsFor<T>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SPLIT)
#undef BLOCKEIGS_SPLIT

template <class T>
std::int64_t find_diagonal_positions(const dense::Context& context, const spmm::CsrView<T>& A,
                                     std::int64_t* positions) {
  if (A.space == Space::device) return cuda::find_diagonal_positions(context, A, positions);
  std::int64_t missing = 0;
#pragma omp parallel for reduction(+ : missing) schedule(static)
  for (std::int64_t i = 0; i < A.rows; ++i) {
    positions[i] = -1;
    for (std::int32_t p = A.row_offsets[i]; p < A.row_offsets[i + 1]; ++p)
      if (A.col_indices[p] == i) positions[i] = p;
    missing += positions[i] < 0 ? 1 : 0;
  }
  return missing;
}

template <class T>
void set_shifted_diagonal(const dense::Context& context, T* values, const std::int64_t* positions, const T* diagonal,
                          T shift, std::int64_t rows) {
  if (context.space() == Space::device)
    return cuda::set_shifted_diagonal(context, values, positions, diagonal, shift, rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i)
    if (positions[i] >= 0) values[positions[i]] = diagonal[i] + shift;
}

#define BLOCKEIGS_DIAGONAL(T) BLOCKEIGS_DIAGONAL_SHIFT(T, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_DIAGONAL)
#undef BLOCKEIGS_DIAGONAL

}  // namespace blockeigs::solver
