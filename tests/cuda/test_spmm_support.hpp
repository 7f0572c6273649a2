// Helpers for the GPU SpMM tests: random CSR matrices, running one algorithm
// on the device, and comparing with the host reference under a tolerance
// derived from the problem:
//   |c - c_ref| <= 2 * gamma(L + 2) * (sum_k |alpha a_ik b_kj| + |beta c_ij|)
// with gamma = spmm::sum_error_bound(L + 2, eps of T) (L eps / (1 - L eps) for
// short rows, the probabilistic sqrt(L) bound of Higham and Mary for long
// ones, never negative), L the row length; the factor 2 covers the host
// reference's own rounding, L + 2 the alpha and beta updates.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/scalar.hpp"
#include "spmm/local_spmm.hpp"
#include "spmm/cuda/sum_error_bound.hpp"
#include "spmm/plan.hpp"
#include "test_matrices.hpp"

namespace blockeigs::test {

// A value of T from the distribution: one draw, or two (real, imaginary) for complex T.
template <class T>
T draw(std::uniform_real_distribution<double>& uniform, std::mt19937_64& engine) {
  if constexpr (is_complex_v<T>) {
    const double re = uniform(engine);
    return T(real_t<T>(re), real_t<T>(uniform(engine)));
  } else {
    return static_cast<T>(uniform(engine));
  }
}
// re + i im in T (the imaginary part dropped for real T).
template <class T>
T scalar(double re, double im) {
  if constexpr (is_complex_v<T>)
    return T(real_t<T>(re), real_t<T>(im));
  else
    return static_cast<T>(re);
}
// T widened to double (or std::complex<double>), for the tolerance checks.
template <class T>
auto widen(T x) {
  if constexpr (is_complex_v<T>)
    return std::complex<double>(x);
  else
    return double(x);
}
inline std::string text(double x) { return std::to_string(x); }
inline std::string text(std::complex<double> x) {
  std::ostringstream out;
  out << x;  // (re,im)
  return out.str();
}

inline constexpr Algorithm device_algorithms[] = {Algorithm::row_split, Algorithm::merge_based, Algorithm::automatic,
                                                  Algorithm::cusparse};

// Rows with the distinct sorted columns `columns(row, engine)` returns,
// values in [-1, 1) drawn from the same engine after each row's columns.
template <class T, class Columns>
spmm::HostCsr<T> csr_from_columns(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Columns columns) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  spmm::HostCsr<T> a;
  a.rows = rows;
  a.cols = cols;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int32_t c : columns(i, engine)) {
      a.col_indices.push_back(c);
      a.values.push_back(draw<T>(uniform, engine));
    }
    a.row_offsets.push_back(static_cast<std::int32_t>(a.col_indices.size()));
  }
  return a;
}

// Rows with `length(row)` distinct sorted columns, values in [-1, 1).
template <class T, class Length>
spmm::HostCsr<T> random_csr(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Length length) {
  std::vector<std::int32_t> all(static_cast<std::size_t>(cols));
  std::iota(all.begin(), all.end(), 0);
  return csr_from_columns<T>(rows, cols, seed, [&](std::int64_t i, std::mt19937_64& engine) {
    const std::int64_t l = std::min<std::int64_t>(length(i, engine), cols);
    std::vector<std::int32_t> chosen;
    if (l * 4 > cols) {  // dense row: partial shuffle
      for (std::int64_t k = 0; k < l; ++k)
        std::swap(all[static_cast<std::size_t>(k)],
                  all[static_cast<std::size_t>(k + static_cast<std::int64_t>(engine() % std::uint64_t(cols - k)))]);
      chosen.assign(all.begin(), all.begin() + l);
    } else {
      while (static_cast<std::int64_t>(chosen.size()) < l) {
        chosen.push_back(static_cast<std::int32_t>(engine() % std::uint64_t(cols)));
        if (static_cast<std::int64_t>(chosen.size()) == l) {
          std::sort(chosen.begin(), chosen.end());
          chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
        }
      }
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  });
}

// `automatic` goes through spmm::Plan, the way the solvers call it.
template <class T>
class PlanSpmm final : public spmm::LocalSpmm<T> {
 public:
  PlanSpmm(const dense::Context& context, const spmm::CsrView<T>& A) : plan_(context, A, Algorithm::automatic) {}
  void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) override {
    plan_.multiply(alpha, B, beta, C);
  }

 private:
  spmm::Plan<T> plan_;
};

