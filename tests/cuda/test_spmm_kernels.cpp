// Our CUDA SpMM kernels (row_split, merge_based), `automatic` through
// spmm::Plan, and the cuSPARSE wrapper, each against the host reference in
// real and complex values (complex alpha and beta too), on general shapes: every n class, rows of length 1, empty
// matrices, padded and misaligned leading dimensions, beta = 0 with NaN-filled C, beta != 0, alpha = 0, and bitwise
// determinism. Each kernel's own paths: test_spmm_kernel_paths.cpp; the heuristic and `automatic`:
// test_spmm_heuristic.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "spmm/heuristic.hpp"
#include "spmm/cuda/row_stream_blocks.hpp"
#include "test_spmm_support.hpp"
#include "tests/support/gpu_test.hpp"
#include "tests/support/typed_precisions.hpp"

namespace blockeigs::test {
namespace {

template <class T>
class SpmmKernels : public GpuTest {};
TYPED_TEST_SUITE(SpmmKernels, Scalars, ScalarNames);

// 11, 17, 20, 22, 40, 46: on and around the three-vectors-a-lane shapes
// (kernel_dispatch.cuh), at 1, 2 and 4 elements a vector in both precisions.
constexpr std::int64_t all_widths[] = {1, 2, 3, 7, 11, 17, 20, 22, 32, 33, 40, 46, 65, 128, 129, 256};

// 777 x 555, lengths 0..40, one row in ten empty.
template <class T>
spmm::HostCsr<T> irregular_matrix(std::uint64_t seed) {
  return random_csr<T>(777, 555, seed, [](std::int64_t, std::mt19937_64& e) {
    return e() % 10 == 0 ? std::int64_t(0) : std::int64_t(e() % 41);
  });
}

template <class T>
void every_width_beta_zero_nan_c() {
  const auto A = irregular_matrix<T>(11);
  std::vector<Problem> problems;
  for (std::int64_t n : all_widths) problems.push_back({.n = n, .seed = std::uint64_t(n)});
  check_all_algorithms(A, problems);
}

TYPED_TEST(SpmmKernels, EveryWidth) { every_width_beta_zero_nan_c<TypeParam>(); }

template <class T>
void alpha_and_beta() {
  const auto A = irregular_matrix<T>(12);
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 3, 32, 129}) {
    problems.push_back({.n = n, .alpha = 1.5, .beta = 0.5});
    problems.push_back({.n = n, .alpha = -2.0, .beta = 1.0});
    problems.push_back({.n = n, .alpha = 0.0, .beta = 0.25});
    problems.push_back({.n = n, .alpha = 0.0, .beta = 0.0});
    if constexpr (is_complex_v<T>) {
      problems.push_back({.n = n, .alpha = 0.5, .beta = -1.0, .alpha_im = -2.0, .beta_im = 0.75});
      problems.push_back({.n = n, .alpha = 0.0, .beta = 0.0, .alpha_im = 1.0, .beta_im = 1.0});
    }
  }
  check_all_algorithms(A, problems);
  // alpha == 0 must not read A or B: NaN in B leaves C = beta * C (ours; the
  // cuSPARSE wrapper makes no such promise).
  std::vector<Problem> nan_b;
  for (std::int64_t n : {1, 33}) nan_b.push_back({.n = n, .alpha = 0.0, .beta = 0.5, .nan_b = true});
  check_all_algorithms(A, nan_b, {Algorithm::row_split, Algorithm::merge_based, Algorithm::automatic});
}

TYPED_TEST(SpmmKernels, AlphaAndBeta) { alpha_and_beta<TypeParam>(); }

// Odd leading dimensions (4- or 8-byte rows only), padded aligned ones, and
// views that start one element into their buffer.
template <class T>
void leading_dimensions() {
  const auto A = irregular_matrix<T>(13);
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 4, 8, 17, 64, 129, 256}) {
    problems.push_back({.n = n, .ldb = n + 1, .ldc = n + 3});
    problems.push_back({.n = n, .beta = 0.5, .ldb = n + 4, .ldc = n + 8});
    problems.push_back({.n = n, .ldb = n + 2, .ldc = n + 2, .b_offset = 1, .c_offset = 2});
    problems.push_back({.n = n, .beta = -1.0, .b_offset = 1, .c_offset = 1});
  }
  check_all_algorithms(A, problems);
}

TYPED_TEST(SpmmKernels, LeadingDimensionsAndAlignment) { leading_dimensions<TypeParam>(); }

