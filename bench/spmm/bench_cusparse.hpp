// Every cuSPARSE CSR SpMM algorithm spmm-bench compares against, called
// directly (no wrapper work such as clearing C for beta = 0 is timed):
// row-major B and C with CUSPARSE_SPMM_ALG_DEFAULT, CSR_ALG2 and CSR_ALG3,
// and column-major B and C with CSR_ALG1 (the same product).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "spmm/cuda/data_type.hpp"
#include "dense/memory.hpp"

namespace blockeigs::spmm::bench {

enum class CusparseVariant { default_row_major, alg2_row_major, alg3_row_major, alg1_column_major };

inline constexpr CusparseVariant all_cusparse_variants[] = {
    CusparseVariant::default_row_major, CusparseVariant::alg2_row_major, CusparseVariant::alg3_row_major,
    CusparseVariant::alg1_column_major};

std::string name(CusparseVariant variant);
bool column_major(CusparseVariant variant);

// One algorithm on one matrix and fixed B/C buffers (one per input copy).
// prepare() returns false, with the reason, when cuSPARSE refuses the case.
template <class T>
class CusparseRunner {
 public:
  CusparseRunner(const dense::Context& context, const CsrView<T>& A, CusparseVariant variant);
  ~CusparseRunner();
  CusparseRunner(const CusparseRunner&) = delete;
  CusparseRunner& operator=(const CusparseRunner&) = delete;

  // B and C pointers per copy; ldb/ldc as the layout needs (k or n for B).
  bool prepare(std::int64_t n, const std::vector<const T*>& b, std::int64_t ldb, const std::vector<T*>& c,
               std::int64_t ldc, T alpha, T beta, std::string& why_not);
  void run(int copy);

 private:
  void release_dense();
  const dense::Context& context_;
  CsrView<T> A_;
  CusparseVariant variant_;
  void* matrix_ = nullptr;                // cusparseSpMatDescr_t
  std::vector<void*> b_descr_, c_descr_;  // cusparseDnMatDescr_t per copy
  dense::Buffer<char> workspace_;
  cuda::LibraryScalar<T> alpha_, beta_;
};

}  // namespace blockeigs::spmm::bench
