// Exchanges past MPI's int counts, forced on small data: with the chunk limit
// lowered to a few hundred bytes (set_mpi_chunk_limit), the
// helpers of solver/base/large_messages.hpp, the symmetry check, the
// halo plan and exchange, and LOBPCG give the same results as in one piece.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/operator/row_partition.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs {
namespace {

constexpr std::int64_t kSmallLimit = 100;  // not a multiple of 24 or 8: pieces cut elements

// Lowers the limit for one scope, then restores the one before.
struct SmallChunks {
  SmallChunks() : before(solver::set_mpi_chunk_limit(kSmallLimit)) {}
  ~SmallChunks() { solver::set_mpi_chunk_limit(before); }
  std::int64_t before;
};

int rank_of() {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  return rank;
}
int size_of() {
  int size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  return size;
}

TEST(ChunkedExchanges, AlltoallvMatchesOnePiece) {
  const int rank = rank_of(), size = size_of();
  // Rank r sends 37 * (r + q) + 3 values to rank q, each naming (r, q, i).
  std::vector<std::int64_t> send_bytes(size), values;
  for (int q = 0; q < size; ++q) {
    const int count = 37 * (rank + q) + 3;
    send_bytes[q] = count * 8;
    for (int i = 0; i < count; ++i) values.push_back(1000000 * rank + 1000 * q + i);
  }
  const std::vector<std::int64_t> recv_bytes = solver::exchange_counts(MPI_COMM_WORLD, send_bytes);
  const std::int64_t total = std::accumulate(recv_bytes.begin(), recv_bytes.end(), std::int64_t{0});
  std::vector<std::int64_t> whole(total / 8), pieces(total / 8);
  solver::large_alltoallv(MPI_COMM_WORLD, values.data(), send_bytes, whole.data(), recv_bytes);
  {
    SmallChunks small;
    solver::large_alltoallv(MPI_COMM_WORLD, values.data(), send_bytes, pieces.data(), recv_bytes);
  }
  EXPECT_EQ(pieces, whole);
  std::size_t at = 0;
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < 37 * (q + rank) + 3; ++i) EXPECT_EQ(whole[at++], 1000000 * q + 1000 * rank + i);
}

TEST(ChunkedExchanges, BroadcastAndSendInPieces) {
  SmallChunks small;
  const int rank = rank_of(), size = size_of();
  std::vector<double> data(1001, rank == 0 ? 0.0 : -1.0);
  if (rank == 0) std::iota(data.begin(), data.end(), 0.5);
  solver::large_bcast(MPI_COMM_WORLD, data.data(), static_cast<std::int64_t>(data.size()), 0);
  for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], static_cast<double>(i) + 0.5);
  if (size < 2) return;
  std::vector<double> got(data.size(), 0.0);
  if (rank == 1) solver::large_send(MPI_COMM_WORLD, data.data(), 8 * 1001, 0, 5);
  if (rank == 0) solver::large_recv(MPI_COMM_WORLD, got.data(), 8 * 1001, 1, 5);
  if (rank == 0) {
    EXPECT_EQ(got, data);
  }
}

io::GeneratorSpec cube() {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::laplacian_3d;
  spec.nx = 8;
  spec.ny = 7;
  spec.nz = 6;
  spec.renumber = true;  // halos with every rank
  spec.renumber_seed = 5;
  return spec;
}

TEST(ChunkedExchanges, SymmetryCheckInPieces) {
  SmallChunks small;
  const io::GeneratorSpec spec = cube();
  const auto partition = solver::RowPartition::balanced(io::generated_row_offsets(spec), size_of());
  CsrRows rows = io::generate_rows(spec, partition.begin(rank_of()), partition.end(rank_of()));
  EXPECT_NO_THROW(solver::check_symmetric(MPI_COMM_WORLD, rows, partition, "cube"));
  // One off-diagonal entry changed on the last rank with rows: refused on every rank.
  int last = size_of() - 1;
  while (partition.rows(last) == 0) --last;
  if (rank_of() == last) rows.values[1] += 0.5;
  EXPECT_THROW(solver::check_symmetric(MPI_COMM_WORLD, rows, partition, "cube"), Error);
}

std::vector<double> eigenvalues(bool small_chunks) {
  std::optional<SmallChunks> small;
  if (small_chunks) small.emplace();
  const io::GeneratorSpec spec = cube();
  const auto partition = solver::RowPartition::balanced(io::generated_row_offsets(spec), size_of());
  const auto context = dense::Context::host();
  solver::DistributedOperator<double> A(MPI_COMM_WORLD, context,
                                        io::generate_rows(spec, partition.begin(rank_of()), partition.end(rank_of())),
                                        partition);
  solver::LobpcgOptions options;
  options.k = 4;
  options.tolerance = 1e-8;
  options.max_iterations = 2000;
  const auto result = solver::lobpcg<double>(A, options);
  small.reset();
  EXPECT_TRUE(result.all_converged());
  return result.eigenvalues;
}

TEST(ChunkedExchanges, LobpcgGivesTheSameBits) {
  // Halo messages, the halo plan and the small problems' broadcasts all go
  // in 100-byte pieces; the arithmetic is unchanged, so are the bits.
  EXPECT_EQ(eigenvalues(true), eigenvalues(false));
}

}  // namespace
}  // namespace blockeigs
