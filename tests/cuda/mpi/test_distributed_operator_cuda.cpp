// The distributed operator on GPUs (one per rank, or ranks sharing one) vs
// the single-rank reference: halos device to device through CUDA IPC (the
// default between GPUs of one node), and through MPI (staged through the
// host, or device pointers when MPI is CUDA-aware). And the context made on
// a thread of its own while the rank does other work (StartingContext).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <thread>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "operator_check.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "test_matrices.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

// Skipped on every rank unless every rank sees a device.
class DistributedOperatorCuda : public test::GpuTestOnEveryRank {};

TEST_F(DistributedOperatorCuda, MatchesReference) {
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 11, 9, 7, 7};
  io::GeneratorSpec spd;
  spd.kind = io::GeneratorKind::random_spd;
  spd.n = 2000;
  spd.nnz_per_row = 9;
  const CsrRows power = test::power_law_matrix(3000, 2500, 4);
  for (const auto& spec : {cube, spd}) {
    const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
    const auto partition = solver::RowPartition::balanced(whole.row_offsets, test::mpi_size());
    for (std::int64_t w : {1, 3, 16, 64})
      test::check_distributed_apply<double>(context, whole, partition, w, io::describe(spec));
  }
  const auto partition = solver::RowPartition::balanced(power.row_offsets, test::mpi_size());
  for (std::int64_t w : {1, 16}) {
    test::check_distributed_apply<double>(context, power, partition, w, "power law");
    test::check_distributed_apply<float>(context, power, partition, w, "power law fp32");
  }
}

// Complex operators on the device: complex rows through the halo as twice the
// reals, the complex SpMM and the scatter of the off-diagonal product; a rank
// without rows from np 2.
TEST_F(DistributedOperatorCuda, ComplexMatchesReference) {
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  const io::TwistedLaplacian spec{11, 9, 7, {0.7, -1.1, 2.3}};
  const ComplexCsrRows bloch = io::twisted_laplacian_rows(spec, 0, 11 * 9 * 7);
  const auto partition = test::partition_with_empty_rank(bloch.global_rows, test::mpi_size());
  for (std::int64_t w : {1, 3, 16, 64}) {
    test::check_complex_apply<std::complex<double>>(context, bloch, partition, w, "twisted Laplacian");
    test::check_complex_apply<std::complex<float>>(context, bloch, partition, w, "twisted Laplacian, single");
  }
}

// Column-major blocks (PETSc's MATDENSECUDA) on the device, a rank without
// rows from np 2: the column-major pack and scatter kernels and the
// column-major SpMM.
TEST_F(DistributedOperatorCuda, ColumnMajorMatchesReference) {
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 11, 9, 7, 7};
  const CsrRows laplace = io::generate_rows(cube, 0, io::generated_rows(cube));
  const CsrRows power = test::power_law_matrix(3000, 2500, 4);
  for (const CsrRows* whole : {&laplace, &power}) {
    const auto partition = test::partition_with_empty_rank(whole->global_rows, test::mpi_size());
    const int rank = test::mpi_rank(MPI_COMM_WORLD);
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context,
                                           slice_rows(*whole, partition.begin(rank), partition.end(rank)), partition);
    for (auto [w, pad] : {std::pair{1, 0}, {16, 0}, {17, 3}, {40, 1}})
      test::check_operator_apply_column_major(op, context, *whole, w, pad,
                                              whole == &laplace ? "3D Laplacian" : "power law");
  }
}

// One operator reused across widths that grow and shrink (send buffers are
// reallocated and re-mapped by the neighbours), with each halo transport.
TEST_F(DistributedOperatorCuda, ReusedAcrossWidthsWithEachTransport) {
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 13, 11, 9, 27};
  const CsrRows whole = io::generate_rows(cube, 0, io::generated_rows(cube));
  const auto partition = solver::RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const CsrRows rows = slice_rows(whole, partition.begin(rank), partition.end(rank));
  for (const bool peer : {true, false}) {
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, rows, partition, Algorithm::automatic,
                                           {.peer = peer});
    // Between ranks of one node (these tests never span nodes) the IPC path
    // must be taken unless it was switched off; then NCCL where it is built.
    if (test::mpi_size() > 1) {
      EXPECT_EQ(op.halo_through_peer_copies(), peer) << op.halo_transport();
      if (!peer && solver::nccl_compiled()) {
        if (solver::ranks_share_a_device(MPI_COMM_WORLD, context)) {
          EXPECT_NE(op.halo_transport().find("ranks share a GPU"), std::string::npos) << op.halo_transport();
        } else {
          EXPECT_EQ(op.transport(), solver::HaloTransport::nccl) << op.halo_transport();
        }
      }
    }
    const char* label = peer ? "peer copies" : "without CUDA IPC";
    for (std::int64_t w : {1, 16, 3, 64, 17, 64}) test::check_operator_apply(op, context, whole, w, label);
    // X in fp32: its halo rows in half the bytes of the same buffers.
    for (std::int64_t w : {20, 4, 3, 64, 128}) test::check_operator_apply_single(op, context, whole, w, label);
    // The fp32 copy through the same halo, odd widths included.
    test::check_rounded_apply(op, context, whole, {16, 1, 3, 17, 64}, label);
  }
}

// The apps start the GPU on a thread while the rows are read: ready() makes the context's device this thread's
// (rank 1 of 2 on a two-GPU node uses device 1; its allocations and kernels must go there), and the operator
// built on it agrees with the reference.
TEST_F(DistributedOperatorCuda, ContextStartedOnAThread) {
  solver::StartingContext starting(Backend::cuda, MPI_COMM_WORLD);
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  EXPECT_EQ(starting.device(), solver::node_local_rank(MPI_COMM_WORLD) % devices);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the rank's own work meanwhile
  const dense::Context& context = starting.ready();
  EXPECT_GT(starting.seconds(), 0.0);
  EXPECT_EQ(context.device(), starting.device());
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, context.device());
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 11, 9, 7, 7};
  const CsrRows whole = io::generate_rows(cube, 0, io::generated_rows(cube));
  const auto partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
  for (std::int64_t w : {1, 16}) test::check_distributed_apply<double>(context, whole, partition, w, "3D Laplacian");
}

// A start abandoned before ready() (an error while the rows were read) waits for its thread and frees the context.
TEST_F(DistributedOperatorCuda, StartAbandonedBeforeReady) {
  { solver::StartingContext starting(Backend::cuda, MPI_COMM_WORLD); }
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  EXPECT_GE(context.device(), 0);
}

}  // namespace
}  // namespace blockeigs