// The tests in one precision (or both in one test): SpmmKernels.Name beside the
// typed SpmmKernels/Fp32.Name, so their fixture lives in a namespace of its own.
namespace one_precision {
class SpmmKernels : public GpuTest {};

TEST_F(SpmmKernels, BlocksWiderThanOneLaunch) {
  const auto A = irregular_matrix<double>(14);
  check_all_algorithms(A, {{.n = 300}, {.n = 513, .beta = 0.5, .ldb = 515, .ldc = 520}});
  const auto Af = irregular_matrix<float>(15);
  check_all_algorithms(Af, {{.n = 257, .beta = 2.0}});
}

TEST_F(SpmmKernels, RowsOfLengthOneAndOnlyEmptyRows) {
  const auto ones = random_csr<double>(3000, 2000, 31, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  const auto empty = random_csr<double>(500, 300, 32, [](std::int64_t, std::mt19937_64&) { return std::int64_t(0); });
  std::vector<Problem> problems;
  for (std::int64_t n : {1, 2, 33, 128}) {
    problems.push_back({.n = n});
    problems.push_back({.n = n, .beta = 0.5});
  }
  check_all_algorithms(ones, problems);
  check_all_algorithms(empty, problems);
  const auto ones_f = random_csr<float>(3000, 2000, 33, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  check_all_algorithms(ones_f, problems);
}

TEST_F(SpmmKernels, EmptyMatrices) {
  // 0 x k: nothing to do. m x 0: B has no rows, C = beta * C.
  const auto no_rows = random_csr<double>(0, 40, 41, [](std::int64_t, std::mt19937_64&) { return std::int64_t(3); });
  const auto no_cols = random_csr<double>(50, 0, 42, [](std::int64_t, std::mt19937_64&) { return std::int64_t(3); });
  const std::vector<Problem> problems = {{.n = 1}, {.n = 7, .beta = 0.5}, {.n = 129, .beta = 0.0}};
  check_all_algorithms(no_rows, problems);
  check_all_algorithms(no_cols, problems);
}

// The kernels step between B's rows in 32-bit byte strides: a larger stride
// (more than one row) is refused before any launch, with the value named.
// One B row needs no stride, whatever its leading dimension.
TEST_F(SpmmKernels, RowStridesPast4GiBAreRefused) {
  const dense::Context context = dense::Context::cuda(0);
  const auto two = random_csr<double>(3, 2, 71, [](std::int64_t, std::mt19937_64&) { return std::int64_t(2); });
  const auto one = random_csr<double>(3, 1, 72, [](std::int64_t, std::mt19937_64&) { return std::int64_t(1); });
  spmm::CsrMatrix<double> A2(Space::device, two), A1(Space::device, one);
  dense::Buffer<double> c(Space::device, 3), b(Space::device, 1);
  device_sync();
  const std::int64_t huge_ld = (std::int64_t(1) << 29) + 1;  // 8 * ld > 2^32 bytes
  for (Algorithm algorithm : {Algorithm::row_split, Algorithm::merge_based}) {
    SCOPED_TRACE(std::string(to_string(algorithm)));
    // Never dereferenced: the operands are checked first.
    const dense::ConstDenseView<double> far(Space::device, 2, 1, huge_ld, reinterpret_cast<const double*>(b.data()));
    auto kernel2 = make_device_spmm<double>(algorithm, context, A2.view());
    try {
      kernel2->multiply(1.0, far, 0.0, dense::DenseView<double>{Space::device, 3, 1, 1, c.data()});
      ADD_FAILURE() << "a 4 GiB row stride was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(huge_ld)), std::string::npos) << e.what();
    }
    // One row: B(0, 0) only. A1 is 3 x 1, so C = A1 * b.
    const double b0 = 2.5;
    ASSERT_EQ(cudaMemcpy(b.data(), &b0, sizeof b0, cudaMemcpyHostToDevice), cudaSuccess);
    auto kernel1 = make_device_spmm<double>(algorithm, context, A1.view());
    kernel1->multiply(1.0, dense::ConstDenseView<double>(Space::device, 1, 1, huge_ld, b.data()), 0.0,
                      dense::DenseView<double>{Space::device, 3, 1, 1, c.data()});
    context.synchronize();
    std::vector<double> got(3);
    ASSERT_EQ(cudaMemcpy(got.data(), c.data(), sizeof(double) * 3, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::int64_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], one.values[i] * b0) << i;
  }
}

// Complex values on the paths that real tests reach in one precision: blocks
// past one launch (complex double launches 128 columns: the same bytes as
// fp64's 256), and skewed rows with a row of 40k nonzeros (row-split's n = 1
// stream body, whose long row is cut into pieces; the merge kernel's carries
// and its tree fix-up).
TEST_F(SpmmKernels, ComplexWideBlocksAndSkewedRows) {
  const auto skewed = [](std::int64_t i, std::mt19937_64& e) {
    return i == 5 ? std::int64_t(40000) : i % 101 == 0 ? std::int64_t(500 + e() % 500) : std::int64_t(e() % 9);
  };
  const auto A = random_csr<std::complex<double>>(6000, 45000, 81, skewed);
  check_all_algorithms(A, {{.n = 1},
                           {.n = 2, .beta = 0.5, .beta_im = -0.5},
                           {.n = 17},
                           {.n = 128, .alpha = -1.0, .alpha_im = 0.5},
                           {.n = 300, .beta = 0.5, .ldb = 302, .ldc = 305}});
  // One complex column takes row_split's stream body on skewed rows, as one real column does.
  const dense::Context context = dense::Context::cuda(0);
  spmm::CsrMatrix<std::complex<double>> device(Space::device, A);
  device_sync();
  EXPECT_EQ(spmm::Plan<std::complex<double>>(context, device.view()).algorithm_for(1), Algorithm::row_split);
  const auto Af = random_csr<std::complex<float>>(6000, 45000, 82, skewed);
  check_all_algorithms(Af, {{.n = 1}, {.n = 3, .beta = 2.0}, {.n = 64}, {.n = 257, .beta = 0.5}});
}

// Skewed rows (so the merge kernel has carries): two runs give the same bits.
TEST_F(SpmmKernels, DeterministicBits) {
  const auto A = random_csr<double>(20000, 20000, 51, [](std::int64_t i, std::mt19937_64& e) {
    return i % 997 == 0 ? std::int64_t(3000 + e() % 3000) : std::int64_t(e() % 12);
  });
  const dense::Context context = dense::Context::cuda(0);
  spmm::CsrMatrix<double> device(Space::device, A);
  device_sync();
  for (Algorithm algorithm : {Algorithm::row_split, Algorithm::merge_based, Algorithm::automatic}) {
    auto kernel = make_device_spmm<double>(algorithm, context, device.view());
    for (std::int64_t n : {1, 2, 4, 17, 128}) {
      const Problem p{.n = n, .beta = 0.5};
      std::vector<double> first, second;
      ASSERT_TRUE(check_against_reference(*kernel, algorithm, context, A, p, &first));
      ASSERT_TRUE(check_against_reference(*kernel, algorithm, context, A, p, &second));
      ASSERT_EQ(first.size(), second.size());
      EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(double)), 0)
          << to_string(algorithm) << " n=" << n << " gave different bits on two runs";
    }
  }
}
}  // namespace one_precision

// The tolerance of these tests and of spmm-bench's check: positive and finite
// for every row length (the old L eps / (1 - L eps) went negative at a row of
// 8.4M in fp32), the deterministic bound for short rows, and still tight
// enough on a long fp32 row to reject a result with 1% of its terms dropped.
TEST(SpmmKernelsHost, SumErrorBoundStaysMeaningful) {
  const double e32 = std::numeric_limits<float>::epsilon(), e64 = std::numeric_limits<double>::epsilon();
  const std::int64_t lengths[] = {1, 2, 16, 100002, 8388610, std::int64_t(1) << 31};
  for (std::int64_t l : lengths) {
    for (double eps : {e32, e64}) {
      const double g = spmm::sum_error_bound(l, eps), le = double(l) * eps;
      EXPECT_GT(g, 0.0) << l;
      EXPECT_LT(g, 0.05) << l;  // fp32, 2^31 terms: 0.022
      if (le < 0.5) {
        EXPECT_LE(g, le / (1.0 - le)) << l;  // never looser than the worst case
      }
    }
  }
  EXPECT_DOUBLE_EQ(spmm::sum_error_bound(3, e32), 3 * e32 / (1 - 3 * e32));
  // Row of 100k products of uniform [-1, 1) values: sum |a b| ~ 25000, the sum
  // itself ~ 100 (random signs); 1000 dropped terms move it by ~ 10.
  EXPECT_LT(2.0 * spmm::sum_error_bound(100002, e32) * 25000.0, 10.0);
}

}  // namespace
}  // namespace blockeigs::test
