// The memory plan (solver/plan/) against what the runs allocate, measured
// by the Buffer counters (dense::memory_counters), at np 1-4: LOBPCG and
// block CG, with and without Jacobi, through the apps and through the
// library with a rank that owns no rows. And the refusals: a 100000^3 grid
// before anything is generated, and a normal problem under a test-only
// memory limit, on every rank, with no file left; each side of the check
// alone (the host's before reading, the device's after); --dry-run solves
// nothing; the backend's start in two halves on the host.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "apps/run/cg_run.hpp"
#include "apps/cli.hpp"
#include "apps/run/eigs_run.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/generators/generators.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/plan/memory_check.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "dense/memory.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

namespace fs = std::filesystem;

std::string write_config(const std::string& name, const std::string& text) {
  const fs::path path = test::shared_folder("memory_plan") / name;
  test::write_text(path, text);
  return path.string();
}

io::GeneratorSpec grid(std::int64_t n) { return {io::GeneratorKind::laplacian_3d, n, n, n, 7}; }

// The measured peak of Buffers on this rank against the plan's, within 10%.
::testing::AssertionResult within_tenth(std::int64_t planned, std::int64_t measured) {
  if (std::abs(double(measured) - double(planned)) <= 0.1 * double(planned)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "rank " << test::mpi_rank() << ": planned " << planned << " B, measured "
                                       << measured << " B\n";
}
#define expect_within_tenth(planned, measured) EXPECT_TRUE(within_tenth(planned, measured))

// The plan for this rank's share of the generated grid, as the app makes it with contiguous rows
// (the configs below ask for them, on the CPU backend, whose plan this is).
solver::MemoryPlan plan_for(const io::GeneratorSpec& spec, const solver::SolverShape& shape) {
  const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const solver::RowPartition partition = solver::RowPartition::balanced(whole.row_offsets, test::mpi_size());
  const CsrRows mine = slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank()));
  const solver::RankShape s = solver::measured_shape(MPI_COMM_WORLD, mine, partition, whole.nnz());
  return solver::plan_memory(s, {}, shape, Space::host);
}

class AppPlan : public ::testing::TestWithParam<bool> {};  // Jacobi or none

TEST_P(AppPlan, LobpcgPeakWithinTenPercent) {
  const bool jacobi = GetParam();
  const std::string config =
      write_config("eigs.yaml", std::string("matrix:\n  generator: {type: laplacian_3d, nx: 20, ny: 20, nz: 20}\n") +
                                    "eigensolver: {k: 6, tolerance: 1.0e-5, max_iterations: 400, preconditioner: " +
                                    (jacobi ? "jacobi" : "none") +
                                    "}\noutput: {monitor: false}\nexecution: {partition: contiguous, backend: cpu}\n");
  const std::int64_t before = dense::memory_counters(Space::host).current;
  ASSERT_NE(apps::run_eigs(config, MPI_COMM_WORLD), apps::exit_error);
  const std::int64_t measured = dense::memory_counters(Space::host).peak - before;
  solver::SolverShape shape = solver::lobpcg_shape(6, 0, false, jacobi, 8, Space::host, 8000);
  if (jacobi) shape.preconditioner_memory = solver::JacobiPreconditioner<double>::memory();
  expect_within_tenth(plan_for(grid(20), shape).buffers_peak, measured);
}

TEST_P(AppPlan, BlockCgPeakWithinTenPercent) {
  const bool jacobi = GetParam();
  const std::string config = write_config(
      "cg.yaml", std::string("matrix:\n  generator: {type: laplacian_3d, nx: 20, ny: 20, nz: 20}\n") +
                     "block_cg: {rhs: {source: known_solution, columns: 5}, rtol: 1.0e-8, preconditioner: " +
                     (jacobi ? "jacobi" : "none") +
                     "}\noutput: {monitor: false}\nexecution: {partition: contiguous, backend: cpu}\n");
  const std::int64_t before = dense::memory_counters(Space::host).current;
  ASSERT_EQ(apps::run_cg(config, MPI_COMM_WORLD), apps::exit_ok);
  const std::int64_t measured = dense::memory_counters(Space::host).peak - before;
  solver::SolverShape shape;
  shape.kind = solver::SolverShape::Kind::block_cg;
  shape.columns = 5;
  shape.preconditioner = jacobi;
  if (jacobi) shape.preconditioner_memory = solver::JacobiPreconditioner<double>::memory();
  shape.known_solution = true;
  expect_within_tenth(plan_for(grid(20), shape).buffers_peak, measured);
}

