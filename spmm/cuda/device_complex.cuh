// Complex values inside our kernels: DeviceComplex<R> has std::complex<R>'s
// layout (real, then imaginary) and 2 * sizeof(R) alignment, so a kernel
// built for T works on complex blocks through the same templates. Its
// arithmetic (a product is four fmas), loads and warp shuffles live in this
// namespace, found by argument-dependent lookup beside the intrinsics for
// float and double. device_t<T> maps a host element type to the kernels' one.
#pragma once

#include <cuda_runtime.h>

#include <complex>
#include <type_traits>

namespace blockeigs::spmm::cuda::complex_values {

template <class R>
struct alignas(2 * sizeof(R)) DeviceComplex {
  R re, im;
  DeviceComplex() = default;
  __host__ __device__ constexpr DeviceComplex(R real, R imag = R(0)) : re(real), im(imag) {}
};

template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R> operator+(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R>& operator+=(DeviceComplex<R>& a, DeviceComplex<R> b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R> operator*(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {::fma(a.re, b.re, -a.im * b.im), ::fma(a.re, b.im, a.im * b.re)};
}
template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R> operator-(DeviceComplex<R> a, DeviceComplex<R> b) {
  return {a.re - b.re, a.im - b.im};
}
// A real times a complex value: each part once (no products with a zero imaginary part).
template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R> operator*(R a, DeviceComplex<R> b) {
  return {a * b.re, a * b.im};
}
template <class R>
__host__ __device__ __forceinline__ bool operator==(DeviceComplex<R> a, DeviceComplex<R> b) {
  return a.re == b.re && a.im == b.im;
}
// a * b + c, each part two fmas.
template <class R>
__host__ __device__ __forceinline__ DeviceComplex<R> fma(DeviceComplex<R> a, DeviceComplex<R> b, DeviceComplex<R> c) {
  return {::fma(a.re, b.re, ::fma(-a.im, b.im, c.re)), ::fma(a.re, b.im, ::fma(a.im, b.re, c.im))};
}

// Read-only, streaming and L2 loads and stores of one value (16 or 8 bytes).
__device__ __forceinline__ DeviceComplex<double> __ldg(const DeviceComplex<double>* p) {
  const double2 v = ::__ldg(reinterpret_cast<const double2*>(p));
  return {v.x, v.y};
}
__device__ __forceinline__ DeviceComplex<float> __ldg(const DeviceComplex<float>* p) {
  const float2 v = ::__ldg(reinterpret_cast<const float2*>(p));
  return {v.x, v.y};
}

template <class R>
__device__ __forceinline__ DeviceComplex<R> __shfl_sync(unsigned mask, DeviceComplex<R> v, int lane,
                                                        int width = warpSize) {
  return {::__shfl_sync(mask, v.re, lane, width), ::__shfl_sync(mask, v.im, lane, width)};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> __shfl_xor_sync(unsigned mask, DeviceComplex<R> v, int offset,
                                                            int width = warpSize) {
  return {::__shfl_xor_sync(mask, v.re, offset, width), ::__shfl_xor_sync(mask, v.im, offset, width)};
}
template <class R>
__device__ __forceinline__ DeviceComplex<R> __shfl_up_sync(unsigned mask, DeviceComplex<R> v, unsigned delta,
                                                           int width = warpSize) {
  return {::__shfl_up_sync(mask, v.re, delta, width), ::__shfl_up_sync(mask, v.im, delta, width)};
}

}  // namespace blockeigs::spmm::cuda::complex_values

namespace blockeigs::spmm::cuda {

template <class T>
struct DeviceScalar {
  using type = T;
};
template <class R>
struct DeviceScalar<std::complex<R>> {
  using type = complex_values::DeviceComplex<R>;
};
template <class T>
using device_t = typename DeviceScalar<T>::type;

static_assert(sizeof(device_t<std::complex<double>>) == sizeof(std::complex<double>) &&
              alignof(device_t<std::complex<double>>) == 16);

// A host value as the kernels' type, and a host pointer's target likewise.
template <class T>
__host__ __device__ device_t<T> to_device(T x) {
  if constexpr (std::is_same_v<T, device_t<T>>)
    return x;
  else
    return {x.real(), x.imag()};
}
template <class T>
device_t<T>* device_pointer(T* p) {
  return reinterpret_cast<device_t<T>*>(p);
}
template <class T>
const device_t<T>* device_pointer(const T* p) {
  return reinterpret_cast<const device_t<T>*>(p);
}

}  // namespace blockeigs::spmm::cuda
