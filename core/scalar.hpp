// The element types a matrix and its blocks may hold: float and double, and
// their complex counterparts std::complex<float> and std::complex<double>
// (Hermitian problems). `real_t<T>` is the type of |x| and of eigenvalues;
// `reals_per_value<T>` is 2 for complex values (they move twice the bytes).
#pragma once

#include <complex>
#include <type_traits>

// X(T) for each of the four element types: one list that the files defining
// a template for all of them expand into their instantiations (host, CUDA and
// stub files alike).
#define BLOCKEIGS_FOR_EACH_SCALAR(X) X(float) X(double) X(std::complex<float>) X(std::complex<double>)

namespace blockeigs {

template <class T>
struct ScalarTraits {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float, double or std::complex of them");
  using real = T;
  static constexpr bool complex = false;
};
template <class R>
struct ScalarTraits<std::complex<R>> {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "std::complex<float> or <double>");
  using real = R;
  static constexpr bool complex = true;
};

template <class T>
using real_t = typename ScalarTraits<T>::real;
template <class T>
inline constexpr bool is_complex_v = ScalarTraits<T>::complex;
template <class T>
inline constexpr int reals_per_value = is_complex_v<T> ? 2 : 1;
// The scalar of the small dense matrices that go with blocks of T (Gram
// matrices, coefficients): double for real blocks (an fp32 block's Gram
// matrix is summed in fp64), complex double for complex ones.
template <class T>
using small_t = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
// T in single precision: float, or complex float.
template <class T>
using single_t = std::conditional_t<is_complex_v<T>, std::complex<float>, float>;

// x's conjugate (x itself where x is real) and |x|^2: code written once for real and complex scalars.
template <class T>
T conj_of(T x) {
  if constexpr (is_complex_v<T>)
    return std::conj(x);
  else
    return x;
}
template <class T>
real_t<T> abs2(T x) {
  if constexpr (is_complex_v<T>)
    return std::norm(x);
  else
    return x * x;
}

}  // namespace blockeigs
