#include "bench/spmm/bench_check.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>

#include "bench/spmm/bench_values.cuh"
#include "core/scalar.hpp"
#include "spmm/cuda/sum_error_bound.hpp"

namespace blockeigs::spmm::bench {

std::vector<std::int64_t> sample_rows(const HostCsr<double>& A, std::int64_t max_samples, std::uint64_t seed) {
  std::vector<std::int64_t> rows;
  if (A.rows <= max_samples) {
    for (std::int64_t i = 0; i < A.rows; ++i) rows.push_back(i);
    return rows;
  }
  std::mt19937_64 engine(seed);
  for (std::int64_t s = 0; s < max_samples; ++s)
    rows.push_back(static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(A.rows)));
  rows.push_back(0);
  rows.push_back(A.rows - 1);
  std::vector<std::int64_t> by_length(static_cast<std::size_t>(A.rows));
  for (std::int64_t i = 0; i < A.rows; ++i) by_length[static_cast<std::size_t>(i)] = i;
  auto length = [&](std::int64_t i) {
    return A.row_offsets[static_cast<std::size_t>(i) + 1] - A.row_offsets[static_cast<std::size_t>(i)];
  };
  std::partial_sort(by_length.begin(), by_length.begin() + 3, by_length.end(),
                    [&](std::int64_t x, std::int64_t y) { return length(x) > length(y); });
  rows.insert(rows.end(), by_length.begin(), by_length.begin() + 3);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

namespace {

// T's values widened: double, or std::complex<double>.
template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

// Entry (i, j) of a hash-valued block as the device holds it (rounded to T), widened.
template <class T>
Wide<T> entry(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  if constexpr (is_complex_v<T>)
    return Wide<T>(T(real_t<T>(bench_value(seed, i, j)), real_t<T>(bench_value_im(seed, i, j))));
  else
    return double(static_cast<T>(bench_value(seed, i, j)));
}

std::string text(double x) { return std::to_string(x); }
std::string text(std::complex<double> x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

template <class T>
Reference make_reference(const HostCsr<T>& A, const std::vector<std::int64_t>& rows, std::int64_t n, T alpha, T beta,
                         std::uint64_t b_seed, std::uint64_t c_seed, std::int64_t work_per_row) {
  Reference ref;
  ref.n = n;
  ref.rows = rows;
  ref.row_first.push_back(0);
  for (std::int64_t i : rows) {  // which columns each sampled row checks
    const std::int64_t length =
        A.row_offsets[static_cast<std::size_t>(i) + 1] - A.row_offsets[static_cast<std::size_t>(i)];
    const std::int64_t count =
        std::min<std::int64_t>(n, std::max<std::int64_t>(2, work_per_row / std::max<std::int64_t>(length, 1)));
    for (std::int64_t c = 0; c < count; ++c)
      ref.col.push_back(static_cast<std::int32_t>(count == 1 ? 0 : c * (n - 1) / (count - 1)));
    ref.row_first.push_back(static_cast<std::int32_t>(ref.col.size()));
  }
  ref.value.assign(ref.col.size(), 0.0);
  ref.value_im.assign(is_complex_v<T> ? ref.col.size() : 0, 0.0);
  ref.tolerance.assign(ref.col.size(), 0.0);
  const double eps = std::numeric_limits<real_t<T>>::epsilon() * reals_per_value<T>;  // a complex product: two
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(rows.size()); ++s) {
    const std::int64_t i = rows[static_cast<std::size_t>(s)];
    const std::int64_t begin = A.row_offsets[static_cast<std::size_t>(i)];
    const std::int64_t end = A.row_offsets[static_cast<std::size_t>(i) + 1];
    const double gamma = sum_error_bound(end - begin + 2, eps);  // never negative, any row length
    for (std::int32_t e = ref.row_first[static_cast<std::size_t>(s)];
         e < ref.row_first[static_cast<std::size_t>(s) + 1]; ++e) {
      const std::int64_t j = ref.col[static_cast<std::size_t>(e)];
      Wide<T> sum = 0.0;
      double scale = 0.0;
      for (std::int64_t k = begin; k < end; ++k) {
        // The inputs as the device sees them: rounded to T.
        const Wide<T> a = Wide<T>(A.values[static_cast<std::size_t>(k)]);
        const Wide<T> b = entry<T>(b_seed, A.col_indices[static_cast<std::size_t>(k)], j);
        sum += a * b;
        scale += std::abs(a * b);
      }
      Wide<T> value = Wide<T>(alpha) * sum;
      scale *= std::abs(Wide<T>(alpha));
      if (beta != T(0)) {
        const Wide<T> c = entry<T>(c_seed, i, j);
        value += Wide<T>(beta) * c;
        scale += std::abs(Wide<T>(beta) * c);
      }
      ref.value[static_cast<std::size_t>(e)] = std::real(value);
      if constexpr (is_complex_v<T>) ref.value_im[static_cast<std::size_t>(e)] = std::imag(value);
      ref.tolerance[static_cast<std::size_t>(e)] = 2.0 * gamma * scale;
    }
  }
  return ref;
}

template <class T>
CheckResult compare(const Reference& ref, const std::vector<T>& gathered) {
  CheckResult result;
  for (std::size_t s = 0; s < ref.rows.size(); ++s)
    for (std::int32_t e = ref.row_first[s]; e < ref.row_first[s + 1]; ++e) {
      const std::int64_t j = ref.col[static_cast<std::size_t>(e)];
      const Wide<T> got = Wide<T>(gathered[s * static_cast<std::size_t>(ref.n) + static_cast<std::size_t>(j)]);
      Wide<T> want = ref.value[static_cast<std::size_t>(e)];
      if constexpr (is_complex_v<T>) want += Wide<T>(0.0, ref.value_im[static_cast<std::size_t>(e)]);
      ++result.checked;
      if (std::abs(got - want) <= ref.tolerance[static_cast<std::size_t>(e)]) continue;  // NaN fails
      if (result.wrong++ == 0)
        result.first = "C(" + std::to_string(ref.rows[s]) + "," + std::to_string(j) + ") = " + text(got) +
                       ", reference " + text(want) + " +- " +
                       std::to_string(ref.tolerance[static_cast<std::size_t>(e)]);
    }
  return result;
}

template Reference make_reference(const HostCsr<float>&, const std::vector<std::int64_t>&, std::int64_t, float, float,
                                  std::uint64_t, std::uint64_t, std::int64_t);
template Reference make_reference(const HostCsr<double>&, const std::vector<std::int64_t>&, std::int64_t, double,
                                  double, std::uint64_t, std::uint64_t, std::int64_t);
template CheckResult compare(const Reference&, const std::vector<float>&);
template CheckResult compare(const Reference&, const std::vector<double>&);
template Reference make_reference(const HostCsr<std::complex<float>>&, const std::vector<std::int64_t>&, std::int64_t,
                                  std::complex<float>, std::complex<float>, std::uint64_t, std::uint64_t, std::int64_t);
template Reference make_reference(const HostCsr<std::complex<double>>&, const std::vector<std::int64_t>&, std::int64_t,
                                  std::complex<double>, std::complex<double>, std::uint64_t, std::uint64_t,
                                  std::int64_t);
template CheckResult compare(const Reference&, const std::vector<std::complex<float>>&);
template CheckResult compare(const Reference&, const std::vector<std::complex<double>>&);

}  // namespace blockeigs::spmm::bench
