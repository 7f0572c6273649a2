// Every halo transport that runs on the CPU backend (MPI on host memory, and
// MPI staged through pinned buffers, as on GPUs without CUDA-aware MPI): the
// exchange alone delivers the halo rows bit for bit, and the operator built
// on it matches the reference with the same bits whichever transport it used.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "csr_test_operator.hpp"
#include "expect_error.hpp"
#include "halo_check.hpp"
#include "io/generators/generators.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/base/large_messages.hpp"
#include "test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HaloTransport;
using solver::RowPartition;

const HaloTransport cpu_transports[] = {HaloTransport::automatic, HaloTransport::mpi, HaloTransport::staged_mpi};

CsrRows cube() {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, 5, 4, 6, 27};
  return io::generate_rows(spec, 0, io::generated_rows(spec));
}

TEST(HaloTransports, ExchangeDeliversTheHaloRows) {
  const auto context = dense::Context::host();
  const CsrRows power = test::power_law_matrix(500, 400, 11), laplacian = cube();
  const CsrRows small = test::power_law_matrix(90, 50, 5);
  for (HaloTransport t : cpu_transports) {
    for (const CsrRows* whole : {&power, &laplacian}) {
      const auto partition = RowPartition::balanced(whole->row_offsets, test::mpi_size());
      test::check_halo_exchange<double>(context, *whole, partition, t, {1, 4, 16, 3, 16}, "balanced");
      test::check_halo_exchange<float>(context, *whole, partition, t, {3, 16}, "balanced, fp32 operator");
    }
    test::check_halo_exchange<double>(context, small, test::partition_with_empty_rank(90, test::mpi_size()), t, {2, 5},
                                      "rank 1 empty");
  }
}

TEST(HaloTransports, OperatorGivesTheSameBitsThroughEachTransport) {
  const auto context = dense::Context::host();
  io::GeneratorSpec spd;
  spd.kind = io::GeneratorKind::random_spd;
  spd.n = 301;
  spd.nnz_per_row = 6;
  spd.seed = 3;
  const CsrRows random = io::generate_rows(spd, 0, io::generated_rows(spd));
  const CsrRows power = test::power_law_matrix(500, 400, 11);
  for (const CsrRows* whole : {&random, &power}) {
    const auto partition = RowPartition::balanced(whole->row_offsets, test::mpi_size());
    const std::vector<double> first =
        test::check_operator_on_transport<double>(context, *whole, partition, cpu_transports[0], 16, "fp64");
    for (HaloTransport t : cpu_transports) {
      EXPECT_EQ(test::check_operator_on_transport<double>(context, *whole, partition, t, 16, "fp64"), first)
          << test::transport_label(t);
      test::check_operator_on_transport<float>(context, *whole, partition, t, 17, "fp32");
    }
  }
  const auto empty = test::partition_with_empty_rank(500, test::mpi_size());
  for (HaloTransport t : cpu_transports)
    test::check_operator_on_transport<double>(context, power, empty, t, 6, "rank 1 empty");
}

TEST(HaloTransports, AutomaticOnTheHostIsMpiOnHostMemory) {
  const auto context = dense::Context::host();
  const CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const CsrRows rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<double> automatic(MPI_COMM_WORLD, context, rows, partition);
  EXPECT_EQ(automatic.transport(), HaloTransport::mpi);
  EXPECT_EQ(automatic.halo_transport(), "host memory through MPI (host blocks)");
  EXPECT_FALSE(automatic.halo_through_peer_copies());
  EXPECT_FALSE(automatic.device_pointers_to_mpi());
  solver::DistributedOperator<double> staged(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                             {.transport = HaloTransport::staged_mpi});
  EXPECT_EQ(staged.halo_transport(), "MPI, staged through host (host blocks, staged)");
}

// On host blocks the transports of device blocks (ipc, nccl) give way to MPI, and the summary says why.
TEST(HaloTransports, DeviceTransportsOnTheHostAreMpi) {
  const auto context = dense::Context::host();
  const CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const CsrRows rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  for (const HaloTransport t : {HaloTransport::peer, HaloTransport::nccl}) {
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                           {.transport = t});
    EXPECT_EQ(op.transport(), HaloTransport::mpi);
    test::expect_mentions(op.halo_transport(), {"host memory through MPI", "counts for device blocks only"});
  }
}