// A x = lambda B x with a constraint: B's operator and halo, the solver's B blocks and Y, and the app's Y
// (tolerance 1e-9: long enough to recompute A [X P] and B [X P], both halos at their widest).
TEST_P(AppPlan, GeneralizedLobpcgWithConstraintsPeakWithinTenPercent) {
  const bool jacobi = GetParam();
  const std::string grid_spec = "nx: 16, ny: 16, nz: 16";
  const std::string config = write_config(
      "pencil.yaml",
      "matrix:\n  generator: {type: fem_p1_3d, " + grid_spec +
          ", part: stiffness}\n"
          "matrix_b:\n  generator: {type: fem_p1_3d, " +
          grid_spec +
          ", part: mass}\n"
          "eigensolver: {k: 6, tolerance: 1.0e-9, max_iterations: 400, constraints: constant, preconditioner: " +
          std::string(jacobi ? "jacobi" : "none") +
          "}\noutput: {monitor: false}\nexecution: {partition: contiguous, backend: cpu}\n");
  const std::int64_t before = dense::memory_counters(Space::host).current;
  ASSERT_NE(apps::run_eigs(config, MPI_COMM_WORLD), apps::exit_error);
  const std::int64_t measured = dense::memory_counters(Space::host).peak - before;
  io::GeneratorSpec stiffness{io::GeneratorKind::fem_p1_3d, 16, 16, 16, 7};
  io::GeneratorSpec mass = stiffness;
  mass.part = io::FemPart::mass;
  const CsrRows a = io::generate_rows(stiffness, 0, io::generated_rows(stiffness));
  const CsrRows b = io::generate_rows(mass, 0, io::generated_rows(mass));
  const solver::RowPartition partition = solver::RowPartition::balanced(a.row_offsets, test::mpi_size());
  const int rank = test::mpi_rank();
  const auto share = [&](const CsrRows& whole) {
    return solver::measured_shape(MPI_COMM_WORLD, slice_rows(whole, partition.begin(rank), partition.end(rank)),
                                  partition, whole.nnz());
  };
  solver::SolverShape shape = solver::lobpcg_shape(6, 0, false, jacobi, 8, Space::host, a.global_rows);
  if (jacobi) shape.preconditioner_memory = solver::JacobiPreconditioner<double>::memory();
  shape.generalized = true;
  shape.constraint_columns = 1;
  const solver::SecondMatrix second{share(b), {}};
  const solver::MemoryPlan plan = solver::plan_memory(share(a), {}, shape, Space::host, &second);
  expect_within_tenth(plan.buffers_peak, measured) << solver::describe(plan);
}

INSTANTIATE_TEST_SUITE_P(Preconditioner, AppPlan, ::testing::Bool(),
                         [](const auto& test_case) { return test_case.param ? "jacobi" : "none"; });

// Through the library, on a partition where the last rank owns no rows.
TEST(LibraryPlan, LobpcgAndBlockCgOnAnEmptyRank) {
  const io::GeneratorSpec spec = grid(14);
  const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const solver::RowPartition partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
  const int rank = test::mpi_rank();
  const CsrRows mine = slice_rows(whole, partition.begin(rank), partition.end(rank));
  const dense::Context context = dense::Context::host();
  for (const bool cg : {false, true}) {
    dense::reset_memory_peaks();
    const std::int64_t before = dense::memory_counters(Space::host).current;
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, mine, partition);
    solver::SolverShape shape = solver::lobpcg_shape(4, 0, false, true, 8, Space::host, op.global_rows());
    shape.preconditioner_memory = solver::JacobiPreconditioner<double>::memory();
    if (cg) {
      shape = {};
      shape.kind = solver::SolverShape::Kind::block_cg;
      shape.columns = 4;
      shape.preconditioner = true;
      shape.preconditioner_memory = solver::JacobiPreconditioner<double>::memory();
      dense::DenseBlock<double> B(Space::host, op.local_rows(), 4), X(Space::host, op.local_rows(), 4);
      solver::fill_random(op.context(), B.view(), 7, op.first_row());
      dense::fill_bytes(X.data(), Space::host, 0, sizeof(double) * op.local_rows() * 4);
      solver::JacobiPreconditioner<double> jacobi(op);
      solver::BlockCgOptions o;
      (void)solver::block_cg<double>(op, B.cview(), X.view(), o, &jacobi);
    } else {
      solver::JacobiPreconditioner<double> jacobi(op);
      solver::LobpcgOptions o;
      o.k = 4;
      o.tolerance = 1e-9;  // long enough to recompute A [X P] (the halo at its widest)
      (void)solver::lobpcg<double>(op, o, &jacobi);
    }
    const solver::MemoryPlan plan =
        solver::plan_memory(solver::measured_shape(op, whole.nnz()), {}, shape, Space::host);
    const std::int64_t measured = dense::memory_counters(Space::host).peak - before;
    if (op.local_rows() == 0)
      EXPECT_LT(measured, 4096) << "an empty rank allocates (almost) nothing";
    else
      expect_within_tenth(plan.buffers_peak, measured) << (cg ? "block CG\n" : "LOBPCG\n") << solver::describe(plan);
  }
}

