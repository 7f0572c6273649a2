// How many OpenMP and OpenBLAS threads a rank takes on the CPU backend
// (solver/operator/device_selection.hpp): the node's cores shared by its ranks, and
// never more than the cores the rank may run on (mpirun binds each of one or
// two ranks to a single core by default), unless the user's environment says.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

#include "solver/blocks/host_blas.hpp"
#include "solver/operator/device_selection.hpp"

namespace blockeigs {
namespace {

TEST(CpuThreads, SharesTheNodesCoresAndStaysWithinTheAffinity) {
  using solver::cpu_threads_per_rank;
  EXPECT_EQ(cpu_threads_per_rank(16, 1, 16), 16);
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 16), 8);
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 1), 1);  // bound to a core
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 4), 4);  // bound to 4 cores (--map-by ...:PE=4)
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 0), 8);  // mask unknown
  EXPECT_EQ(cpu_threads_per_rank(2, 4, 2), 1);   // more ranks than cores
  EXPECT_EQ(cpu_threads_per_rank(0, 1, 0), 1);   // hardware_concurrency unknown
}

// Each rank of a node an even slice of its CPUs; more ranks than CPUs share them one each.
TEST(CpuThreads, NodeShareSlicesTheNodesCpus) {
  using solver::node_share;
  const std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(node_share(cpus, 0, 1), cpus);
  EXPECT_EQ(node_share(cpus, 0, 2), std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(node_share(cpus, 1, 2), std::vector<int>({8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(node_share(cpus, 2, 3), std::vector<int>({10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(node_share({2, 3, 6, 7}, 1, 2), std::vector<int>({6, 7}));  // a container's or job's CPUs
  EXPECT_EQ(node_share({0, 1}, 2, 4), std::vector<int>({1}));
  EXPECT_EQ(node_share({0, 1}, 3, 4), std::vector<int>({1}));
  EXPECT_EQ(node_share({0, 1}, 0, 4), std::vector<int>({0}));
  EXPECT_TRUE(node_share({}, 0, 2).empty());  // masks unknown
}

// The environment wins for what it sets; OpenBLAS follows OMP_NUM_THREADS as it does itself.
TEST(CpuThreads, UsersThreadCountsWin) {
  using solver::choose_cpu_threads;
  const solver::CpuThreads shared = choose_cpu_threads(16, 4, 16, nullptr, nullptr);
  EXPECT_EQ(shared.openmp, 4);
  EXPECT_EQ(shared.openblas, 4);
  EXPECT_EQ(shared.openmp_source, solver::ThreadSource::share);
  EXPECT_EQ(shared.openblas_source, solver::ThreadSource::share);
  EXPECT_EQ(shared.cores, 16);
  EXPECT_EQ(shared.local_ranks, 4);
  const solver::CpuThreads bound = choose_cpu_threads(16, 4, 1, nullptr, nullptr);  // mpirun bound each to a core
  EXPECT_EQ(bound.openmp, 1);
  EXPECT_EQ(bound.openblas, 1);
  const solver::CpuThreads omp = choose_cpu_threads(16, 4, 16, "8", nullptr);
  EXPECT_EQ(omp.openmp, 8);
  EXPECT_EQ(omp.openblas, 8);
  EXPECT_EQ(omp.openmp_source, solver::ThreadSource::omp_num_threads);
  EXPECT_EQ(omp.openblas_source, solver::ThreadSource::omp_num_threads);
  EXPECT_EQ(choose_cpu_threads(16, 4, 1, "8", nullptr).openmp, 8);  // even beyond the mask: the user's choice
  const solver::CpuThreads blas = choose_cpu_threads(16, 4, 16, nullptr, "2");
  EXPECT_EQ(blas.openmp, 4);  // OpenMP still gets the share, not every core
  EXPECT_EQ(blas.openmp_source, solver::ThreadSource::share);
  EXPECT_EQ(blas.openblas, 2);
  EXPECT_EQ(blas.openblas_source, solver::ThreadSource::openblas_num_threads);
  const solver::CpuThreads both = choose_cpu_threads(16, 4, 16, "3", "1");
  EXPECT_EQ(both.openmp, 3);
  EXPECT_EQ(both.openblas, 1);
  EXPECT_EQ(both.openblas_source, solver::ThreadSource::openblas_num_threads);
  EXPECT_EQ(choose_cpu_threads(16, 4, 16, "6,2", nullptr).openmp, 6);  // nested levels: the outer one
  for (const char* ignored : {"", "0", "-2", "four", "4x"}) {          // not a count: as if unset
    const solver::CpuThreads t = choose_cpu_threads(16, 4, 16, ignored, ignored);
    EXPECT_EQ(t.openmp, 4) << ignored;
    EXPECT_EQ(t.openblas, 4) << ignored;
    EXPECT_EQ(t.openmp_source, solver::ThreadSource::share) << ignored;
  }
}

#ifdef __linux__
TEST(CpuThreads, AllowedCpusFollowsTheAffinityMask) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(solver::allowed_cpus(), CPU_COUNT(&all));
  // Bound to one of them, as mpirun binds a rank to a core.
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int bound = solver::allowed_cpus();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(bound, 1);
}
#endif

// The header's warning: OpenBLAS on pre-AVX2 kernels while the CPU has AVX2
// (a virtual machine that hides the CPU's model), in any case, and never
// where the CPU lacks AVX2 or the kernels use it.
TEST(HostBlas, WarnsOfKernelsOlderThanTheCpu) {
  using solver::blas_kernels_older_than_cpu;
  EXPECT_TRUE(blas_kernels_older_than_cpu("Prescott", true));
  EXPECT_TRUE(blas_kernels_older_than_cpu("PRESCOTT", true));
  EXPECT_TRUE(blas_kernels_older_than_cpu("Sandybridge", true));
  EXPECT_FALSE(blas_kernels_older_than_cpu("Prescott", false));
  for (const char* modern : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "unknown"})
    EXPECT_FALSE(blas_kernels_older_than_cpu(modern, true)) << modern;
  EXPECT_FALSE(solver::host_blas_kernels().empty());
}

}  // namespace
}  // namespace blockeigs