template <class T>
std::unique_ptr<spmm::LocalSpmm<T>> make_device_spmm(Algorithm algorithm, const dense::Context& context,
                                                     const spmm::CsrView<T>& A) {
  switch (algorithm) {
    case Algorithm::row_split: return spmm::make_row_split_spmm(context, A);
    case Algorithm::merge_based: return spmm::make_merge_based_spmm(context, A);
    case Algorithm::cusparse: return spmm::make_cusparse_spmm(context, A);
    case Algorithm::automatic: return std::make_unique<PlanSpmm<T>>(context, A);
    default: break;
  }
  throw Error("no device SpMM for " + std::string(to_string(algorithm)));
}

// Uploads from pageable memory may still be in flight on the legacy stream,
// which the context's non-blocking stream does not wait for.
inline void device_sync() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess); }

// A host block copied to the device, as a view starting `offset` elements
// into its buffer (offset != 0 breaks 16-byte alignment on purpose).
template <class T>
struct DeviceBlock {
  dense::Buffer<T> buffer;
  std::int64_t rows = 0, cols = 0, ld = 0, offset = 0;
  DeviceBlock(const std::vector<T>& host, std::int64_t r, std::int64_t c, std::int64_t l, std::int64_t off)
      : buffer(Space::device, host.size() + static_cast<std::size_t>(off)), rows(r), cols(c), ld(l), offset(off) {
    if (!host.empty())
      dense::copy_bytes(buffer.data() + off, Space::device, host.data(), Space::host, host.size() * sizeof(T));
  }
  dense::DenseView<T> view() {
    return {Space::device, rows, cols, ld, buffer.empty() ? nullptr : buffer.data() + offset};
  }
  std::vector<T> to_host() const {
    std::vector<T> all = buffer.to_host();
    return std::vector<T>(all.begin() + offset, all.end());
  }
};

template <class T>
double gamma_bound(std::int64_t length) {
  return spmm::sum_error_bound(length, std::numeric_limits<T>::epsilon());
}

// One multiply on the device compared with the host reference.
struct Problem {
  std::int64_t n = 1;
  double alpha = 1.0, beta = 0.0;
  std::int64_t ldb = 0, ldc = 0;  // 0: n
  std::int64_t b_offset = 0, c_offset = 0;
  bool nan_c = true;   // fill C with NaN (only meaningful for beta == 0)
  bool nan_b = false;  // fill B with NaN (alpha == 0: B must not be read)
  std::uint64_t seed = 1;
  double alpha_im = 0.0, beta_im = 0.0;  // complex values only
};

inline std::string describe(Algorithm algorithm, const Problem& p) {
  return std::string(to_string(algorithm)) + " n=" + std::to_string(p.n) + " alpha=" + std::to_string(p.alpha) +
         " beta=" + std::to_string(p.beta) + " ldb=" + std::to_string(p.ldb) + " ldc=" + std::to_string(p.ldc) +
         " offsets=" + std::to_string(p.b_offset) + "," + std::to_string(p.c_offset);
}

// Runs `algorithm` (built once by the caller) and returns its C (host, ld = ldc).
template <class T>
std::vector<T> run_device(spmm::LocalSpmm<T>& kernel, const dense::Context& context, const spmm::HostCsr<T>& A,
                          const Problem& p, const std::vector<T>& b, const std::vector<T>& c0) {
  const std::int64_t ldb = p.ldb ? p.ldb : p.n, ldc = p.ldc ? p.ldc : p.n;
  DeviceBlock<T> B(b, A.cols, p.n, ldb, p.b_offset), C(c0, A.rows, p.n, ldc, p.c_offset);
  device_sync();
  kernel.multiply(scalar<T>(p.alpha, p.alpha_im), B.view(), scalar<T>(p.beta, p.beta_im), C.view());
  context.synchronize();
  return C.to_host();
}

template <class T>
std::vector<T> fill(std::int64_t rows, std::int64_t ld, std::uint64_t seed, bool nan) {
  std::vector<T> v(static_cast<std::size_t>(rows * ld));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const real_t<T> not_a_number = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (auto& x : v) x = nan ? scalar<T>(not_a_number, not_a_number) : draw<T>(uniform, engine);
  return v;
}

