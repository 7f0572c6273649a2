// The GPU tests' skip: a test that needs a CUDA device skips, visibly, where
// none is visible (CI has none; the host twins are tested there instead).
#pragma once

#include <gtest/gtest.h>

#include "dense/memory.hpp"

// At the top of a TEST body (GTEST_SKIP returns from it).
#define SKIP_WITHOUT_GPU()                         \
  if (::blockeigs::spmm::cuda_device_count() == 0) \
  GTEST_SKIP() << "no CUDA device visible: the device path is not tested here"
