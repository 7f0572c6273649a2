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

namespace {

// AY = AS C with AS's first k columns in residual form (ResidualForm): the
// rest of AS times C's rows below k, plus X (Lambda C's first k rows), plus
// R times those rows placed at R's positions. Three updates; the fused pass
// forms A X's fragments instead.
template <class T>
void update_from_residual_form(const spmm::Context& context, spmm::ConstDenseView<T> S,
                               spmm::ConstDenseView<T> AS, const HostMatrix& C, const ResidualForm<T>& ax_from,
                               const std::vector<std::int64_t>& in_position, spmm::DenseView<T> AY) {
  const std::int64_t k = static_cast<std::int64_t>(ax_from.lambda.size()), ns = S.cols, m = C.cols();
  HostMatrix lambda_c(k, m), placed_c(k, m);
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t c = 0; c < m; ++c) {
      lambda_c(j, c) = ax_from.lambda[j] * C(j, c);
      placed_c(in_position[j], c) = C(j, c);
    }
  T beta = T(0);
  if (ns > k) {
    block_update(context, T(1), column_range(AS, k, ns - k), C.block(k, ns - k, 0, m), T(0), AY);
    beta = T(1);
  }
  block_update(context, T(1), column_range(S, 0, k), lambda_c, beta, AY);
  block_update(context, T(1), column_range(ax_from.R, 0, k), placed_c, T(1), AY);
}

}  // namespace

template <class T>
ResidualNorms ritz_update(const spmm::Context& context, MPI_Comm comm, spmm::ConstDenseView<T> S,
                          spmm::ConstDenseView<T> AS, const HostMatrix& C, const std::vector<double>& lambda,
                          spmm::DenseView<T> Y, spmm::DenseView<T> AY, spmm::DenseView<T> R,
                          const std::vector<std::int64_t>& r_position, const std::function<void()>& meanwhile,
                          const ResidualForm<T>* ax_from, bool store_ax) {
  const std::int64_t nb = R.cols;
  BLOCKEIGS_ASSERT(S.cols == AS.cols && C.rows() == S.cols && C.cols() == Y.cols && Y.cols == AY.cols &&
                   std::int64_t(lambda.size()) == nb && nb <= Y.cols);
  const std::vector<std::int64_t> position = checked_positions(r_position, nb);
  const std::int64_t k_in = ax_from ? static_cast<std::int64_t>(ax_from->lambda.size()) : 0;
  std::vector<std::int64_t> in_position;
  if (ax_from) {
    BLOCKEIGS_ASSERT(k_in <= S.cols && ax_from->R.rows == S.rows && ax_from->R.cols >= k_in &&
                     ax_from->R.space == S.space);
    in_position = checked_positions(ax_from->position, k_in);
  }
#ifdef BLOCKEIGS_HAVE_CUDA
  if constexpr (std::is_same_v<T, double>) {
    if (S.space == Space::device && S.rows == AS.rows && S.rows == Y.rows && S.rows == AY.rows &&
        S.rows == R.rows) {
      std::vector<double> sums(static_cast<std::size_t>(2 * nb));
      std::unique_ptr<device_ops::LocalGramTransfer> transfer;
      if (device_ops::ritz_update_local(context, S, AS, C.data(), lambda.data(), Y, AY, R, position.data(),
                                        transfer, ax_from ? &ax_from->R : nullptr, k_in,
                                        ax_from ? ax_from->lambda.data() : nullptr, in_position.data(), store_ax)) {
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
  if (ax_from) {
    update_from_residual_form(context, S, AS, C, *ax_from, in_position, AY);
  } else {
    block_update(context, T(1), AS, C, T(0), AY);
  }
  if (meanwhile) meanwhile();
  return eigen_residuals(context, comm, column_range(spmm::ConstDenseView<T>(Y), 0, nb),
                         column_range(spmm::ConstDenseView<T>(AY), 0, nb), lambda, R, position);
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                   \
  template ResidualNorms ritz_update(const spmm::Context&, MPI_Comm, spmm::ConstDenseView<T>,                      \
                                     spmm::ConstDenseView<T>, const HostMatrix&, const std::vector<double>&,       \
                                     spmm::DenseView<T>, spmm::DenseView<T>, spmm::DenseView<T>,            \
                                     const std::vector<std::int64_t>&, const std::function<void()>&,           \
                                     const ResidualForm<T>*, bool);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
