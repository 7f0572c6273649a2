// The diagonal shift's device half where the build has no CUDA: never reached
// (no context is a device one); an error if it is.
#include "core/error.hpp"
#include "solver/operator/diagonal_shift.hpp"

namespace blockeigs::solver::cuda {

template <class T>
std::int64_t find_diagonal_positions(const spmm::Context&, const spmm::CsrView<T>&, std::int64_t*) {
  throw Error("find_diagonal_positions on the device: not compiled with CUDA");
}

template <class T>
void set_shifted_diagonal(const spmm::Context&, T*, const std::int64_t*, const T*, T, std::int64_t) {
  throw Error("set_shifted_diagonal on the device: not compiled with CUDA");
}

template std::int64_t find_diagonal_positions(const spmm::Context&, const spmm::CsrView<float>&, std::int64_t*);
template std::int64_t find_diagonal_positions(const spmm::Context&, const spmm::CsrView<double>&, std::int64_t*);
template void set_shifted_diagonal(const spmm::Context&, float*, const std::int64_t*, const float*, float,
                                   std::int64_t);
template void set_shifted_diagonal(const spmm::Context&, double*, const std::int64_t*, const double*, double,
                                   std::int64_t);

}  // namespace blockeigs::solver::cuda
