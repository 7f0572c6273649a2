// The interface each local SpMM algorithm implements, and their factories.
// Used by Plan; tests and benchmarks may use the factories directly.
#pragma once

#include <memory>

#include "core/backend_lists.hpp"
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
// device_kernels_stub.cpp throw "not compiled with CUDA"): cuSPARSE's, and
// ours: a group of lanes per row, and nonzeros split evenly across warps by a
// merge-path partition (built here, once) with a deterministic carry fix-up.
// A must be in device memory and outlive the object. `shape` is A's row shape
// when the caller has it (Plan reads it once for both kernels and its own
// choice); otherwise (null) it is read here.
#define BLOCKEIGS_SPMM_MAKE_CUSPARSE(T) \
  std::unique_ptr<LocalSpmm<T>> make_cusparse_spmm(const dense::Context& context, const CsrView<T>& A)
#define BLOCKEIGS_SPMM_MAKE_ROW_SPLIT(T)                                                                \
  std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context& context, const CsrView<T>& A, \
                                                    const cuda::RowShape* shape)
#define BLOCKEIGS_SPMM_MAKE_MERGE_BASED(T)                                                                \
  std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context& context, const CsrView<T>& A, \
                                                      const cuda::RowShape* shape)
// Each as OP(signature, name) (core/backend_lists.hpp), for every T of BLOCKEIGS_FOR_EACH_SCALAR.
#define BLOCKEIGS_SPMM_DEVICE_KERNELS(T, OP)                  \
  OP(BLOCKEIGS_SPMM_MAKE_CUSPARSE(T), "make_cusparse_spmm")   \
  OP(BLOCKEIGS_SPMM_MAKE_ROW_SPLIT(T), "make_row_split_spmm") \
  OP(BLOCKEIGS_SPMM_MAKE_MERGE_BASED(T), "make_merge_based_spmm")
BLOCKEIGS_SPMM_DEVICE_KERNELS(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)

// Our kernels with A's shape read here.
template <class T>
std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context& context, const CsrView<T>& A) {
  return make_row_split_spmm(context, A, nullptr);
}
template <class T>
std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context& context, const CsrView<T>& A) {
  return make_merge_based_spmm(context, A, nullptr);
}

}  // namespace blockeigs::spmm
