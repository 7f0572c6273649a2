// cuSPARSE SpMM (row-major B and C): the GPU baseline, and the fallback
// until our kernels are chosen. The workspace is sized on first use for each
// block width and kept.
#include <algorithm>
#include <complex>

#include "spmm/cuda/cuda_check.hpp"
#include "spmm/cuda/data_type.hpp"
#include "spmm/cuda/dense_kernels.hpp"
#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {
namespace {

template <class T>
class CusparseSpmm final : public LocalSpmm<T> {
 public:
  CusparseSpmm(const dense::Context& context, const CsrView<T>& A) : context_(context), A_(A) {
    if (A.nnz > 0)
      BLOCKEIGS_CUSPARSE_CHECK(
          cusparseCreateCsr(&matrix_, A.rows, A.cols, A.nnz, const_cast<std::int32_t*>(A.row_offsets),
                            const_cast<std::int32_t*>(A.col_indices), const_cast<T*>(A.values), CUSPARSE_INDEX_32I,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, cuda::data_type_of<T>()));
  }
  ~CusparseSpmm() override {
    if (matrix_) cusparseDestroySpMat(matrix_);
  }

  void multiply(T alpha_value, dense::ConstDenseView<T> B, T beta_value, dense::DenseView<T> C) override {
    const cuda::LibraryScalar<T> alpha{alpha_value}, beta{beta_value};
    // cuSPARSE may read C even when beta == 0 (NaN * 0 is NaN), so C is
    // cleared first; an empty A leaves C = beta * C.
    if (beta.value == T(0) || A_.nnz == 0) cuda::scale_block(C, beta.value, context_.stream());
    if (A_.nnz == 0) return;
    auto handle = static_cast<cusparseHandle_t>(context_.cusparse_handle());
    cusparseDnMatDescr_t b = nullptr, c = nullptr;
    BLOCKEIGS_CUSPARSE_CHECK(cusparseCreateDnMat(&b, B.rows, B.cols, B.ld, const_cast<T*>(B.data),
                                                 cuda::data_type_of<T>(), CUSPARSE_ORDER_ROW));
    BLOCKEIGS_CUSPARSE_CHECK(
        cusparseCreateDnMat(&c, C.rows, C.cols, C.ld, C.data, cuda::data_type_of<T>(), CUSPARSE_ORDER_ROW));
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const auto algorithm = CUSPARSE_SPMM_ALG_DEFAULT;
    std::size_t bytes = 0;
    BLOCKEIGS_CUSPARSE_CHECK(cusparseSpMM_bufferSize(handle, op, op, &alpha.value, matrix_, b, &beta.value, c,
                                                     cuda::data_type_of<T>(), algorithm, &bytes));
    if (bytes > workspace_.size()) workspace_ = dense::Buffer<char>(Space::device, bytes);
    BLOCKEIGS_CUSPARSE_CHECK(cusparseSpMM(handle, op, op, &alpha.value, matrix_, b, &beta.value, c,
                                          cuda::data_type_of<T>(), algorithm, workspace_.data()));
    cusparseDestroyDnMat(b);
    cusparseDestroyDnMat(c);
  }

 private:
  const dense::Context& context_;
  CsrView<T> A_;
  cusparseSpMatDescr_t matrix_ = nullptr;
  dense::Buffer<char> workspace_;
};

}  // namespace

template <class T>
std::unique_ptr<LocalSpmm<T>> make_cusparse_spmm(const dense::Context& context, const CsrView<T>& A) {
  return std::make_unique<CusparseSpmm<T>>(context, A);
}

#define BLOCKEIGS_INSTANTIATE(T) template BLOCKEIGS_SPMM_MAKE_CUSPARSE(T);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm
