// Our CUDA SpMM kernels, `automatic` and cuSPARSE against the host reference
// on every SuiteSparse matrix in data_dir(), at n = 1, a narrow and a wide block.
#include <gtest/gtest.h>

#include "io/matrix_market.hpp"
#include "test_spmm_support.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/typed_precisions.hpp"

namespace blockeigs::test {
namespace {

template <class T>
void check_real_matrices() {
  const std::vector<std::string> names = data_matrix_names();
  if (names.empty()) GTEST_SKIP() << "no matrices in data_dir() (" << data_dir() << ")";
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const io::MatrixMarketFile file = io::read_matrix_market(data_dir() + "/" + name + ".mtx.gz");
    const spmm::HostCsr<T> A = to_host_csr<T>(file.matrix);
    ASSERT_GT(A.nnz(), 0);
    check_all_algorithms(A, {{.n = 1}, {.n = 1, .beta = 0.5}, {.n = 4}, {.n = 33, .beta = 0.5}, {.n = 128}});
  }
}

template <class T>
class SpmmRealMatrices : public GpuTest {};
TYPED_TEST_SUITE(SpmmRealMatrices, Precisions, PrecisionNames);

TYPED_TEST(SpmmRealMatrices, EveryMatrix) { check_real_matrices<TypeParam>(); }

}  // namespace
}  // namespace blockeigs::test
