// The block operations on complex blocks on the host at np 1-4, with and
// without a rank that owns no rows (tests/support/complex_block_checks.hpp).
#include <gtest/gtest.h>

#include <complex>

#include "tests/support/complex_block_checks.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

template <class T>
class ComplexBlockOps : public testing::Test {};
using ComplexTypes = testing::Types<std::complex<double>, std::complex<float>>;
TYPED_TEST_SUITE(ComplexBlockOps, ComplexTypes);

TYPED_TEST(ComplexBlockOps, ReductionsOverRanks) {
  const dense::Context host = dense::Context::host();
  const int size = test::mpi_size();
  for (const auto& part : {solver::RowPartition::uniform(1001, size), test::partition_with_empty_rank(777, size)})
    test::check_complex_reductions<TypeParam>(host, part);
}

TYPED_TEST(ComplexBlockOps, LocalUpdates) {
  const dense::Context host = dense::Context::host();
  for (auto [n, k1, k2] : {std::tuple{0, 3, 2}, {1, 1, 1}, {37, 5, 3}, {300, 8, 8}, {129, 33, 40}})
    test::check_complex_updates<TypeParam>(host, n, k1, k2);
}

}  // namespace
}  // namespace blockeigs