// The Chebyshev filter's plan against its measured peak, in fp64 and mixed (its fp32 copy of A and blocks),
// on a partition where the last rank owns no rows.
TEST(LibraryPlan, ChebyshevFilterFp64AndMixed) {
  const io::GeneratorSpec spec = grid(14);
  const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const solver::RowPartition partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
  const int rank = test::mpi_rank();
  const CsrRows mine = slice_rows(whole, partition.begin(rank), partition.end(rank));
  const dense::Context context = dense::Context::host();
  for (const SearchPrecision precision : {SearchPrecision::fp64, SearchPrecision::fp32}) {
    dense::reset_memory_peaks();
    const std::int64_t before = dense::memory_counters(Space::host).current;
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context, mine, partition);
    const solver::SolverShape shape = solver::filter_shape(40, 0, 8, op.global_rows(), precision, Space::host);
    EXPECT_EQ(shape.mixed_filter, precision == SearchPrecision::fp32);
    solver::LobpcgOptions o;
    o.k = 40;
    o.tolerance = 1e-8;
    o.search_precision = precision;
    const solver::LobpcgResult<double> r = solver::chebyshev_filter_eigs<double>(op, o);
    EXPECT_EQ(r.stats.single_filter_products > 0, precision == SearchPrecision::fp32);
    const solver::MemoryPlan plan =
        solver::plan_memory(solver::measured_shape(op, whole.nnz()), {}, shape, Space::host);
    const std::int64_t measured = dense::memory_counters(Space::host).peak - before;
    if (op.local_rows() == 0)
      EXPECT_LT(measured, 4096) << "an empty rank allocates (almost) nothing";
    else
      expect_within_tenth(plan.buffers_peak, measured) << to_string(precision) << "\n" << solver::describe(plan);
  }
}

// Every rank throws the same agreed error; returns its message.
std::string refusal(const std::string& config, bool cg = false) {
  try {
    if (cg)
      apps::run_cg(config, MPI_COMM_WORLD);
    else
      apps::run_eigs(config, MPI_COMM_WORLD);
  } catch (const solver::AgreedError& e) {
    return e.what();
  }
  return "";
}

TEST(Refusal, HundredThousandCubedBeforeGenerating) {
  const fs::path out = test::shared_folder("memory_plan") / "huge.h5";
  const std::string config =
      write_config("huge.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 100000, ny: 100000, nz: 100000}\n"
                   "eigensolver: {k: 8}\noutput: {path: " +
                       out.string() + "}\n");
  const double t0 = MPI_Wtime();
  const std::string message = refusal(config);
  EXPECT_LT(MPI_Wtime() - t0, 10.0) << "nothing generated";
  EXPECT_NE(message.find("not enough memory"), std::string::npos) << message;
  EXPECT_NE(message.find("1000000000000000 rows"), std::string::npos) << message;
  EXPECT_NE(message.find("per rank"), std::string::npos) << message;
  EXPECT_NE(message.find("available"), std::string::npos) << message;
  EXPECT_NE(message.find("ranks"), std::string::npos) << message;
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out));
}

// execution.memory_limit_bytes takes every node and GPU to have that much.
TEST(Refusal, MemoryLimitRefusesANormalProblem) {
  const fs::path out = test::shared_folder("memory_plan") / "limited.h5";
  const std::string config =
      write_config("limited.yaml",
                   "matrix:\n  generator: {type: laplacian_3d, nx: 16, ny: 16, nz: 16}\n"
                   "block_cg: {rhs: {source: random, columns: 4}}\nexecution: {memory_limit_bytes: 200000}\n"
                   "output: {path: " +
                       out.string() + "}\n");
  const std::string message = refusal(config, true);
  EXPECT_NE(message.find("not enough memory"), std::string::npos) << message;
  EXPECT_NE(message.find("195.3 KiB available"), std::string::npos) << message;
  EXPECT_NE(message.find("ranks would fit it"), std::string::npos) << message;
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out));
}

