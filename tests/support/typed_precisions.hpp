// The element types a typed test runs in, named Fp32 and Fp64 in the test
// names (SpmmKernels/Fp32.EveryWidth): TYPED_TEST_SUITE(Suite, Precisions, PrecisionNames).
#pragma once

#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <type_traits>

namespace blockeigs::test {

using Precisions = ::testing::Types<float, double>;

struct PrecisionNames {
  template <class T>
  static std::string GetName(int) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    return std::is_same_v<T, float> ? "Fp32" : "Fp64";
  }
};

// The four element types of the SpMM kernels, named Fp32, Fp64, Complex64 and
// Complex128 (NumPy's names for the complex ones).
using Scalars = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;

struct ScalarNames {
  template <class T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, std::complex<float>>)
      return "Complex64";
    else if constexpr (std::is_same_v<T, std::complex<double>>)
      return "Complex128";
    else
      return PrecisionNames::GetName<T>(0);
  }
};

// The fixture of a typed suite that needs none of its own.
template <class T>
class PrecisionTest : public ::testing::Test {};

}  // namespace blockeigs::test
