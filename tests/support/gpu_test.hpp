// The GPU tests' fixture: a test that needs a CUDA device skips, visibly,
// where none is visible (CI has none; the host twins are tested there
// instead), and after the test the device is synchronised and any CUDA error
// still pending fails the test that caused it rather than a later one.
// Needs the CUDA runtime: only the tests under tests/cuda include it.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include "core/checks.hpp"
#include "dense/memory.hpp"

namespace blockeigs::test {

// Synchronises the current device and adds a non-fatal failure naming each
// CUDA error found: one of the work still queued (or a sticky error), and one
// left by an earlier call (cudaGetLastError, which also clears it).
inline void expect_no_cuda_error() {
  const cudaError_t queued = cudaDeviceSynchronize();
  const cudaError_t last = cudaGetLastError();
  if (queued != cudaSuccess)
    ADD_FAILURE() << "cudaDeviceSynchronize after the test: " << cudaGetErrorName(queued) << " ("
                  << cudaGetErrorString(queued) << ")";
  if (last != cudaSuccess && last != queued)
    ADD_FAILURE() << "CUDA error left pending by the test: " << cudaGetErrorName(last) << " ("
                  << cudaGetErrorString(last) << ")";
}

// class Suite : public test::GpuTest {};  TEST_F(Suite, Name) { ... }
// Typed suites: template <class T> class Suite : public test::GpuTest {};
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device_visible()) GTEST_SKIP() << "no CUDA device visible: the device path is not tested here";
    checked_ = true;
  }
  // On the device the test made current (dense::Context::cuda sets it); also
  // after a skip from the test body, once a device was there to use.
  void TearDown() override {
    if (checked_) expect_no_cuda_error();
  }
  virtual bool device_visible() const { return dense::cuda_device_count() > 0; }

 private:
  bool checked_ = false;
};

// For the tests run under mpiexec: they skip on every rank unless every rank
// of MPI_COMM_WORLD sees a device, so that no rank waits in a collective that
// a skipped one never enters. Collective: SetUp calls MPI_Allreduce.
class GpuTestOnEveryRank : public GpuTest {
 protected:
  bool device_visible() const override {
    int devices = dense::cuda_device_count(), fewest = devices;
    BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    return fewest > 0;
  }
};

}  // namespace blockeigs::test
