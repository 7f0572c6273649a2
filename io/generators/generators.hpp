// Matrices for tests and demos, generated row block by row block so that each
// rank builds only its own rows. All are symmetric; the grid Laplacians are
// positive definite with closed-form eigenvalues, random_spd is strictly
// diagonally dominant with a positive diagonal, fem_p1's stiffness and mass
// matrices are positive definite and their pencil's eigenvalues are
// closed-form, and the graph Laplacians of a path and a cycle are positive
// semidefinite (the constant vector spans their null space).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/csr_rows.hpp"

namespace blockeigs::io {

enum class GeneratorKind {
  laplacian_1d,
  laplacian_2d,
  laplacian_3d,
  random_spd,
  fem_p1_1d,
  fem_p1_2d,
  fem_p1_3d,        // linear elements on the unit interval, square, cube (fem_p1.hpp)
  graph_laplacian,  // D - A of a path or a cycle of n vertices
};

// fem_p1's two matrices: K (stiffness) and M (mass) of K x = lambda M x.
enum class FemPart { stiffness, mass };

// graph_laplacian's graph: 0 - 1 - ... - (n-1), and the same closed by the edge (n-1, 0).
enum class GraphKind { path, cycle };

struct GeneratorSpec {
  GeneratorKind kind = GeneratorKind::laplacian_3d;
  std::int64_t nx = 1, ny = 1, nz = 1;  // grid points per dimension (Laplacians; fem_p1's interior nodes)
  int stencil = 7;                      // 2D: 5; 3D: 7 or 27; 1D: 3
  std::int64_t n = 0;                   // random_spd: rows; graph_laplacian: vertices
  std::int64_t nnz_per_row = 8;         // random_spd: mean off-diagonal entries per row
  std::uint64_t seed = 0;               // random_spd: pattern and values
  // `renumber: {seed: N}`: the same matrix under a random symmetric
  // permutation P (row/column i of the result is row/column perm[i] of the
  // natural one), for testing and benchmarking arbitrary numberings.
  bool renumber = false;
  std::uint64_t renumber_seed = 0;
  FemPart part = FemPart::stiffness;  // fem_p1
  GraphKind graph = GraphKind::path;  // graph_laplacian
  // laplacian_3d's `boundary: periodic` (7-point) with Bloch phases
  // `phase: [tx, ty, tz]`: the twisted Laplacian (twisted_laplacian.hpp), a
  // complex Hermitian matrix, whose rows generate_complex_rows makes.
  bool periodic = false;
  std::array<double, 3> phase{0, 0, 0};
};

// Whether the generator's matrix is complex (generate_complex_rows, not generate_rows).
bool generates_complex(const GeneratorSpec& spec);

std::string_view to_string(FemPart part);     // "stiffness", "mass"
std::string_view to_string(GraphKind graph);  // "path", "cycle"

// Throws InputError (naming `source`, e.g. "configs/demo.yaml: matrix.generator")
// when sizes are not positive or the stencil does not fit the dimension.
void validate(const GeneratorSpec& spec, const std::string& source);

std::int64_t generated_rows(const GeneratorSpec& spec);

// The number of nonzeros, without generating anything (for the memory plan):
// exact for all but random_spd, for which it is the expected count
// n (1 + nnz_per_row). Checks the spec first (validate).
std::int64_t generated_nnz(const GeneratorSpec& spec);

// Row offsets of the whole matrix (rows + 1 entries, from 0 to nnz), for
// partitioning without building the matrix.
std::vector<std::int64_t> generated_row_offsets(const GeneratorSpec& spec);

// Rows [row_begin, row_end) of the generated matrix (renumbered when the spec
// says so; each row's columns ascend either way). A complex generator's rows
// come from generate_complex_rows; here they are refused.
CsrRows generate_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end);
ComplexCsrRows generate_complex_rows(const GeneratorSpec& spec, std::int64_t row_begin, std::int64_t row_end);

// Closed-form eigenvalues of the Laplacians, ascending (all of them; for tests;
// a renumbering leaves them as they are).
// Dirichlet boundary, unit spacing: 1D eigenvalues 2 - 2 cos(pi j / (n + 1)).
// The 27-point stencil's eigenvalues are closed-form too (tensor structure).
// graph_laplacian: a path's are 2 - 2 cos(pi j / n), a cycle's 2 - 2 cos(2 pi j / n),
// j = 0..n-1 (one zero, the constant vector's). Periodic (twisted): sum_d 2 - 2 cos((2 pi j_d + t_d) / n_d).
std::vector<double> laplacian_eigenvalues(const GeneratorSpec& spec);

// Closed-form eigenvalues of fem_p1's pencil K x = lambda M x on spec's grid
// (spec.part does not matter), ascending, all of them: sums over the
// directions of lambda_j = (6 / h^2) (1 - cos(j pi h)) / (2 + cos(j pi h)),
// h = 1 / (n + 1), j = 1..n.
std::vector<double> fem_p1_eigenvalues(const GeneratorSpec& spec);

// "3D Laplacian 32x32x32 (7-point)", "3D P1 mass 8x8x8 (linear elements, Dirichlet)",
// "graph Laplacian of a cycle of 100 vertices", with ", renumbered (seed N)" when it is.
std::string describe(const GeneratorSpec& spec);

}  // namespace blockeigs::io
