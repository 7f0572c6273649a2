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

io::CsrRows cube() {
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_3d, 5, 4, 6, 27};
  return io::generate_rows(spec, 0, io::generated_rows(spec));
}

TEST(HaloTransports, ExchangeDeliversTheHaloRows) {
  const auto context = spmm::Context::host();
  const io::CsrRows power = test::power_law_matrix(500, 400, 11), laplacian = cube();
  const io::CsrRows small = test::power_law_matrix(90, 50, 5);
  for (HaloTransport t : cpu_transports) {
    for (const io::CsrRows* whole : {&power, &laplacian}) {
      const auto partition = RowPartition::balanced(whole->row_offsets, test::mpi_size());
      test::check_halo_exchange<double>(context, *whole, partition, t, {1, 4, 16, 3, 16}, "balanced");
      test::check_halo_exchange<float>(context, *whole, partition, t, {3, 16}, "balanced, fp32 operator");
    }
    test::check_halo_exchange<double>(context, small, test::partition_with_empty_rank(90, test::mpi_size()), t, {2, 5},
                                      "rank 1 empty");
  }
}

TEST(HaloTransports, OperatorGivesTheSameBitsThroughEachTransport) {
  const auto context = spmm::Context::host();
  io::GeneratorSpec spd;
  spd.kind = io::GeneratorKind::random_spd;
  spd.n = 301;
  spd.nnz_per_row = 6;
  spd.seed = 3;
  const io::CsrRows random = io::generate_rows(spd, 0, io::generated_rows(spd));
  const io::CsrRows power = test::power_law_matrix(500, 400, 11);
  for (const io::CsrRows* whole : {&random, &power}) {
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
  const auto context = spmm::Context::host();
  const io::CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const io::CsrRows rows = io::slice_rows(whole, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<double> automatic(MPI_COMM_WORLD, context, rows, partition);
  EXPECT_EQ(automatic.transport(), HaloTransport::mpi);
  EXPECT_EQ(automatic.halo_transport(), "host memory through MPI");
  EXPECT_FALSE(automatic.halo_through_peer_copies());
  EXPECT_FALSE(automatic.device_pointers_to_mpi());
  solver::DistributedOperator<double> staged(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                             {.transport = HaloTransport::staged_mpi});
  EXPECT_EQ(staged.halo_transport(), "MPI, staged through host");
}

// CUDA IPC needs device blocks: asked for on the host, every rank says so.
TEST(HaloTransports, PeerCopiesNeedDevices) {
  const auto context = spmm::Context::host();
  const io::CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const io::CsrRows rows = io::slice_rows(whole, partition.begin(rank), partition.end(rank));
  const std::string message = test::input_error_message([&] {
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                           {.transport = HaloTransport::peer});
  });
  test::expect_mentions(message, {"execution.halo.transport ipc", "CUDA IPC", "device blocks"});
}

// NCCL needs device blocks, and a build with NCCL: named on the host, every
// rank says which is missing.
TEST(HaloTransports, NcclNeedsDevicesAndABuildWithIt) {
  const auto context = spmm::Context::host();
  const io::CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const io::CsrRows rows = io::slice_rows(whole, partition.begin(rank), partition.end(rank));
  const std::string message = test::input_error_message([&] {
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                           {.transport = HaloTransport::nccl});
  });
  EXPECT_FALSE(solver::ranks_share_a_device(MPI_COMM_WORLD, context));
  if (solver::nccl_compiled())
    test::expect_mentions(message, {"execution.halo.transport nccl", "device blocks"});
  else
    test::expect_mentions(message, {"execution.halo.transport nccl", "no NCCL", "BLOCKEIGS_NCCL"});
}

// execution.halo's transport (solver::user_halo_options) counts for device
// blocks, where mpi means staged through the host unless MPI is CUDA-aware;
// host blocks ignore it: the operator on the CPU backend still uses MPI on
// host memory. The other options pass as they are.
TEST(HaloTransports, UserChoiceCountsForDeviceBlocks) {
  auto on_device = [](HaloTransport t, std::optional<bool> aware = std::nullopt) {
    return solver::user_halo_options({.transport = t, .cuda_aware_mpi = aware}, Space::device).transport;
  };
  EXPECT_EQ(on_device(HaloTransport::automatic), HaloTransport::automatic);
  EXPECT_EQ(on_device(HaloTransport::peer), HaloTransport::peer);
  EXPECT_EQ(on_device(HaloTransport::nccl), HaloTransport::nccl);
  EXPECT_EQ(on_device(HaloTransport::staged_mpi), HaloTransport::staged_mpi);
  EXPECT_EQ(on_device(HaloTransport::mpi),
            solver::mpi_is_cuda_aware() ? HaloTransport::mpi : HaloTransport::staged_mpi);
  EXPECT_EQ(on_device(HaloTransport::mpi, true), HaloTransport::mpi);
  EXPECT_EQ(on_device(HaloTransport::mpi, false), HaloTransport::staged_mpi);
  EXPECT_TRUE(solver::mpi_is_cuda_aware(true));
  EXPECT_FALSE(solver::mpi_is_cuda_aware(false));

  const solver::HaloOptions host = solver::user_halo_options(
      {.transport = HaloTransport::nccl, .peer = false, .cuda_aware_mpi = true, .piece_bytes = 4096}, Space::host);
  EXPECT_EQ(host.transport, HaloTransport::automatic);
  EXPECT_FALSE(host.peer);
  EXPECT_EQ(host.cuda_aware_mpi, std::optional<bool>(true));
  EXPECT_EQ(host.piece_bytes, 4096);
  const io::CsrRows whole = cube();
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const io::CsrRows rows = io::slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank()));
  solver::DistributedOperator<double> op(MPI_COMM_WORLD, spmm::Context::host(), rows, partition, Algorithm::automatic,
                                         host);
  EXPECT_EQ(op.transport(), HaloTransport::mpi);
}

// The staged halo cuts each message into pieces of execution.halo.piece_bytes
// (odd sizes cut values apart); the operator gives the reference's result
// whatever the piece.
TEST(HaloTransports, StagedPiecesOfAnySize) {
  const auto context = spmm::Context::host();
  const io::CsrRows whole = test::power_law_matrix(500, 400, 11);
  for (const auto& partition : {RowPartition::balanced(whole.row_offsets, test::mpi_size()),
                                test::partition_with_empty_rank(500, test::mpi_size())}) {
    const io::CsrRows rows = io::slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank()));
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
