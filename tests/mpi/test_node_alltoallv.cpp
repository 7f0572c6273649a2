// The all-to-all through node memory (solver/base/node_alltoallv.hpp) gives
// MPI_Alltoallv's bytes: pieces of awkward sizes, slots that cut them in many
// rounds, pairs with nothing to send, a rank with nothing at all, 1 and 3
// threads; and large_alltoallv takes it above its threshold.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/checks.hpp"
#include "solver/base/large_messages.hpp"
#include "solver/base/node_alltoallv.hpp"

namespace blockeigs {
namespace {

struct World {
  int rank = 0, size = 1;
  World() {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  }
};

// Bytes rank r sends to q: uneven, zero for some pairs, none to or from the last rank of 3 or more.
std::int64_t pair_bytes(int r, int q, int size, std::int64_t scale) {
  if (size >= 3 && (r == size - 1 || q == size - 1)) return 0;
  return ((7 * r + 13 * q + 5) % 11) * scale + (r + q) % 3;
}

struct Exchange {
  std::vector<std::int64_t> send_bytes, recv_bytes;
  std::vector<unsigned char> send;
};

Exchange exchange_of(const World& w, std::int64_t scale) {
  Exchange e;
  for (int q = 0; q < w.size; ++q) {
    e.send_bytes.push_back(pair_bytes(w.rank, q, w.size, scale));
    e.recv_bytes.push_back(pair_bytes(q, w.rank, w.size, scale));
    for (std::int64_t i = 0; i < e.send_bytes.back(); ++i)
      e.send.push_back(static_cast<unsigned char>(31 * w.rank + 17 * q + i * 7 + i / 251));
  }
  return e;
}

std::vector<unsigned char> through_mpi(const Exchange& e) {
  std::vector<int> sc(e.send_bytes.begin(), e.send_bytes.end()), rc(e.recv_bytes.begin(), e.recv_bytes.end());
  std::vector<int> sd(sc.size(), 0), rd(rc.size(), 0);
  std::partial_sum(sc.begin(), sc.end() - 1, sd.begin() + 1);
  std::partial_sum(rc.begin(), rc.end() - 1, rd.begin() + 1);
  std::vector<unsigned char> recv(static_cast<std::size_t>(rd.back() + rc.back()) + 1, 0);
  BLOCKEIGS_MPI_CHECK(MPI_Alltoallv(e.send.data(), sc.data(), sd.data(), MPI_BYTE, recv.data(), rc.data(), rd.data(),
                                    MPI_BYTE, MPI_COMM_WORLD));
  recv.pop_back();
  return recv;
}

TEST(NodeAlltoallv, AllRanksOfTheTestsShareANode) { EXPECT_TRUE(solver::all_ranks_on_one_node(MPI_COMM_WORLD)); }

TEST(NodeAlltoallv, MatchesMpiAlltoallvInManyRounds) {
  const World w;
  for (const std::int64_t scale : {0, 1, 1000, 70000})
    for (const std::int64_t slot : {std::int64_t{1}, std::int64_t{7}, std::int64_t{4099}, std::int64_t{1} << 20})
      for (const int threads : {1, 3}) {
        if (10 * scale / slot > 2000) continue;  // thousands of rounds of barriers: slow, nothing new
        omp_set_num_threads(threads);
        const Exchange e = exchange_of(w, scale);
        const std::vector<unsigned char> expected = through_mpi(e);
        std::vector<unsigned char> got(expected.size() + 1, 0xAB);  // one byte past the end must stay
        solver::node_alltoallv(MPI_COMM_WORLD, e.send.data(), e.send_bytes, got.data(), e.recv_bytes, slot);
        EXPECT_EQ(got.back(), 0xAB) << "scale " << scale << ", slot " << slot;
        got.pop_back();
        EXPECT_EQ(got, expected) << "scale " << scale << ", slot " << slot << ", threads " << threads;
      }
  omp_set_num_threads(1);
}

TEST(NodeAlltoallv, LargeAlltoallvTakesItAboveItsThreshold) {
  const World w;
  omp_set_num_threads(4);                      // large_alltoallv's least for the path
  const Exchange e = exchange_of(w, 3 << 20);  // up to 30 MiB a pair: past the 1 MiB threshold
  std::vector<unsigned char> node(
      e.recv_bytes.empty() ? 0 : std::accumulate(e.recv_bytes.begin(), e.recv_bytes.end(), std::int64_t{0}));
  std::vector<unsigned char> mpi(node.size());
  solver::large_alltoallv(MPI_COMM_WORLD, e.send.data(), e.send_bytes, node.data(), e.recv_bytes);
  const bool before = solver::set_node_memory_exchanges(false);
  solver::large_alltoallv(MPI_COMM_WORLD, e.send.data(), e.send_bytes, mpi.data(), e.recv_bytes);
  solver::set_node_memory_exchanges(before);
  EXPECT_TRUE(node == mpi);
  omp_set_num_threads(1);
}

}  // namespace
}  // namespace blockeigs