// The one chooser (solver::choose_halo_transport): the user's request against the facts.
TEST(HaloTransports, OneChooserDecides) {
  using solver::TransportFacts;
  const auto choose = [](HaloTransport t, const TransportFacts& facts, bool peer = true) {
    return solver::choose_halo_transport({.transport = t, .peer = peer}, facts).transport;
  };
  const TransportFacts host{};
  EXPECT_EQ(choose(HaloTransport::automatic, host), HaloTransport::mpi);
  EXPECT_EQ(choose(HaloTransport::staged_mpi, host), HaloTransport::staged_mpi);
  EXPECT_EQ(choose(HaloTransport::nccl, host), HaloTransport::mpi);
  const TransportFacts device{.device = true, .ranks = 2, .nccl_compiled = true, .cuda_aware_mpi = false};
  EXPECT_EQ(choose(HaloTransport::automatic, device), HaloTransport::peer);
  EXPECT_EQ(choose(HaloTransport::automatic, device, false), HaloTransport::nccl);
  TransportFacts refused = device;
  refused.peer_refused = true;
  EXPECT_EQ(choose(HaloTransport::automatic, refused), HaloTransport::nccl);
  EXPECT_EQ(choose(HaloTransport::peer, refused), HaloTransport::nccl);  // refused at a wider block
  refused.nccl_compiled = false;
  EXPECT_EQ(choose(HaloTransport::automatic, refused), HaloTransport::staged_mpi);
  refused.cuda_aware_mpi = true;
  EXPECT_EQ(choose(HaloTransport::automatic, refused), HaloTransport::mpi);
  EXPECT_EQ(choose(HaloTransport::mpi, device), HaloTransport::staged_mpi);  // MPI not CUDA-aware: staged
  EXPECT_EQ(choose(HaloTransport::nccl, device), HaloTransport::nccl);
  const solver::TransportChoice why = solver::choose_halo_transport({.transport = HaloTransport::automatic}, refused);
  EXPECT_EQ(why.reason, "auto: no NCCL in this build");
  EXPECT_TRUE(solver::mpi_is_cuda_aware(true));
  EXPECT_FALSE(solver::mpi_is_cuda_aware(false));
}

// The staged halo cuts each message into pieces of execution.halo.piece_bytes
// (odd sizes cut values apart); the operator gives the reference's result
// whatever the piece.
TEST(HaloTransports, StagedPiecesOfAnySize) {
  const auto context = dense::Context::host();
  const CsrRows whole = test::power_law_matrix(500, 400, 11);
  for (const auto& partition : {RowPartition::balanced(whole.row_offsets, test::mpi_size()),
                                test::partition_with_empty_rank(500, test::mpi_size())}) {
    const CsrRows rows = slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank()));
    for (const std::int64_t piece : {std::int64_t{1}, std::int64_t{44}, default_halo_piece_bytes}) {
      solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                             {.transport = HaloTransport::staged_mpi, .piece_bytes = piece});
      EXPECT_EQ(op.transport(), HaloTransport::staged_mpi);
      for (const std::int64_t w : {1, 3, 16})
        test::check_operator_apply(op, context, whole, w, "pieces of " + std::to_string(piece) + " bytes");
    }
  }
}

// The chunked runs (tests/CMakeLists.txt) set BLOCKEIGS_MPI_CHUNK_BYTES, which
// the MPI tests' main takes for the message limit, as the apps do.
TEST(HaloTransports, MessageLimitAsTheEnvironmentSets) {
  const char* text = std::getenv("BLOCKEIGS_MPI_CHUNK_BYTES");
  EXPECT_EQ(solver::mpi_chunk_limit(), text && *text ? std::stoll(text) : default_mpi_chunk_bytes);
}

}  // namespace
}  // namespace blockeigs
