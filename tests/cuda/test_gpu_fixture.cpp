// The GPU tests' fixture (tests/support/gpu_test.hpp): the check its TearDown
// runs reports a CUDA error a test left pending, by name, and clears it, so
// that the next test starts clean; on a clean device it reports nothing.
#include <cuda_runtime.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/support/gpu_test.hpp"

namespace blockeigs::test {
namespace {

// A recoverable error, set as the thread's last error: a copy in no
// direction CUDA knows.
cudaError_t provoke_an_error() {
  int from = 1, to = 0;
  return cudaMemcpy(&to, &from, sizeof from, static_cast<cudaMemcpyKind>(42));
}

class GpuFixture : public GpuTest {};

TEST_F(GpuFixture, CheckReportsAPendingErrorByName) {
  ASSERT_EQ(provoke_an_error(), cudaErrorInvalidMemcpyDirection);
  EXPECT_NONFATAL_FAILURE(expect_no_cuda_error(), "cudaErrorInvalidMemcpyDirection");
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "the check leaves the error for the next test";
}

TEST_F(GpuFixture, TearDownRunsTheCheck) {
  ASSERT_EQ(provoke_an_error(), cudaErrorInvalidMemcpyDirection);
  EXPECT_NONFATAL_FAILURE(TearDown(), "cudaErrorInvalidMemcpyDirection");
}

TEST_F(GpuFixture, CheckIsQuietOnACleanDevice) {
  int* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 0, sizeof(int)), cudaSuccess);
  expect_no_cuda_error();
  EXPECT_FALSE(HasFailure());
  ASSERT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
}  // namespace blockeigs::test
