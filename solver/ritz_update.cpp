// LOBPCG's Ritz update with the next residuals (block_ops.hpp): one pass on
// the device where the fused kernel takes the shape, the separate operations
// otherwise.
#include <cmath>
#include <functional>
#include <memory>
#include <type_traits>

#include "core/error.hpp"
#include "solver/block_ops.hpp"
#include "solver/block_ops_cuda.hpp"

namespace blockeigs::solver {

template <class T>
ResidualNorms ritz_update(const spmm::Context& context, MPI_Comm comm, spmm::ConstDenseView<T> S,
                          spmm::ConstDenseView<T> AS, const HostMatrix& C, const std::vector<double>& lambda,
                          spmm::DenseView<T> Y, spmm::DenseView<T> AY, spmm::DenseView<T> R,
                          const std::vector<std::int64_t>& r_position, const std::function<void()>& meanwhile) {
  const std::int64_t nb = R.cols;
  BLOCKEIGS_ASSERT(S.cols == AS.cols && C.rows() == S.cols && C.cols() == Y.cols && Y.cols == AY.cols &&
                   std::int64_t(lambda.size()) == nb && nb <= Y.cols);
  const std::vector<std::int64_t> position = checked_positions(r_position, nb);
#ifdef BLOCKEIGS_HAVE_CUDA
  if constexpr (std::is_same_v<T, double>) {
    if (S.space == Space::device && S.rows == AS.rows && S.rows == Y.rows && S.rows == AY.rows &&
        S.rows == R.rows) {
      std::vector<double> sums(static_cast<std::size_t>(2 * nb));
      std::unique_ptr<device_ops::LocalGramTransfer> transfer;
      if (device_ops::ritz_update_local(context, S, AS, C.data(), lambda.data(), Y, AY, R, position.data(),
                                        transfer)) {
        if (meanwhile) meanwhile();
        if (transfer) transfer->wait(sums.data());
        allreduce_sum(comm, sums.data(), sums.size());
        ResidualNorms norms;
        for (std::int64_t j = 0; j < nb; ++j) {
          norms.residual.push_back(std::sqrt(sums[j]));
          norms.x.push_back(std::sqrt(sums[nb + j]));
        }
        return norms;
      }
    }
  }
#endif
  block_update(context, T(1), S, C, T(0), Y);
  block_update(context, T(1), AS, C, T(0), AY);
  if (meanwhile) meanwhile();
  return eigen_residuals(context, comm, column_range(spmm::ConstDenseView<T>(Y), 0, nb),
                         column_range(spmm::ConstDenseView<T>(AY), 0, nb), lambda, R, position);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                   \
  template ResidualNorms ritz_update(const spmm::Context&, MPI_Comm, spmm::ConstDenseView<T>,                      \
                                     spmm::ConstDenseView<T>, const HostMatrix&, const std::vector<double>&,       \
                                     spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>,            \
                                     const std::vector<std::int64_t>&, const std::function<void()>&);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
