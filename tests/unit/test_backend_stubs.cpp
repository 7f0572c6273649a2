// A build without CUDA links a stub for every device half of the block
// operations and the Chebyshev passes: a view that says it is in device
// memory must make them throw "not compiled with CUDA", naming the
// operation, never do nothing. The views point at host memory that is never
// read, so that a missing throw fails the test instead of crashing it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "dense/context.hpp"
#include "dense/memory.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/precond/chebyshev_steps.hpp"
#include "tests/support/mpi_environment.hpp"

namespace blockeigs {
namespace {

class BackendStubs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (spmm::cuda_compiled()) GTEST_SKIP() << "a CUDA build runs device views on the device";
  }
  // A 4 x 2 block labelled as device memory.
  template <class T>
  spmm::DenseView<T> device_view(std::vector<T>& storage) {
    storage.assign(8, T(1));
    return {Space::device, 4, 2, 2, storage.data()};
  }
  const spmm::Context context = spmm::Context::host();
};

void expect_not_compiled(const std::function<void()>& call, const std::string& operation) {
  try {
    call();
    ADD_FAILURE() << operation << " returned on a device view in a build without CUDA";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("not compiled with CUDA"), std::string::npos) << what;
    EXPECT_NE(what.find(operation), std::string::npos) << what;
  }
}

TEST_F(BackendStubs, BlockOperationsThrowNotCompiled) {
  std::vector<double> x, y;
  std::vector<float> f;
  const spmm::DenseView<double> X = device_view(x), Y = device_view(y);
  const spmm::DenseView<float> F = device_view(f);
  const solver::HostMatrix S = solver::HostMatrix::identity(2);
  expect_not_compiled([&] { solver::block_update<double>(context, 1.0, X, S, 0.0, Y); }, "block_update");
  expect_not_compiled([&] { solver::axpby<double>(context, 1.0, X, 0.0, Y); }, "axpby");
  expect_not_compiled([&] { solver::scale_columns<double>(context, {1.0, 2.0}, Y); }, "scale_columns");
  expect_not_compiled([&] { solver::copy_block<double>(context, X, Y); }, "copy_block");
  expect_not_compiled([&] { solver::convert_block<double, float>(context, X, F); }, "convert_block");
  expect_not_compiled([&] { solver::fill_random<double>(context, Y, 7, 0); }, "fill_random");
  expect_not_compiled([&] { solver::keep_columns<double>(context, Y, {1}); }, "keep_columns");
  expect_not_compiled([&] { solver::column_norms<double>(context, MPI_COMM_SELF, X); }, "column_norms");
  expect_not_compiled([&] { solver::gram<double>(context, MPI_COMM_SELF, X); }, "gram");
}

TEST_F(BackendStubs, ChebyshevPassesThrowNotCompiled) {
  std::vector<double> q, e, w;
  const spmm::DenseView<double> Q = device_view(q), E = device_view(e), W = device_view(w);
  const std::vector<double> diag(4, 1.0);
  expect_not_compiled(
      [&] { solver::chebyshev_step<double>(context, 0.5, 1.0, 1.0, diag.data(), diag.data(), true, Q, E, W); },
      "chebyshev_step");
}

}  // namespace
}  // namespace blockeigs
