// The device kernels a Plan builds (spmm/local_spmm.hpp), A's row shape on
// the device and the device's limits where the build has no CUDA: a Plan on
// the host never reaches them; an error if called.
#include <complex>
#include <cstdint>
#include <memory>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "spmm/cuda/device_limits.hpp"
#include "spmm/heuristic.hpp"
#include "spmm/local_spmm.hpp"

namespace blockeigs::spmm {

template <class T>
std::unique_ptr<LocalSpmm<T>> make_cusparse_spmm(const dense::Context&, const CsrView<T>&) {
  throw NotCompiled("make_cusparse_spmm", "CUDA");
}

template <class T>
std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context&, const CsrView<T>&, const cuda::RowShape*) {
  throw NotCompiled("make_row_split_spmm", "CUDA");
}

template <class T>
std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context&, const CsrView<T>&, const cuda::RowShape*) {
  throw NotCompiled("make_merge_based_spmm", "CUDA");
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                         \
  template std::unique_ptr<LocalSpmm<T>> make_cusparse_spmm(const dense::Context&, const CsrView<T>&);   \
  template std::unique_ptr<LocalSpmm<T>> make_row_split_spmm(const dense::Context&, const CsrView<T>&,   \
                                                             const cuda::RowShape*);                     \
  template std::unique_ptr<LocalSpmm<T>> make_merge_based_spmm(const dense::Context&, const CsrView<T>&, \
                                                               const cuda::RowShape*);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

namespace cuda {

RowShape row_shape(const std::int32_t*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*) {
  throw NotCompiled("row_shape", "CUDA");
}

DeviceLimits device_limits(int) { throw NotCompiled("device_limits", "CUDA"); }

}  // namespace cuda
}  // namespace blockeigs::spmm