// Compares `algorithm` with the host reference on one problem; also checks
// that the padding columns n..ld-1 of C are left alone.
template <class T>
::testing::AssertionResult check_against_reference(spmm::LocalSpmm<T>& kernel, Algorithm algorithm,
                                                   const dense::Context& context, const spmm::HostCsr<T>& A,
                                                   const Problem& p, std::vector<T>* result = nullptr) {
  const std::int64_t n = p.n, ldb = p.ldb ? p.ldb : n, ldc = p.ldc ? p.ldc : n;
  const std::vector<T> b = fill<T>(A.cols, ldb, p.seed, p.nan_b);
  std::vector<T> c0 = fill<T>(A.rows, ldc, p.seed + 1, p.nan_c && p.beta == 0.0 && p.beta_im == 0.0);
  for (std::int64_t i = 0; i < A.rows; ++i)
    for (std::int64_t j = n; j < ldc; ++j) c0[static_cast<std::size_t>(i * ldc + j)] = T(12345);
  const std::vector<T> c = run_device(kernel, context, A, p, b, c0);
  if (result) *result = c;

  // Reference: make_reference_spmm on host copies (B with NaN is only used with alpha == 0).
  std::vector<T> c_ref = c0;
  const T alpha = scalar<T>(p.alpha, p.alpha_im), beta = scalar<T>(p.beta, p.beta_im);
  if (alpha != T(0)) {
    spmm::make_reference_spmm(A.view())->multiply(alpha, {Space::host, A.cols, n, ldb, b.data()}, beta,
                                                  {Space::host, A.rows, n, ldc, c_ref.data()});
  } else {
    for (std::int64_t i = 0; i < A.rows; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        T& x = c_ref[static_cast<std::size_t>(i * ldc + j)];
        x = beta == T(0) ? T(0) : beta * x;
      }
  }
  std::int64_t bad = 0;
  std::string first;
  for (std::int64_t i = 0; i < A.rows; ++i) {
    const std::int64_t begin = A.row_offsets[static_cast<std::size_t>(i)],
                       end = A.row_offsets[static_cast<std::size_t>(i) + 1];
    // A complex product adds the rounding of two real products.
    const double g = gamma_bound<real_t<T>>(end - begin + 2) * reals_per_value<T>;
    for (std::int64_t j = 0; j < ldc; ++j) {
      const std::size_t at = static_cast<std::size_t>(i * ldc + j);
      double tolerance = 0.0;
      if (j < n) {
        double scale = beta == T(0) ? 0.0 : std::abs(widen(beta) * widen(c0[at]));
        if (alpha != T(0))
          for (std::int64_t k = begin; k < end; ++k)
            scale += std::abs(widen(alpha) * widen(A.values[static_cast<std::size_t>(k)]) *
                              widen(b[static_cast<std::size_t>(A.col_indices[static_cast<std::size_t>(k)] * ldb + j)]));
        tolerance = 2.0 * g * scale;
      }
      const auto got = widen(c[at]), want = widen(c_ref[at]);
      if (!(std::abs(got - want) <= tolerance)) {  // NaN fails too
        if (bad++ == 0)
          first = "C(" + std::to_string(i) + "," + std::to_string(j) + ") = " + text(got) + ", reference " +
                  text(want) + ", tolerance " + std::to_string(tolerance) +
                  (j >= n ? " (padding column: must be untouched)" : "");
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(algorithm, p) << ": " << bad << " wrong entries of " << A.rows
                                       << " x " << ldc << "; first: " << first;
}

// Every device algorithm on every problem.
template <class T>
void check_all_algorithms(const spmm::HostCsr<T>& A, const std::vector<Problem>& problems,
                          const std::vector<Algorithm>& algorithms = {std::begin(device_algorithms),
                                                                      std::end(device_algorithms)}) {
  const dense::Context context = dense::Context::cuda(0);
  spmm::CsrMatrix<T> device(Space::device, A);
  device_sync();
  for (Algorithm algorithm : algorithms) {
    auto kernel = make_device_spmm<T>(algorithm, context, device.view());
    for (const Problem& p : problems) EXPECT_TRUE(check_against_reference(*kernel, algorithm, context, A, p));
  }
}

}  // namespace blockeigs::test
