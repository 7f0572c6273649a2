// The twisted (Bloch) Laplacian: the 7-point Laplacian of an nx x ny x nz grid
// with periodic boundaries in every direction and a phase theta_d carried
// across each period, spread over the links: the entry of the link from point
// m to its neighbour m + e_d is -exp(i theta_d / n_d), its partner's the
// conjugate, the diagonal 6. It is complex Hermitian, and its eigenvalues are
// closed-form: sum_d 2 - 2 cos((2 pi j_d + theta_d) / n_d), j_d = 0..n_d-1.
// Phases not multiples of pi split the degenerate pairs of the periodic
// Laplacian. Generated row block by row block, like the real generators.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_rows.hpp"

namespace blockeigs::io {

struct TwistedLaplacian {
  std::int64_t nx = 1, ny = 1, nz = 1;   // grid points per direction (natural order, x fastest)
  std::array<double, 3> phase{0, 0, 0};  // theta_x, theta_y, theta_z in radians
};

// Throws InputError naming `source` when an extent is not positive or a phase
// is not finite.
void validate(const TwistedLaplacian& spec, const std::string& source);

// Rows [row_begin, row_end), columns ascending (a direction of one or two
// points folds its links onto one column, whose entries add).
ComplexCsrRows twisted_laplacian_rows(const TwistedLaplacian& spec, std::int64_t row_begin, std::int64_t row_end);

// Entries of every row: the diagonal and two links a direction, one where it
// has two points (both links reach the same neighbour), none where it has one
// (its links fold onto the diagonal).
std::int64_t twisted_laplacian_row_length(const TwistedLaplacian& spec);

// All nx ny nz eigenvalues, ascending.
std::vector<double> twisted_laplacian_eigenvalues(const TwistedLaplacian& spec);

}  // namespace blockeigs::io
