// The interface each local SpMM algorithm implements, and their factories.
// Used by Plan; tests and benchmarks may use the factories directly.
#pragma once

#include <memory>

#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "dense/dense.hpp"

#include "spmm/heuristic.hpp"

namespace blockeigs::spmm {

// C = alpha * A * B + beta * C for the matrix the object was built for.
// beta == 0: C is never read. Device algorithms run asynchronously on the
// context's stream.
template <class T>
class LocalSpmm {
 public:
  virtual ~LocalSpmm() = default;
  virtual void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) = 0;
};

template <class T>
std::unique_ptr<LocalSpmm<T>> make_reference_spmm(const CsrView<T>& A);

// The device kernels (spmm/cuda; in a build without CUDA their stubs in
// device_kernels_stub.cpp throw "not compiled with CUDA").
template <class T>
std::unique_ptr<LocalSpmm<T>> make_cusparse_spmm(const dense::Context& context, const CsrView<T>& A);
// Our kernels (spmm/cuda): a group of lanes per row, and nonzeros split evenly
// across warps by a merge-path partition (built here, once) with a
// deterministic carry fix-up. A must be in device memory and outlive the object.
// `shape` is A's row shape when the caller has it (Plan reads it once for
// both kernels and its own choice); otherwise it is read here.
template <class T>
std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context& context, const CsrView<T>& A,
                                                  const cuda::RowShape* shape = nullptr);
template <class T>
std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context& context, const CsrView<T>& A,
                                                    const cuda::RowShape* shape = nullptr);

}  // namespace blockeigs::spmm
