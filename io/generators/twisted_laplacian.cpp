#include "io/generators/twisted_laplacian.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <utility>

#include "core/error.hpp"

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

  ComplexCsrRows rows;
  rows.global_rows = rows.global_cols = points;
  rows.first_row = row_begin;
  rows.row_offsets.reserve(static_cast<std::size_t>(row_end - row_begin + 1));
  rows.row_offsets.push_back(0);
  std::vector<std::pair<std::int64_t, std::complex<double>>> row;
  for (std::int64_t i = row_begin; i < row_end; ++i) {
    row.assign(1, {i, 6.0});
    for (int d = 0; d < 3; ++d) {
      const std::int64_t at = i / stride[d] % extent[d];
      const std::int64_t upper = at + 1 == extent[d] ? i - at * stride[d] : i + stride[d];
      const std::int64_t lower = at == 0 ? i + (extent[d] - 1) * stride[d] : i - stride[d];
      row.push_back({upper, up[d]});
      row.push_back({lower, std::conj(up[d])});
    }
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k > 0 && row[k].first == rows.col_indices.back()) {
        rows.values.back() += row[k].second;  // a direction of one or two points
        continue;
      }
      rows.col_indices.push_back(row[k].first);
      rows.values.push_back(row[k].second);
    }
    rows.row_offsets.push_back(static_cast<std::int64_t>(rows.col_indices.size()));
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
