#include "bench/spmm/bench_cusparse.hpp"

#include <complex>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/data_type.hpp"

namespace blockeigs::spmm::bench {
namespace {

cusparseSpMMAlg_t algorithm(CusparseVariant v) {
  switch (v) {
    case CusparseVariant::default_row_major: return CUSPARSE_SPMM_ALG_DEFAULT;
    case CusparseVariant::alg2_row_major: return CUSPARSE_SPMM_CSR_ALG2;
    case CusparseVariant::alg3_row_major: return CUSPARSE_SPMM_CSR_ALG3;
    case CusparseVariant::alg1_column_major: return CUSPARSE_SPMM_CSR_ALG1;
  }
  return CUSPARSE_SPMM_ALG_DEFAULT;
}

// A cuSPARSE call that may refuse the case: false plus the reason.
bool accepted(cusparseStatus_t status, const char* what, std::string& why_not) {
  if (status == CUSPARSE_STATUS_SUCCESS) return true;
  why_not = std::string(what) + ": " + cusparseGetErrorString(status);
  return false;
}

}  // namespace

std::string name(CusparseVariant v) {
  switch (v) {
    case CusparseVariant::default_row_major: return "cusparse_default";
    case CusparseVariant::alg2_row_major: return "cusparse_csr_alg2";
    case CusparseVariant::alg3_row_major: return "cusparse_csr_alg3";
    case CusparseVariant::alg1_column_major: return "cusparse_csr_alg1_colmajor";
  }
  return "?";
}

bool column_major(CusparseVariant v) { return v == CusparseVariant::alg1_column_major; }

template <class T>
CusparseRunner<T>::CusparseRunner(const dense::Context& context, const CsrView<T>& A, CusparseVariant variant)
    : context_(context), A_(A), variant_(variant) {
  cusparseSpMatDescr_t m = nullptr;
  BLOCKEIGS_CUSPARSE_CHECK(cusparseCreateCsr(&m, A.rows, A.cols, A.nnz, const_cast<std::int32_t*>(A.row_offsets),
                                             const_cast<std::int32_t*>(A.col_indices), const_cast<T*>(A.values),
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                             cuda::data_type_of<T>()));
  matrix_ = m;
}

template <class T>
CusparseRunner<T>::~CusparseRunner() {
  release_dense();
  if (matrix_) BLOCKEIGS_CUSPARSE_CHECK_NOTHROW(cusparseDestroySpMat(static_cast<cusparseSpMatDescr_t>(matrix_)));
}

template <class T>
void CusparseRunner<T>::release_dense() {
  for (void* d : b_descr_) BLOCKEIGS_CUSPARSE_CHECK_NOTHROW(cusparseDestroyDnMat(static_cast<cusparseDnMatDescr_t>(d)));
  for (void* d : c_descr_) BLOCKEIGS_CUSPARSE_CHECK_NOTHROW(cusparseDestroyDnMat(static_cast<cusparseDnMatDescr_t>(d)));
  b_descr_.clear();
  c_descr_.clear();
}

template <class T>
bool CusparseRunner<T>::prepare(std::int64_t n, const std::vector<const T*>& b, std::int64_t ldb,
                                const std::vector<T*>& c, std::int64_t ldc, T alpha, T beta, std::string& why_not) {
  release_dense();
  alpha_.value = alpha;
  beta_.value = beta;
  const auto order = column_major(variant_) ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
  // CSR_ALG3's preprocessing belongs to the buffers it saw: it gets one copy.
  const std::size_t copies = variant_ == CusparseVariant::alg3_row_major ? 1 : b.size();
  for (std::size_t k = 0; k < copies; ++k) {
    cusparseDnMatDescr_t bd = nullptr, cd = nullptr;
    if (!accepted(cusparseCreateDnMat(&bd, A_.cols, n, ldb, const_cast<T*>(b[k]), cuda::data_type_of<T>(), order),
                  "cusparseCreateDnMat(B)", why_not))
      return false;
    b_descr_.push_back(bd);
    if (!accepted(cusparseCreateDnMat(&cd, A_.rows, n, ldc, c[k], cuda::data_type_of<T>(), order),
                  "cusparseCreateDnMat(C)", why_not))
      return false;
    c_descr_.push_back(cd);
  }
  auto handle = static_cast<cusparseHandle_t>(context_.cusparse_handle());
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const auto mat = static_cast<cusparseSpMatDescr_t>(matrix_);
  const auto bd = static_cast<cusparseDnMatDescr_t>(b_descr_[0]);
  const auto cd = static_cast<cusparseDnMatDescr_t>(c_descr_[0]);
  std::size_t bytes = 0;
  if (!accepted(cusparseSpMM_bufferSize(handle, op, op, &alpha_.value, mat, bd, &beta_.value, cd,
                                        cuda::data_type_of<T>(), algorithm(variant_), &bytes),
                "cusparseSpMM_bufferSize", why_not))
    return false;
  if (bytes > workspace_.size()) workspace_ = dense::Buffer<char>(Space::device, bytes);
  if (variant_ == CusparseVariant::alg3_row_major &&
      !accepted(cusparseSpMM_preprocess(handle, op, op, &alpha_.value, mat, bd, &beta_.value, cd,
                                        cuda::data_type_of<T>(), algorithm(variant_), workspace_.data()),
                "cusparseSpMM_preprocess", why_not))
    return false;
  return true;
}

template <class T>
void CusparseRunner<T>::run(int copy) {
  const std::size_t k = static_cast<std::size_t>(copy) % b_descr_.size();
  auto handle = static_cast<cusparseHandle_t>(context_.cusparse_handle());
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  BLOCKEIGS_CUSPARSE_CHECK(cusparseSpMM(handle, op, op, &alpha_.value, static_cast<cusparseSpMatDescr_t>(matrix_),
                                        static_cast<cusparseDnMatDescr_t>(b_descr_[k]), &beta_.value,
                                        static_cast<cusparseDnMatDescr_t>(c_descr_[k]), cuda::data_type_of<T>(),
                                        algorithm(variant_), workspace_.data()));
}

template class CusparseRunner<float>;
template class CusparseRunner<double>;
template class CusparseRunner<std::complex<float>>;
template class CusparseRunner<std::complex<double>>;

}  // namespace blockeigs::spmm::bench
