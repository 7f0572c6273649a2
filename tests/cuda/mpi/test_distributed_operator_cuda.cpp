// The distributed operator on GPUs (one per rank, or ranks sharing one) vs
// the single-rank reference, with host-staged halos and, when MPI is
// CUDA-aware, device pointers.
#include <gtest/gtest.h>

#include "io/generators.hpp"
#include "operator_check.hpp"
#include "solver/device_selection.hpp"
#include "test_matrices.hpp"

namespace blockeigs {
namespace {

TEST(DistributedOperatorCuda, MatchesReference) {
  int devices = spmm::cuda_device_count(), fewest = devices;
  MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (fewest == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto context = solver::make_context(Backend::cuda, MPI_COMM_WORLD);
  io::GeneratorSpec cube{io::GeneratorKind::laplacian_3d, 11, 9, 7, 7};
  io::GeneratorSpec spd;
  spd.kind = io::GeneratorKind::random_spd;
  spd.n = 2000;
  spd.nnz_per_row = 9;
  const io::CsrRows power = test::power_law_matrix(3000, 2500, 4);
  for (const auto& spec : {cube, spd}) {
    const io::CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
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

}  // namespace
}  // namespace blockeigs
