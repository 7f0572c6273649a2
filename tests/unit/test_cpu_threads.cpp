// How many OpenMP and OpenBLAS threads a rank takes on the CPU backend
// (solver/device_selection.hpp): the node's cores shared by its ranks, and
// never more than the cores the rank may run on (mpirun binds each of one or
// two ranks to a single core by default).
#include <gtest/gtest.h>

#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

#include "solver/device_selection.hpp"

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

}  // namespace
}  // namespace blockeigs
