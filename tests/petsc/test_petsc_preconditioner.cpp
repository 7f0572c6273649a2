// PETSc's PCs as our preconditioners (solver/precond/petsc_pc.hpp), at np 1-4
// on the CPU backend: block CG with a PC against PETSc's own KSPCG with the
// same PC (same solutions, no more iterations), LOBPCG with GAMG on a
// Laplacian against its closed form (fewer iterations than without), one
// rank without rows, and options PETSc rejects or does not use.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscksp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/petsc_pc.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

class PetscEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(PetscInitializeNoArguments(), 0); }
  void TearDown() override { ASSERT_EQ(PetscFinalize(), 0); }
};
[[maybe_unused]] ::testing::Environment* const petsc_environment =
    ::testing::AddGlobalTestEnvironment(new PetscEnvironment);

int rank_of() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int size_of() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

struct Problem {
  dense::Context context = dense::Context::host();
  io::GeneratorSpec spec;
  CsrRows whole, mine;
  solver::RowPartition partition;
  std::unique_ptr<solver::DistributedOperator<double>> A;

  Problem(io::GeneratorSpec s, bool empty_rank) : spec(s) {
    whole = io::generate_rows(spec, 0, io::generated_rows(spec));
    partition = empty_rank ? test::partition_with_empty_rank(whole.global_rows, size_of())
                           : solver::RowPartition::balanced(whole.row_offsets, size_of());
    mine = slice_rows(whole, partition.begin(rank_of()), partition.end(rank_of()));
    A = std::make_unique<solver::DistributedOperator<double>>(MPI_COMM_WORLD, context, mine, partition);
  }
  std::int64_t m() const { return A->local_rows(); }
  std::unique_ptr<solver::Preconditioner<double>> pc(const std::string& options) const {
    return solver::make_petsc_preconditioner(MPI_COMM_WORLD, context, mine, partition, options);
  }
};

#define PETSC_OK(call) ASSERT_EQ((call), 0) << #call

// KSPCG with `options` under the prefix ref_ on column j of B; x_out gets the
// solution's local rows; returns the iterations.
void ksp_cg(const Problem& p, const std::string& options, const std::vector<double>& b, std::vector<double>& x_out,
            int& iterations) {
  std::vector<PetscInt> offsets(p.mine.row_offsets.begin(), p.mine.row_offsets.end());
  std::vector<PetscInt> columns(p.mine.col_indices.begin(), p.mine.col_indices.end());
  Mat A;
  const auto m = static_cast<PetscInt>(p.m()), n = static_cast<PetscInt>(p.whole.global_rows);
  PETSC_OK(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, m, n, n, offsets.data(), columns.data(), p.mine.values.data(),
                                     &A));
  std::string prefixed;
  for (std::size_t i = 0; i < options.size(); ++i)
    prefixed +=
        (options[i] == '-' && (i == 0 || options[i - 1] == ' ')) ? std::string("-ref_") : std::string(1, options[i]);
  PETSC_OK(PetscOptionsInsertString(nullptr, prefixed.c_str()));
  KSP ksp;
  PETSC_OK(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PETSC_OK(KSPSetOptionsPrefix(ksp, "ref_"));
  PETSC_OK(KSPSetOperators(ksp, A, A));
  PETSC_OK(KSPSetType(ksp, KSPCG));
  PETSC_OK(KSPSetTolerances(ksp, 1e-10, 0.0, PETSC_DEFAULT, 10000));
  PETSC_OK(KSPSetFromOptions(ksp));
  Vec vb, vx;
  PETSC_OK(MatCreateVecs(A, &vx, &vb));
  PetscScalar* a = nullptr;
  PETSC_OK(VecGetArray(vb, &a));
  std::copy(b.begin(), b.end(), a);
  PETSC_OK(VecRestoreArray(vb, &a));
  PETSC_OK(KSPSolve(ksp, vb, vx));
  PetscInt its = 0;
  PETSC_OK(KSPGetIterationNumber(ksp, &its));
  iterations = static_cast<int>(its);
  const PetscScalar* xa = nullptr;
  PETSC_OK(VecGetArrayRead(vx, &xa));
  x_out.assign(xa, xa + p.m());
  PETSC_OK(VecRestoreArrayRead(vx, &xa));
  VecDestroy(&vb);
  VecDestroy(&vx);
  KSPDestroy(&ksp);
  MatDestroy(&A);
  PetscOptionsClear(nullptr);
}

