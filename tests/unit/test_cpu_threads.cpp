// How many OpenMP and OpenBLAS threads a rank takes on the CPU backend
// (solver/operator/device_selection.hpp): the node's cores shared by its ranks, and
// never more than the cores the rank may run on (mpirun binds each of one or
// two ranks to a single core by default).
#include <gtest/gtest.h>

#include <thread>

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
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 1), 1);   // bound to a core
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 4), 4);   // bound to 4 cores (--map-by ...:PE=4)
  EXPECT_EQ(cpu_threads_per_rank(16, 2, 0), 8);   // mask unknown
  EXPECT_EQ(cpu_threads_per_rank(2, 4, 2), 1);    // more ranks than cores
  EXPECT_EQ(cpu_threads_per_rank(0, 1, 0), 1);    // hardware_concurrency unknown
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
