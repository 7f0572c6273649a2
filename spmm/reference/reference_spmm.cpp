// Reference SpMM on the host: one row per iteration of an OpenMP loop, the
// row's products accumulated in a per-thread scratch row, so every C entry is
// produced by one thread in a fixed order (deterministic, no atomics).
#include <complex>
#include <vector>

#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {
namespace {

template <class T>
class ReferenceSpmm final : public LocalSpmm<T> {
 public:
  explicit ReferenceSpmm(const CsrView<T>& A) : A_(A) {}

  void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) override {
    const CsrView<T> A = A_;
    const std::int64_t n = B.cols;
    if (A.rows == 0 || n == 0) return;
#pragma omp parallel
    {
      std::vector<T> acc(static_cast<std::size_t>(n));
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = 0; i < A.rows; ++i) {
        std::fill(acc.begin(), acc.end(), T(0));
        for (std::int64_t k = A.row_offsets[i]; k < A.row_offsets[i + 1]; ++k) {
          const T a = A.values[k];
          const T* b = B.data + std::int64_t(A.col_indices[k]) * B.ld;
          for (std::int64_t j = 0; j < n; ++j) acc[j] += a * b[j];
        }
        T* c = C.data + i * C.ld;
        if (beta == T(0)) {
          for (std::int64_t j = 0; j < n; ++j) c[j] = alpha * acc[j];
        } else {
          for (std::int64_t j = 0; j < n; ++j) c[j] = alpha * acc[j] + beta * c[j];
        }
      }
    }
  }

 private:
  CsrView<T> A_;
};

}  // namespace

template <class T>
std::unique_ptr<LocalSpmm<T>> make_reference_spmm(const CsrView<T>& A) {
  return std::make_unique<ReferenceSpmm<T>>(A);
}

#define BLOCKEIGS_INSTANTIATE(T) template std::unique_ptr<LocalSpmm<T>> make_reference_spmm(const CsrView<T>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm
