// PETSc Mats in the input's numbering (create_petsc_operator and
// create_petsc_pencil on DistributedRows), at np 1-4: a randomly numbered
// grid whose rows a graph partition moved and a band order reordered gives the
// same Mat, product for product, as the same file split contiguously, where
// the operator's numbering is the input's. MatMult, MatMatMult (with a leading
// dimension past the local rows) and MatGetDiagonal, for A and for the
// pencil's B.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscmat.h>

#include <cmath>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "solver/operator/load_matrix_b.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/partition/graph_partition.hpp"
#include "solver/operator/partition/local_order.hpp"
#include "solver/petsc/petsc_operator.hpp"
#include "tests/petsc/slepc_test_support.hpp"

namespace blockeigs {
namespace {

// fem_p1 on a 12 x 10 grid, randomly numbered (a mesh numbered arbitrarily).
io::MatrixConfig fem(io::FemPart part) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator.kind = io::GeneratorKind::fem_p1_2d;
  config.generator.nx = 12;
  config.generator.ny = 10;
  config.generator.part = part;
  config.generator.renumber = true;
  config.generator.renumber_seed = 7;
  return config;
}

// The input split contiguously (the operator's numbering is the input's), or
// moved by a graph partition and ordered by band where this build can.
solver::DistributedRows load(const io::MatrixConfig& config, bool moved) {
  solver::DistributedRows m = solver::load_distributed_rows(config, PETSC_COMM_WORLD);
  if (moved) {
    const PartitionMethod method =
        solver::graph_partitioner_compiled() ? PartitionMethod::graph : PartitionMethod::contiguous;
    solver::distribute_rows(m, method, PETSC_COMM_WORLD, LocalOrder::band);
  } else {
    solver::distribute_rows(m, PartitionMethod::contiguous, PETSC_COMM_WORLD, LocalOrder::none);
  }
  return m;
}

// max_i |a_i - b_i| over every rank.
double distance(Vec a, Vec b) {
  Vec d = nullptr;
  PETSC_OK(VecDuplicate(a, &d));
  PETSC_OK(VecWAXPY(d, -1.0, b, a));
  PetscReal norm = 0;
  PETSC_OK(VecNorm(d, NORM_INFINITY, &norm));
  PETSC_OK(VecDestroy(&d));
  return norm;
}

// Entry i of column j of the test blocks, by global index: the same in both Mats' numbering.
double entry(PetscInt i, PetscInt j) { return std::cos(0.37 * double(i) * double(j + 1)) + 0.1 * double(j); }

// `moved` and `plain` are the same matrix: equal local sizes, products and diagonals.
void expect_same_mat(Mat moved, Mat plain) {
  PetscInt m_moved = 0, m_plain = 0, n = 0, begin = 0, end = 0;
  PETSC_OK(MatGetLocalSize(moved, &m_moved, nullptr));
  PETSC_OK(MatGetLocalSize(plain, &m_plain, nullptr));
  // Agreed, so that a mismatch fails every rank rather than leaving the others in a product.
  int mismatched = m_moved != m_plain ? 1 : 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &mismatched, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  ASSERT_EQ(mismatched, 0) << "local rows " << m_moved << " against " << m_plain;
  PETSC_OK(MatGetSize(plain, &n, nullptr));
  Vec x = nullptr, y_moved = nullptr, y_plain = nullptr;
  PETSC_OK(MatCreateVecs(plain, &x, &y_plain));
  PETSC_OK(VecDuplicate(y_plain, &y_moved));
  PETSC_OK(VecGetOwnershipRange(x, &begin, &end));
  for (PetscInt i = begin; i < end; ++i) PETSC_OK(VecSetValue(x, i, entry(i, 0), INSERT_VALUES));
  PETSC_OK(VecAssemblyBegin(x));
  PETSC_OK(VecAssemblyEnd(x));
  PETSC_OK(MatMult(moved, x, y_moved));
  PETSC_OK(MatMult(plain, x, y_plain));
  EXPECT_LE(distance(y_moved, y_plain), 1e-12);
  PETSC_OK(MatGetDiagonal(moved, y_moved));
  PETSC_OK(MatGetDiagonal(plain, y_plain));
  EXPECT_EQ(distance(y_moved, y_plain), 0.0);  // copied values, moved

  // Three columns with a leading dimension past the local rows.
  const PetscInt k = 3, lda = m_plain + 2;
  std::vector<PetscScalar> storage(static_cast<std::size_t>(lda * k), std::nan(""));
  for (PetscInt j = 0; j < k; ++j)
    for (PetscInt i = begin; i < end; ++i) storage[j * lda + (i - begin)] = entry(i, j);
  Mat B = nullptr, C_moved = nullptr, C_plain = nullptr;
  PETSC_OK(MatCreateDense(PETSC_COMM_WORLD, m_plain, PETSC_DECIDE, n, k, storage.data(), &B));
  PETSC_OK(MatDenseSetLDA(B, lda));
  PETSC_OK(MatMatMult(moved, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C_moved));
  PETSC_OK(MatMatMult(plain, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C_plain));
  PETSC_OK(MatAXPY(C_moved, -1.0, C_plain, SAME_NONZERO_PATTERN));
  PetscReal norm = 0;
  PETSC_OK(MatNorm(C_moved, NORM_INFINITY, &norm));
  EXPECT_LE(norm, 1e-12);
  for (Mat* mat : {&B, &C_moved, &C_plain}) PETSC_OK(MatDestroy(mat));
  for (Vec* vec : {&x, &y_moved, &y_plain}) PETSC_OK(VecDestroy(vec));
}

TEST(PetscInputNumbering, OperatorMatchesTheContiguousSplit) {
  const auto context = test::petsc_test_context();
  const solver::DistributedRows moved = load(fem(io::FemPart::stiffness), true);
  const solver::DistributedRows plain = load(fem(io::FemPart::stiffness), false);
  ASSERT_FALSE(moved.numbering.is_identity());
  ASSERT_TRUE(plain.numbering.is_identity());
  Mat A_moved = solver::create_petsc_operator(PETSC_COMM_WORLD, context, moved);
  Mat A_plain = solver::create_petsc_operator(PETSC_COMM_WORLD, context, plain);
  expect_same_mat(A_moved, A_plain);
  PETSC_OK(MatDestroy(&A_moved));
  PETSC_OK(MatDestroy(&A_plain));
}

TEST(PetscInputNumbering, PencilMatchesTheContiguousSplit) {
  const auto context = test::petsc_test_context();
  const solver::DistributedRows a_moved = load(fem(io::FemPart::stiffness), true);
  const solver::DistributedRows a_plain = load(fem(io::FemPart::stiffness), false);
  const solver::DistributedRows b_moved = solver::load_matrix_b(fem(io::FemPart::mass), a_moved, PETSC_COMM_WORLD);
  const solver::DistributedRows b_plain = solver::load_matrix_b(fem(io::FemPart::mass), a_plain, PETSC_COMM_WORLD);
  solver::PetscPencil moved = solver::create_petsc_pencil(PETSC_COMM_WORLD, context, a_moved, b_moved);
  solver::PetscPencil plain = solver::create_petsc_pencil(PETSC_COMM_WORLD, context, a_plain, b_plain);
  expect_same_mat(moved.A, plain.A);
  expect_same_mat(moved.B, plain.B);
  for (Mat* mat : {&moved.A, &moved.B, &plain.A, &plain.B}) PETSC_OK(MatDestroy(mat));
}

}  // namespace
}  // namespace blockeigs
