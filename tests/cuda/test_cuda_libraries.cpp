// cuBLAS, cuSPARSE and cuSOLVER opened at their first use (core/cuda_libraries):
// not before, the calls forwarded to the libraries once open, and a library
// that cannot be opened named with every file tried. No GPU is needed: the
// libraries open and answer their status texts without one.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda_libraries.hpp"
#include "core/error.hpp"

namespace cl = blockeigs::cuda_libraries;

namespace {

// Whether a file whose name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(name) != std::string::npos;
}

}  // namespace

// Each TEST runs in a process of its own (gtest_discover_tests), so this one
// sees the process as the apps see it at their start.
TEST(CudaLibraries, NoneIsOpenBeforeItsFirstUse) {
  EXPECT_FALSE(cl::opened());
  EXPECT_TRUE(mapped("test_cuda_libraries")) << "the control: the test itself";
  EXPECT_FALSE(mapped("libcublas"));
  EXPECT_FALSE(mapped("libcusparse"));
  EXPECT_FALSE(mapped("libcusolver"));
  // A status text asked for before then does not open them either.
  EXPECT_NE(std::string(cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED)).find("is not open"), std::string::npos);
  EXPECT_FALSE(mapped("libcublas"));
}

TEST(CudaLibraries, RequireOpensThemAndTheCallsReachTheLibraries) {
  cl::require();
  EXPECT_TRUE(cl::opened());
  EXPECT_TRUE(mapped("libcublasLt"));
  EXPECT_TRUE(mapped("libcusparse"));
  EXPECT_TRUE(mapped("libcusolver"));
  // The libraries' own texts (ours say "is not open").
  const std::string dense = cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED);
  const std::string sparse = cusparseGetErrorString(CUSPARSE_STATUS_INVALID_VALUE);
  EXPECT_EQ(dense.find("is not open"), std::string::npos) << dense;
  EXPECT_EQ(sparse.find("is not open"), std::string::npos) << sparse;
  EXPECT_FALSE(dense.empty());
  EXPECT_FALSE(sparse.empty());
}

TEST(CudaLibraries, ACallOpensThemWhereNothingBeganTo) {
  // A descriptor needs no device: cuSPARSE answers it once open.
  double values[4] = {};
  cusparseDnMatDescr_t dense = nullptr;
  ASSERT_EQ(cusparseCreateDnMat(&dense, 2, 2, 2, values, CUDA_R_64F, CUSPARSE_ORDER_ROW), CUSPARSE_STATUS_SUCCESS);
  EXPECT_TRUE(cl::opened());
  EXPECT_EQ(cusparseDestroyDnMat(dense), CUSPARSE_STATUS_SUCCESS);
  // An invalid argument reaches the library and comes back as its status.
  EXPECT_EQ(cusparseCreateDnMat(&dense, -1, 2, 2, values, CUDA_R_64F, CUSPARSE_ORDER_ROW),
            CUSPARSE_STATUS_INVALID_VALUE);
}

TEST(CudaLibraries, ThreadsAskingAtOnceAllGetThem) {
  std::vector<std::thread> threads;
  std::vector<int> open(8, 0);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      if (i % 2 == 0) cl::start_loading();
      cl::require();
      open[static_cast<std::size_t>(i)] = cl::opened() ? 1 : 0;
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(open[static_cast<std::size_t>(i)], 1) << "thread " << i;
}

TEST(CudaLibraries, CandidatesAreTheToolkitsFolderThenTheSearchPath) {
  const std::string cublas = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  const std::vector<std::string> files = cl::candidates(cublas);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].front(), '/');
  EXPECT_TRUE(files[0].ends_with("/" + cublas)) << files[0];
  EXPECT_EQ(files[1], cublas);
}

TEST(CudaLibraries, ALibraryThatCannotBeOpenedIsNamedWithEveryFileTried) {
  try {
    (void)cl::open_first("cuBLAS", {"/nonexistent/libcublas.so.99", "libcublas.so.99"});
    FAIL() << "no error";
  } catch (const blockeigs::LibraryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot open the CUDA library cuBLAS"), std::string::npos) << message;
    EXPECT_NE(message.find("/nonexistent/libcublas.so.99"), std::string::npos) << message;
    EXPECT_NE(message.find("; libcublas.so.99"), std::string::npos) << message;
    EXPECT_NE(message.find("LD_LIBRARY_PATH"), std::string::npos) << message;
  }
  const std::string cublas = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  EXPECT_NE(cl::open_first("cuBLAS", {"/nonexistent/libcublas.so.99", cublas}), nullptr)
      << "the second file opens where the first does not";
}
