// Every halo transport this machine can run on GPUs (MPI staged through the
// host always; CUDA-aware MPI where MPI says it is; CUDA IPC between ranks of
// one node; NCCL in builds with it), by name: the exchange alone delivers the
// halo rows bit for bit, also to and from a rank with no rows and between
// ranks with no neighbours, and the operator on each matches the reference
// with the same bits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/checks.hpp"
#include "halo_check.hpp"
#include "io/generators/generators.hpp"
#include "csr_test_operator.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

using solver::HaloTransport;

// Skipped on every rank unless every rank sees a device.
class HaloTransportsCuda : public test::GpuTestOnEveryRank {};

TEST_F(HaloTransportsCuda, EachTransportDeliversTheHaloRows) {
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  std::vector<HaloTransport> transports{HaloTransport::automatic, HaloTransport::staged_mpi};
  if (solver::mpi_is_cuda_aware()) transports.push_back(HaloTransport::mpi);
  // These tests run on one node, where CUDA IPC runs between ranks.
  if (test::mpi_size() > 1) transports.push_back(HaloTransport::peer);
  // NCCL needs a GPU per rank; where ranks share one, naming it gives MPI with the reason.
  const bool shared = solver::ranks_share_a_device(MPI_COMM_WORLD, context);
  if (solver::nccl_compiled() && !shared) transports.push_back(HaloTransport::nccl);
  if (solver::nccl_compiled() && shared) {
    const auto partition = solver::RowPartition::uniform(100, test::mpi_size());
    const solver::HaloPlan plan = solver::build_halo_plan(MPI_COMM_WORLD, partition, {});
    const auto halo =
        solver::make_halo_exchange<double>(MPI_COMM_WORLD, context, plan, {.transport = HaloTransport::nccl});
    EXPECT_NE(halo->transport(), HaloTransport::nccl);
    EXPECT_NE(halo->fallback_note().find("NCCL did not start: ranks share a GPU"), std::string::npos)
        << halo->fallback_note();
  }

  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 13, 11, 9, 27};
  const CsrRows laplacian = io::generate_rows(cube, 0, io::generated_rows(cube));
  const CsrRows power = test::power_law_matrix(3000, 2500, 4);
  for (HaloTransport t : transports) {
    for (const CsrRows* whole : {&laplacian, &power}) {
      const auto partition = solver::RowPartition::balanced(whole->row_offsets, test::mpi_size());
      test::check_halo_exchange<double>(context, *whole, partition, t, {1, 16, 3, 64, 17, 64}, "balanced");
      test::check_halo_exchange<float>(context, *whole, partition, t, {3, 16}, "fp32 operator");
    }
  }
  // Rank 1 owns no rows; and rank 0 a block no other rank touches.
  const int size = test::mpi_size();
  const CsrRows small = test::power_law_matrix(90, 50, 5);
  const std::int64_t split = 40;
  const CsrRows separate = test::block_diagonal_matrix({0, split, 120}, 9);
  std::vector<std::int64_t> first_rows{0, split};
  if (size > 1) {
    const auto rest = solver::RowPartition::uniform(120 - split, size - 1);
    for (int r = 0; r < size - 1; ++r) first_rows.push_back(split + rest.end(r));
  } else {
    first_rows.back() = 120;
  }
  for (HaloTransport t : transports) {
    if (t == HaloTransport::peer) continue;  // needs every rank to have a neighbour on its node
    test::check_halo_exchange<double>(context, small, test::partition_with_empty_rank(90, size), t, {2, 16},
                                      "rank 1 empty");
    test::check_halo_exchange<double>(context, separate, solver::RowPartition(first_rows), t, {4, 16},
                                      "rank 0 without neighbours");
    test::check_operator_on_transport<double>(context, power, test::partition_with_empty_rank(3000, size), t, 6,
                                              "rank 1 empty");
  }

  const auto partition = solver::RowPartition::balanced(power.row_offsets, test::mpi_size());
  const std::vector<double> first =
      test::check_operator_on_transport<double>(context, power, partition, transports[0], 16, "power law");
  for (HaloTransport t : transports) {
    EXPECT_EQ(test::check_operator_on_transport<double>(context, power, partition, t, 16, "power law"), first)
        << test::transport_label(t);
    test::check_operator_on_transport<float>(context, power, partition, t, 17, "power law fp32");
  }
}

}  // namespace
}  // namespace blockeigs
