// Every halo transport that runs on the CPU backend (MPI on host memory, and
// MPI staged through pinned buffers, as on GPUs without CUDA-aware MPI): the
// exchange alone delivers the halo rows bit for bit, and the operator built
// on it matches the reference with the same bits whichever transport it used.
#include <gtest/gtest.h>

#include "csr_test_operator.hpp"
#include "expect_error.hpp"
#include "halo_check.hpp"
#include "io/generators.hpp"
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
    test::check_halo_exchange<double>(context, small, test::partition_with_empty_rank(90, test::mpi_size()), t,
                                      {2, 5}, "rank 1 empty");
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
                                             HaloTransport::staged_mpi);
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
                                           HaloTransport::peer);
  });
  test::expect_mentions(message, {"halo transport peer", "CUDA IPC", "device blocks"});
}

}  // namespace
}  // namespace blockeigs
