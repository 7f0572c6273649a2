// The device split where the build has no CUDA: never chosen by
// split_local_rows(context, rows) (a host context), an error if called.
#include <complex>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/local_blocks.hpp"

namespace blockeigs::solver {

template <class T>
LocalBlocks<T> split_local_rows_on_device(const dense::Context&, const CsrRows&) {
  throw NotCompiled("split_local_rows_on_device", "CUDA");
}

template <class T>
LocalBlocks<T> split_replicated_on_device(const dense::Context&, const ReplicatedCsr&) {
  throw NotCompiled("split_replicated_on_device", "CUDA");
}

template LocalBlocks<float> split_replicated_on_device(const dense::Context&, const ReplicatedCsr&);
template LocalBlocks<double> split_replicated_on_device(const dense::Context&, const ReplicatedCsr&);
template LocalBlocks<std::complex<double>> split_replicated_on_device(const dense::Context&, const ReplicatedCsr&);
template LocalBlocks<float> split_local_rows_on_device(const dense::Context&, const CsrRows&);
template LocalBlocks<double> split_local_rows_on_device(const dense::Context&, const CsrRows&);

}  // namespace blockeigs::solver

namespace blockeigs::solver::cuda {

template <class T>
std::int64_t find_diagonal_positions(const dense::Context&, const spmm::CsrView<T>&, std::int64_t*) {
  throw NotCompiled("find_diagonal_positions on the device", "CUDA");
}

template <class T>
void set_shifted_diagonal(const dense::Context&, T*, const std::int64_t*, const T*, T, std::int64_t) {
  throw NotCompiled("set_shifted_diagonal on the device", "CUDA");
}

#define BLOCKEIGS_DIAGONAL(T)                                                                                   \
  template std::int64_t find_diagonal_positions(const dense::Context&, const spmm::CsrView<T>&, std::int64_t*); \
  template void set_shifted_diagonal(const dense::Context&, T*, const std::int64_t*, const T*, T, std::int64_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_DIAGONAL)
#undef BLOCKEIGS_DIAGONAL

}  // namespace blockeigs::solver::cuda
