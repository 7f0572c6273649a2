// The distributed block operations under the solvers, at np 1-4 (with and
// without a rank that owns no rows): Gram matrices and column norms agree
// with the whole block, carry the same bits on every rank, and repeat
// exactly (the fixed-order tree reduction).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/checks.hpp"
#include "solver/blocks/block_ops.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

// Every rank holds the same value, to the bit.
bool same_on_every_rank(const std::vector<double>& v) {
  std::vector<double> lo(v.size()), hi(v.size());
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(v.data(), lo.data(), int(v.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(v.data(), hi.data(), int(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return std::memcmp(lo.data(), v.data(), v.size() * sizeof(double)) == 0 &&
         std::memcmp(hi.data(), v.data(), v.size() * sizeof(double)) == 0;
}

TEST(DistributedBlockOps, GramAndNormsMatchTheWholeBlockOnEveryRank) {
  const std::int64_t N = 1001, k1 = 4, k2 = 3;
  int rank = 0, size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  for (const auto& part : {solver::RowPartition::uniform(N, size), test::partition_with_empty_rank(N, size)}) {
    const std::int64_t n = part.rows(rank), first = part.begin(rank);
    const dense::Context ctx = dense::Context::host();
    dense::DenseBlock<double> X(Space::host, n, k1), Y(Space::host, n, k2, k2 + 1);
    solver::fill_random<double>(ctx, X.view(), 11, first);
    solver::fill_random<double>(ctx, Y.view(), 12, first);
    const solver::HostMatrix G = solver::gram<double>(ctx, MPI_COMM_WORLD, X.cview(), Y.cview());
    const std::vector<double> norms = solver::column_norms<double>(ctx, MPI_COMM_WORLD, Y.cview());
    EXPECT_TRUE(same_on_every_rank(G.values()));
    EXPECT_TRUE(same_on_every_rank(norms));
    // Against the whole block, which the hash lets every rank build.
    dense::DenseBlock<double> Xw(Space::host, N, k1), Yw(Space::host, N, k2);
    solver::fill_random<double>(ctx, Xw.view(), 11, 0);
    solver::fill_random<double>(ctx, Yw.view(), 12, 0);
    for (std::int64_t a = 0; a < k1; ++a)
      for (std::int64_t b = 0; b < k2; ++b) {
        double exact = 0, abs_sum = 0;
        for (std::int64_t i = 0; i < N; ++i) {
          exact += Xw.view()(i, a) * Yw.view()(i, b);
          abs_sum += std::abs(Xw.view()(i, a) * Yw.view()(i, b));
        }
        EXPECT_NEAR(G(a, b), exact, N * 2.3e-16 * abs_sum);
      }
    for (std::int64_t b = 0; b < k2; ++b) {
      double sq = 0;
      for (std::int64_t i = 0; i < N; ++i) sq += Yw.view()(i, b) * Yw.view()(i, b);
      EXPECT_NEAR(norms[b], std::sqrt(sq), N * 2.3e-16 * std::sqrt(sq));
    }
    // The same call again: the same bits.
    const solver::HostMatrix again = solver::gram<double>(ctx, MPI_COMM_WORLD, X.cview(), Y.cview());
    EXPECT_EQ(0, std::memcmp(again.data(), G.data(), G.values().size() * sizeof(double)));
  }
}

TEST(DistributedBlockOps, AllreduceSumsInAFixedTreeOrder) {
  // Contributions of very different magnitudes, so that the association
  // shows in the bits: the result must be exactly the binomial tree's
  // (rank r + d added into rank r, d = 1, 2, 4, ...), on every rank.
  int rank = 0, size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int n = 50;
  auto contribution = [](int r, int i) { return solver::hash_uniform(21, r, i) * std::pow(1e5, r % 3); };
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = contribution(rank, i);
  solver::allreduce_sum(MPI_COMM_WORLD, v.data(), v.size());
  std::vector<std::vector<double>> partial(size, std::vector<double>(n));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < n; ++i) partial[r][i] = contribution(r, i);
  for (int d = 1; d < size; d *= 2)
    for (int r = 0; r + d < size; r += 2 * d)
      for (int i = 0; i < n; ++i) partial[r][i] += partial[r + d][i];
  EXPECT_EQ(0, std::memcmp(v.data(), partial[0].data(), n * sizeof(double)));
  EXPECT_TRUE(same_on_every_rank(v));
}

}  // namespace
}  // namespace blockeigs
