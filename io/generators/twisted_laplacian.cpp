#include "io/generators/twisted_laplacian.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <numbers>
#include <utility>

#include "core/error.hpp"
#include "core/huge_pages.hpp"

namespace blockeigs::io {

void validate(const TwistedLaplacian& spec, const std::string& source) {
  const std::array<std::int64_t, 3> extent{spec.nx, spec.ny, spec.nz};
  for (int d = 0; d < 3; ++d) {
    if (extent[d] < 1) fail_input(source, ": the grid's extents must be positive, got ", extent[d]);
    if (!std::isfinite(spec.phase[d])) fail_input(source, ": phase ", d, " is ", spec.phase[d], ", not finite");
  }
  if (spec.nx > (std::int64_t{1} << 62) / spec.ny / spec.nz) fail_input(source, ": the grid has too many points");
}

std::int64_t twisted_laplacian_row_length(const TwistedLaplacian& spec) {
  std::int64_t length = 1;
  for (const std::int64_t n : {spec.nx, spec.ny, spec.nz}) length += n == 1 ? 0 : n == 2 ? 1 : 2;
  return length;
}

ComplexCsrRows twisted_laplacian_rows(const TwistedLaplacian& spec, std::int64_t row_begin, std::int64_t row_end) {
  validate(spec, "twisted Laplacian");
  const std::array<std::int64_t, 3> extent{spec.nx, spec.ny, spec.nz};
  const std::array<std::int64_t, 3> stride{1, spec.nx, spec.nx * spec.ny};
  const std::int64_t points = spec.nx * spec.ny * spec.nz;
  if (row_begin < 0 || row_begin > row_end || row_end > points)
    fail_input("twisted Laplacian: rows [", row_begin, ", ", row_end, ") are outside its ", points, " rows");
  // The link to the upper neighbour in direction d, and its conjugate to the lower one.
  std::array<std::complex<double>, 3> up;
  for (int d = 0; d < 3; ++d) up[d] = -std::polar(1.0, spec.phase[d] / double(extent[d]));

  // Every row has the same length: the offsets are known, and each row is written in place, rows shared out
  // over the threads (the real generators' way).
  const std::int64_t length = twisted_laplacian_row_length(spec), count = row_end - row_begin;
  ComplexCsrRows rows;
  rows.global_rows = rows.global_cols = points;
  rows.first_row = row_begin;
  resize_for_parallel_fill(rows.row_offsets, static_cast<std::size_t>(count + 1));
  resize_for_parallel_fill(rows.col_indices, static_cast<std::size_t>(count * length));
  resize_for_parallel_fill(rows.values, static_cast<std::size_t>(count * length));
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r <= count; ++r) rows.row_offsets[r] = r * length;
#pragma omp parallel for schedule(static)
  for (std::int64_t r = 0; r < count; ++r) {
    const std::int64_t i = row_begin + r;
    std::array<std::pair<std::int64_t, std::complex<double>>, 7> row;
    int n = 0;
    row[n++] = {i, 6.0};
    for (int d = 0; d < 3; ++d) {
      const std::int64_t at = i / stride[d] % extent[d];
      row[n++] = {at + 1 == extent[d] ? i - at * stride[d] : i + stride[d], up[d]};
      row[n++] = {at == 0 ? i + (extent[d] - 1) * stride[d] : i - stride[d], std::conj(up[d])};
    }
    for (int a = 1; a < n; ++a)  // seven entries: insertion sort by column
      for (int b = a; b > 0 && row[b].first < row[b - 1].first; --b) std::swap(row[b], row[b - 1]);
    std::int64_t* cols = rows.col_indices.data() + r * length;
    std::complex<double>* values = rows.values.data() + r * length;
    int written = 0;
    for (int k = 0; k < n; ++k) {
      if (written > 0 && row[k].first == cols[written - 1]) {
        values[written - 1] += row[k].second;  // a direction of one or two points
        continue;
      }
      cols[written] = row[k].first;
      values[written++] = row[k].second;
    }
    BLOCKEIGS_ASSERT(written == length);
  }
  return rows;
}

std::vector<double> twisted_laplacian_eigenvalues(const TwistedLaplacian& spec) {
  validate(spec, "twisted Laplacian");
  const std::array<std::int64_t, 3> extent{spec.nx, spec.ny, spec.nz};
  std::array<std::vector<double>, 3> one;
  for (int d = 0; d < 3; ++d)
    for (std::int64_t j = 0; j < extent[d]; ++j)
      one[d].push_back(2.0 - 2.0 * std::cos((2.0 * std::numbers::pi * double(j) + spec.phase[d]) / double(extent[d])));
  std::vector<double> all;
  all.reserve(static_cast<std::size_t>(spec.nx * spec.ny * spec.nz));
  for (double z : one[2])
    for (double y : one[1])
      for (double x : one[0]) all.push_back(x + y + z);
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace blockeigs::io
