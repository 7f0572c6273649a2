// Stopping between iterations and going on from what was kept (the solvers'
// between_iterations, which checkpoints and signals use), at np 1-4 with a
// rank that owns no rows: the callback runs at the same iteration on every
// rank, a stop is reported as interrupted, and a run resumed from the kept
// block reaches the uninterrupted run's answer: LOBPCG from X (restarted
// without P: at most 10% more iterations in all), block CG from X and its
// next search block P (the same iterations, the same solution).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

struct Problem {
  dense::Context context = dense::Context::host();
  std::unique_ptr<solver::DistributedOperator<double>> A;

  explicit Problem(io::GeneratorSpec spec) {
    const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
    int size = 1, rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    const solver::RowPartition partition = test::partition_with_empty_rank(whole.global_rows, size);
    A = std::make_unique<solver::DistributedOperator<double>>(
        MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  }
  std::int64_t m() const { return A->local_rows(); }
  dense::DenseBlock<double> from_host(const std::vector<double>& values, std::int64_t cols) const {
    dense::DenseBlock<double> block(Space::host, m(), cols);
    std::copy(values.begin(), values.end(), block.data());
    return block;
  }
};

io::GeneratorSpec laplacian(io::GeneratorKind kind, std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  io::GeneratorSpec spec;
  spec.kind = kind;
  spec.nx = nx;
  spec.ny = ny;
  spec.nz = nz;
  spec.stencil = kind == io::GeneratorKind::laplacian_3d ? 7 : 5;
  return spec;
}

// Every rank saw the same iteration: its minimum and maximum over the ranks agree.
bool same_on_every_rank(int iteration) {
  int low = iteration, high = iteration;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return low == high;
}

TEST(InterruptResume, LobpcgStopsWhereAskedAndGoesOnFromItsBlock) {
  Problem p(laplacian(io::GeneratorKind::laplacian_3d, 12, 12, 12));
  solver::LobpcgOptions options;
  options.k = 4;
  options.tolerance = 1e-9;
  const auto reference = solver::lobpcg<double>(*p.A, options);
  ASSERT_TRUE(reference.all_converged());

  constexpr int stop_at = 15;
  ASSERT_LT(stop_at, reference.iterations);
  std::vector<double> kept;
  int block = 0, calls = 0;
  bool agreed = true;
  options.between_iterations = [&](const solver::LobpcgIterate& it) {
    EXPECT_EQ(it.iteration, calls++);  // once after each iteration's test, from the start's
    agreed = agreed && same_on_every_rank(it.iteration);
    EXPECT_EQ(static_cast<int>(it.values.size()), it.block_size);
    if (it.iteration < stop_at) return false;
    kept = it.block();
    block = it.block_size;
    return true;
  };
  const auto stopped = solver::lobpcg<double>(*p.A, options);
  EXPECT_TRUE(agreed);
  EXPECT_EQ(stopped.stop, solver::LobpcgStop::interrupted);
  EXPECT_EQ(stopped.iterations, stop_at);
  EXPECT_FALSE(stopped.all_converged());
  ASSERT_EQ(static_cast<std::int64_t>(kept.size()), p.m() * block);

  options.between_iterations = nullptr;
  const auto start = p.from_host(kept, block);
  const auto resumed = solver::lobpcg<double>(*p.A, options, nullptr, start.cview());
  ASSERT_TRUE(resumed.all_converged());
  for (int j = 0; j < options.k; ++j)
    EXPECT_NEAR(resumed.eigenvalues[j], reference.eigenvalues[j], 1e-10 * reference.eigenvalues[j]) << "pair " << j;
  EXPECT_LE(stop_at + resumed.iterations, 1.1 * reference.iterations);
}

TEST(BlockCgInterruptResume, GoesOnFromXAndPAsIfNeverStopped) {
  Problem p(laplacian(io::GeneratorKind::laplacian_2d, 40, 40, 1));
  constexpr std::int64_t s = 4;
  auto B = p.from_host(std::vector<double>(p.m() * s), s);
  solver::fill_random(p.context, B.view(), 3, p.A->first_row());
  solver::BlockCgOptions options;
  options.rtol = 1e-10;
  auto X = p.from_host(std::vector<double>(p.m() * s, 0.0), s);
  const auto reference = solver::block_cg<double>(*p.A, B.cview(), X.view(), options);
  ASSERT_TRUE(reference.all_converged());

  constexpr int stop_at = 12;
  ASSERT_LT(stop_at + 2, reference.total_iterations);
  std::vector<double> kept_x, kept_p;
  int width = 0;
  bool agreed = true;
  options.between_iterations = [&](const solver::BlockCgIterate& it) {
    agreed = agreed && same_on_every_rank(it.iteration);
    if (it.iteration < stop_at) return false;
    kept_x = it.solution();
    kept_p = it.search();
    width = it.search_width;
    return true;
  };
  auto Y = p.from_host(std::vector<double>(p.m() * s, 0.0), s);
  const auto stopped = solver::block_cg<double>(*p.A, B.cview(), Y.view(), options);
  EXPECT_TRUE(agreed);
  EXPECT_EQ(stopped.stop, solver::BlockCgStop::interrupted);
  EXPECT_EQ(stopped.total_iterations, stop_at);
  ASSERT_GT(width, 0);

  // Resumed from (X, P): the same iterations, the same solution.
  options.between_iterations = nullptr;
  auto Z = p.from_host(kept_x, s);
  const auto P = p.from_host(kept_p, width);
  const auto resumed = solver::block_cg<double>(*p.A, B.cview(), Z.view(), options, nullptr, P.cview());
  ASSERT_TRUE(resumed.all_converged());
  EXPECT_LE(std::abs(stop_at + resumed.total_iterations - reference.total_iterations), 1);
  solver::axpby(p.context, -1.0, X.cview(), 1.0, Z.view());
  const auto difference = solver::column_norms(p.context, MPI_COMM_WORLD, Z.cview());
  const auto scale = solver::column_norms(p.context, MPI_COMM_WORLD, X.cview());
  for (std::int64_t j = 0; j < s; ++j) EXPECT_LE(difference[j], 1e-9 * scale[j]) << "column " << j;
}

TEST(BlockCgInterruptResume, ASearchBlockOfTheWrongShapeIsRefused) {
  Problem p(laplacian(io::GeneratorKind::laplacian_2d, 10, 10, 1));
  auto B = p.from_host(std::vector<double>(p.m() * 2, 1.0), 2);
  auto X = p.from_host(std::vector<double>(p.m() * 2, 0.0), 2);
  const auto P = p.from_host(std::vector<double>(p.m() * 3, 1.0), 3);  // more columns than B
  EXPECT_THROW(solver::block_cg<double>(*p.A, B.cview(), X.view(), solver::BlockCgOptions{}, nullptr, P.cview()),
               InputError);
}

}  // namespace
}  // namespace blockeigs
