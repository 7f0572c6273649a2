// LOBPCG's Ritz update with the next residuals (block_ops.hpp): one pass on
// the device where the fused kernel takes the shape, the separate operations
// otherwise.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/lobpcg/ritz_update.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "dense/dense.hpp"

namespace blockeigs::solver {
namespace {

// C over S's columns: zero rows past C's (A X implied: S reaches the
// residuals past the basis).
template <class S>
HostMatrixOf<S> over_columns(const HostMatrixOf<S>& C, std::int64_t s_cols) {
  HostMatrixOf<S> out(s_cols, C.cols());
  for (std::int64_t i = 0; i < C.rows(); ++i)
    for (std::int64_t j = 0; j < C.cols(); ++j) out(i, j) = C(i, j);
  return out;
}

// The separate products' coefficients for A Y with A X implied (ImpliedAX):
// A Y = S D + AS(:, nb:) E, where D carries A X = X Theta + R Pi from C's X
// rows and E is C's rows after X. (The device kernel forms A X's rows where
// it stages them instead.)
template <class S>
struct ImpliedCoefficients {
  HostMatrixOf<S> d, e;
};

template <class S>
ImpliedCoefficients<S> implied_coefficients(const HostMatrixOf<S>& C, std::int64_t s_cols, std::int64_t nb,
                                            const ImpliedAX& ax) {
  const std::int64_t ns = C.rows(), m = C.cols();
  ImpliedCoefficients<S> out{HostMatrixOf<S>(s_cols, m), HostMatrixOf<S>(ns - nb, m)};
  for (std::int64_t x = 0; x < nb; ++x) {
    const std::int64_t r = ax.first + ax.position[x];
    for (std::int64_t j = 0; j < m; ++j) {
      out.d(x, j) += ax.theta[x] * C(x, j);
      out.d(r, j) += C(x, j);
    }
  }
  for (std::int64_t i = nb; i < ns; ++i)
    for (std::int64_t j = 0; j < m; ++j) out.e(i - nb, j) = C(i, j);
  return out;
}

// What both precisions' updates check and derive from their arguments: R's
// placement, C over S's columns and the residuals' columns in S (A X
// implied).
template <class Small>
struct UpdateSetup {
  std::vector<std::int64_t> position;
  HostMatrixOf<Small> C_over_s;
  std::vector<std::int64_t> implied_column;
};

template <class S_, class AS_, class Small>
UpdateSetup<Small> setup_update(const S_& S, const AS_& AS, const HostMatrixOf<Small>& C,
                                const std::vector<double>& lambda, std::int64_t y_cols, std::int64_t ay_cols,
                                std::int64_t nb, const std::vector<std::int64_t>& r_position,
                                const ImpliedAX* implied_ax) {
  [[maybe_unused]] const std::int64_t ns = AS.cols(), s_cols = S.cols();
  BLOCKEIGS_ASSERT(C.rows() == ns && C.cols() == y_cols && y_cols == ay_cols && std::int64_t(lambda.size()) == nb &&
                   nb <= y_cols && nb <= ns && AS.tail.rows == AS.head.rows && S.tail.rows == S.head.rows);
  BLOCKEIGS_ASSERT(implied_ax ? s_cols >= ns : s_cols == ns);
  UpdateSetup<Small> out;
  out.position = checked_positions(r_position, nb);
  if (implied_ax) {
    BLOCKEIGS_ASSERT(std::int64_t(implied_ax->theta.size()) == nb && implied_ax->first >= nb);
    const std::vector<std::int64_t> from = checked_positions(implied_ax->position, nb);
    for (std::int64_t j = 0; j < nb; ++j) BLOCKEIGS_ASSERT(implied_ax->first + from[j] < s_cols);
    out.C_over_s = over_columns(C, s_cols);
    for (std::int64_t j = 0; j < nb; ++j) out.implied_column.push_back(implied_ax->first + implied_ax->position[j]);
  }
  return out;
}

// The one-pass device update (ritz_update_local, with S's tail and R in Ts)
// and its norms over the ranks; nothing where the blocks are
// not on the device or the kernel does not take the shape.
template <class Ts>
std::optional<ResidualNorms> device_update(const dense::Context& context, MPI_Comm comm,
                                           const SplitColumns<double, Ts>& S, const SplitColumns<double>& AS,
                                           const UpdateSetup<double>& setup, const HostMatrix& C,
                                           const std::vector<double>& lambda, dense::DenseView<double> Y,
                                           dense::DenseView<double> AY, dense::DenseView<Ts> R,
                                           const std::function<void()>& meanwhile, const ImpliedAX* implied_ax,
                                           bool store_ax) {
  const std::int64_t nb = R.cols;
  if (S.head.space != Space::device || S.rows() != AS.rows() || S.rows() != Y.rows || S.rows() != AY.rows ||
      S.rows() != R.rows)
    return std::nullopt;
  const double* const c = implied_ax ? setup.C_over_s.data() : C.data();
  const double* const theta = implied_ax ? implied_ax->theta.data() : nullptr;
  const std::int64_t* const column = implied_ax ? setup.implied_column.data() : nullptr;
  std::unique_ptr<device_ops::LocalGramTransfer> transfer;
  if (!device_ops::ritz_update_local(context, S.head, S.tail, AS.head, AS.tail, c, lambda.data(), Y, AY, R,
                                     setup.position.data(), store_ax ? 0 : nb, theta, column, transfer))
    return std::nullopt;
  if (meanwhile) meanwhile();
  std::vector<double> sums(static_cast<std::size_t>(2 * nb));
  if (transfer) transfer->wait(sums.data());
  return residual_norms_from_sums(comm, std::move(sums), nb);
}

}  // namespace

template <class T>
ResidualNorms ritz_update(const dense::Context& context, MPI_Comm comm, const std::type_identity_t<SplitColumns<T>>& S,
                          const std::type_identity_t<SplitColumns<T>>& AS, const HostMatrixFor<T>& C,
                          const std::vector<double>& lambda, dense::DenseView<T> Y, dense::DenseView<T> AY,
                          dense::DenseView<T> R, const std::vector<std::int64_t>& r_position,
                          const std::function<void()>& meanwhile, const ImpliedAX* implied_ax, bool store_ax) {
  const std::int64_t nb = R.cols, ns = AS.cols(), s_cols = S.cols();
  const UpdateSetup<small_t<T>> setup = setup_update(S, AS, C, lambda, Y.cols, AY.cols, nb, r_position, implied_ax);
  const std::vector<std::int64_t>& position = setup.position;
  const HostMatrixFor<T>& C_over_s = setup.C_over_s;
  if constexpr (std::is_same_v<T, double>) {
    std::optional<ResidualNorms> norms =
        device_update<double>(context, comm, S, AS, setup, C, lambda, Y, AY, R, meanwhile, implied_ax, store_ax);
    if (norms) return std::move(*norms);
  }
  if (implied_ax) {
    const ImpliedCoefficients<small_t<T>> implied = implied_coefficients(C, s_cols, nb, *implied_ax);
    split_update<T>(context, S, 0, C_over_s, T(0), Y);
    split_update<T>(context, S, 0, implied.d, T(0), AY);
    // A S after X, the only part read when A X is implied.
    if (ns > nb) split_update<T>(context, AS, nb, implied.e, T(1), AY);
  } else {
    split_update<T>(context, S, 0, C, T(0), Y);
    split_update<T>(context, AS, 0, C, T(0), AY);
  }
  ResidualNorms norms = eigen_residuals(context, comm, column_range(dense::ConstDenseView<T>(Y), 0, nb),
                                        column_range(dense::ConstDenseView<T>(AY), 0, nb), lambda, R, position);
  if (meanwhile) meanwhile();  // after R, which it may read
  return norms;
}

ResidualNorms ritz_update(const dense::Context& context, MPI_Comm comm, const SplitColumns<double, float>& S,
                          const SplitColumns<double>& AS, const HostMatrix& C, const std::vector<double>& lambda,
                          dense::DenseView<double> Y, dense::DenseView<double> AY, dense::DenseView<float> R,
                          const std::vector<std::int64_t>& r_position, const std::function<void()>& meanwhile,
                          const ImpliedAX* implied_ax, bool store_ax) {
  const std::int64_t nb = R.cols;
  const UpdateSetup<double> setup = setup_update(S, AS, C, lambda, Y.cols, AY.cols, nb, r_position, implied_ax);
  std::optional<ResidualNorms> device_norms =
      device_update<float>(context, comm, S, AS, setup, C, lambda, Y, AY, R, meanwhile, implied_ax, store_ax);
  if (device_norms) return std::move(*device_norms);
  // Otherwise the fp64 update from a widened copy of S's tail, its residuals
  // rounded into R.
  dense::DenseBlock<double> tail(S.tail.space, S.tail.rows, S.tail.cols), residuals(R.space, R.rows, nb);
  convert_block(context, S.tail, tail.view());
  ResidualNorms norms =
      ritz_update<double>(context, comm, SplitColumns<double>(S.head, dense::ConstDenseView<double>(tail.view())), AS,
                          C, lambda, Y, AY, residuals.view(), r_position, {}, implied_ax, store_ax);
  convert_block(context, dense::ConstDenseView<double>(residuals.view()), R);
  if (meanwhile) meanwhile();  // after R, which it may read
  return norms;
}

template <class T>
bool ritz_update_prefers_implied_ax(const dense::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                                    std::int64_t nb) {
  if (context.space() == Space::host) return false;  // three products there against two
  if constexpr (std::is_same_v<T, double>) return device_ops::ritz_update_implied_fits(ns, nv, m, nb);
  (void)ns, (void)nv, (void)m, (void)nb;
  return false;
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                    \
  template ResidualNorms ritz_update(const dense::Context&, MPI_Comm, const std::type_identity_t<SplitColumns<T>>&, \
                                     const std::type_identity_t<SplitColumns<T>>&, const HostMatrixFor<T>&,         \
                                     const std::vector<double>&, dense::DenseView<T>, dense::DenseView<T>,          \
                                     dense::DenseView<T>, const std::vector<std::int64_t>&,                         \
                                     const std::function<void()>&, const ImpliedAX*, bool);                         \
  template bool ritz_update_prefers_implied_ax<T>(const dense::Context&, std::int64_t, std::int64_t, std::int64_t,  \
                                                  std::int64_t);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
BLOCKEIGS_INSTANTIATE(std::complex<float>)
BLOCKEIGS_INSTANTIATE(std::complex<double>)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