// The apps check the host's memory before the rows are read and the device's once the context started beside
// the reading is ready: each side alone refuses by its own need only, and names it.
TEST(Refusal, EachSideAlone) {
  const int ranks = test::mpi_size();
  const std::int64_t rows = std::int64_t{1} << 20, nnz = std::int64_t{7} << 20;
  const solver::SolverShape shape = solver::lobpcg_shape(16, 0, false, false, 8, Space::device, rows);
  const auto plan_at = [&](int r) {
    return solver::plan_memory(solver::even_share(rows, nnz, r), {}, shape, Space::device);
  };
  const solver::MemoryPlan plan = plan_at(ranks);
  ASSERT_GT(plan.device_peak, 0);
  ASSERT_NE(plan.host_peak, plan.device_peak);
  // Every rank on one node and one GPU here (device -1): each side needs `ranks` times its peak.
  const std::int64_t limit = ranks * ((plan.host_peak + plan.device_peak) / 2);
  const bool device_needs_more = plan.device_peak > plan.host_peak;
  auto refusal_of = [&](solver::MemorySides sides) -> std::string {
    try {
      solver::check_memory_fits(MPI_COMM_WORLD, plan, 0, 0, -1, plan_at, limit, sides);
    } catch (const solver::AgreedError& e) {
      return e.what();
    }
    return "";
  };
  const std::string host = refusal_of(solver::MemorySides::host), device = refusal_of(solver::MemorySides::device);
  const std::string both = refusal_of(solver::MemorySides::both);
  const std::string& refused = device_needs_more ? device : host;
  EXPECT_TRUE((device_needs_more ? host : device).empty()) << (device_needs_more ? host : device);
  EXPECT_NE(refused.find(device_needs_more ? "of device memory per rank" : "of host memory per rank"),
            std::string::npos)
      << refused;
  EXPECT_EQ(refused.find(device_needs_more ? "of host memory" : "of device memory"), std::string::npos) << refused;
  EXPECT_NE(refused.find("ranks would fit it"), std::string::npos) << refused;
  EXPECT_NE(both.find("not enough memory"), std::string::npos) << both;
}

// The backend's start in two halves (StartingContext): on the host the context is there at once, no thread
// made it, and ready() gives the same one each time.
TEST(StartingContext, HostContextAtOnce) {
  solver::StartingContext starting(Backend::cpu, MPI_COMM_WORLD);
  EXPECT_EQ(starting.space(), Space::host);
  EXPECT_EQ(starting.device(), -1);
  const dense::Context& context = starting.ready();
  EXPECT_EQ(context.space(), Space::host);
  EXPECT_EQ(&starting.ready(), &context);
  EXPECT_EQ(starting.seconds(), 0.0);
  EXPECT_EQ(starting.take().device(), -1);
}

// Backend::cuda where no rank may use a GPU (a build without CUDA, or none present) is refused on every rank
// when the choice is made, before any thread starts.
TEST(StartingContext, CudaWithoutAGpuRefusedEverywhere) {
  if (dense::cuda_compiled() && dense::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  try {
    solver::StartingContext starting(Backend::cuda, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("execution.backend is cuda"), std::string::npos) << e.what();
  }
}

// The result file's share of the plan (apps/run/output/input_order_block.cpp): nothing where fp64 rows on the
// host are written as they are; a staging piece for fp32 or a device; more where the rows are renumbered.
TEST(OutputPlan, FollowsTheWayTheRowsAreWritten) {
  const solver::RankShape share = solver::even_share(std::int64_t{1} << 22, std::int64_t{7} << 22, 1);
  auto output_item = [&](int value_bytes, Space space, bool renumbered) -> std::int64_t {
    solver::SolverShape shape = solver::lobpcg_shape(16, 0, false, false, value_bytes, space, share.global_rows);
    shape.output = true;
    shape.output_renumbered = renumbered;
    for (const solver::MemoryItem& item : solver::plan_memory(share, {}, shape, space).items)
      if (item.what.find("result file") != std::string::npos) return item.host;
    return -1;
  };
  const std::int64_t m = share.local_rows, piece = solver::output_piece_bytes;
  EXPECT_EQ(output_item(8, Space::host, false), 0);
  EXPECT_EQ(output_item(4, Space::host, false), piece);
  EXPECT_EQ(output_item(8, Space::device, false), piece);
  EXPECT_EQ(output_item(8, Space::host, true), piece + 24 * m + 2 * piece);
  EXPECT_EQ(output_item(8, Space::device, true), piece + 24 * m + 2 * piece + m * 16 * 8);
}

TEST(DryRun, PlansAndStops) {
  const fs::path out = test::shared_folder("memory_plan") / "dry.h5";
  const std::string config = write_config("dry.yaml",
                                          "matrix:\n  generator: {type: laplacian_3d, nx: 12, ny: 12, nz: 12}\n"
                                          "eigensolver: {k: 4}\noutput: {path: " +
                                              out.string() + "}\n");
  EXPECT_EQ(apps::run_eigs(config, MPI_COMM_WORLD, {}, true), apps::exit_ok);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace blockeigs