void compare_with_ksp(const std::string& options) {
  Problem p({io::GeneratorKind::laplacian_2d, 40, 36, 1, 5}, false);
  const std::int64_t s = 3, m = p.m();
  dense::DenseBlock<double> B(Space::host, m, s), X(Space::host, m, s);
  solver::fill_random(p.context, B.view(), 21, p.A->first_row());
  std::fill(X.data(), X.data() + m * s, 0.0);
  auto M = p.pc(options);
  solver::BlockCgOptions o;
  o.rtol = 1e-10;
  const auto r = solver::block_cg<double>(*p.A, B.cview(), X.view(), o, M.get());
  EXPECT_TRUE(r.all_converged()) << options;
  int most = 0;
  double worst = 0, scale = 0;
  for (std::int64_t j = 0; j < s; ++j) {
    std::vector<double> b(m), x;
    for (std::int64_t i = 0; i < m; ++i) b[i] = B.view()(i, j);
    int its = 0;
    ksp_cg(p, options, b, x, its);
    most = std::max(most, its);
    for (std::int64_t i = 0; i < m; ++i) {
      worst = std::max(worst, std::abs(x[i] - X.view()(i, j)));
      scale = std::max(scale, std::abs(x[i]));
    }
  }
  double all[2] = {worst, scale};
  MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LE(all[0], 1e-6 * all[1]) << options;
  // A block method with the same PC needs no more iterations than one column alone.
  EXPECT_LE(r.total_iterations, most + 1) << options << ": " << r.total_iterations << " vs KSPCG " << most;
  EXPECT_GT(r.total_iterations, 0);
}

TEST(PetscPreconditioner, BlockCgMatchesKspCgWithGamg) { compare_with_ksp("-pc_type gamg"); }

TEST(PetscPreconditioner, BlockCgMatchesKspCgWithBlockJacobiIcc) {
  compare_with_ksp("-pc_type bjacobi -sub_pc_type icc");
}

TEST(PetscPreconditioner, LobpcgWithGamgFindsTheLaplaciansSmallest) {
  Problem p({io::GeneratorKind::laplacian_3d, 14, 12, 10, 7}, true);
  solver::LobpcgOptions o;
  o.k = 5;
  o.tolerance = 1e-8;
  o.max_iterations = 2000;
  const auto plain = solver::lobpcg<double>(*p.A, o);
  auto M = p.pc("-pc_type gamg");
  const auto r = solver::lobpcg<double>(*p.A, o, M.get());
  ASSERT_TRUE(r.all_converged());
  const std::vector<double> exact = io::laplacian_eigenvalues(p.spec);
  for (int j = 0; j < o.k; ++j) EXPECT_NEAR(r.eigenvalues[j], exact[j], 1e-9 * exact[j]) << j;
  EXPECT_LE(3 * r.iterations, plain.iterations) << r.iterations << " vs " << plain.iterations;
}

std::string input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    const auto* agreed = dynamic_cast<const solver::AgreedError*>(&e);
    EXPECT_TRUE(dynamic_cast<const InputError*>(&e) || (agreed && agreed->is_input_error())) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an input error";
  return {};
}

TEST(PetscPreconditioner, RejectedAndUnusedOptionsAreInputErrors) {
  Problem p({io::GeneratorKind::laplacian_1d, 50, 1, 1, 3}, false);
  const std::string rejected = input_error([&] { p.pc("-pc_type nosuchpc"); });
  EXPECT_NE(rejected.find("PETSc rejected the options"), std::string::npos) << rejected;
  EXPECT_NE(rejected.find("nosuchpc"), std::string::npos) << rejected;
  const std::string unused = input_error([&] { p.pc("-pc_type jacobi -pc_typo gamg"); });
  EXPECT_NE(unused.find("did not use the option(s) -pc_typo"), std::string::npos) << unused;
  // A PC still builds after the failures (their options were cleared).
  auto M = p.pc("-pc_type jacobi");
  dense::DenseBlock<double> R(Space::host, p.m(), 2), W(Space::host, p.m(), 2);
  solver::fill_random(p.context, R.view(), 3, p.A->first_row());
  M->apply(R.cview(), W.view());
  for (std::int64_t i = 0; i < p.m() * 2; ++i) EXPECT_NEAR(W.data()[i], R.data()[i] / 2.0, 1e-15);
}

}  // namespace
}  // namespace blockeigs
