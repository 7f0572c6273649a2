// LOBPCG's entry point and main loop (see lobpcg.hpp for the method and its
// choices). The state and the steps are LobpcgIteration's
// (lobpcg_iteration.hpp, which says where each step lives).
#include "solver/lobpcg/lobpcg.hpp"

#include <algorithm>
#include <optional>
#include <type_traits>

#include "solver/lobpcg/lobpcg_iteration.hpp"

namespace blockeigs::solver {
namespace lobpcg_detail {

template <class T, class Ts>
LobpcgResult<T> LobpcgIteration<T, Ts>::run(double t_begin) {
  t_begin_ = t_begin;
  start();                     // an orthonormal X, A X, and its own Rayleigh-Ritz
  while (!test_residuals()) {  // R = A X - X Lambda; the stopping test; best iterate, divergence, stagnation
    ++iteration_;
    std::optional<SearchStep> search = build_search_block(active_pairs());  // W from the active residuals
    if (!search) {
      // No search direction left outside span[X P]: stop with the pairs as they are.
      --iteration_;
      stop_.no_search_direction = true;
      continue;
    }
    const bool refresh = refresh_due();  // A X and A P from the operator after this step
    // On [X P W] (a restart drops P); [X P] <- S C with A X, A P and the residuals, or only [X P].
    rayleigh_ritz(search->w, search->active, refresh, search->s_t_az.rows() > 0 ? &search->s_t_az : nullptr);
    products_.fresh = false;
    if (refresh) refresh_products();
  }
  return finish(t_begin);
}

// Start: an orthonormal block, A X, and its own Rayleigh-Ritz.
template <class T, class Ts>
void LobpcgIteration<T, Ts>::start() {
  make_start_block(ctx_, comm_, column_range(S(cur_), 0, nb_), scratch_.view(), start_ ? &*start_ : nullptr,
                   options_.seed, A_.first_row(), tol_, constraints(), B_, column_range(BS(cur_), 0, nb_));
  clock_.to(time_.orthogonalization);
  apply_a(0, nb_);
  rayleigh_ritz(SearchBlock{}, {}, false);
}

// The wanted pairs of the last iterate, why the iteration stopped, the best
// iterate where it is better, and the tests each pair passes.
template <class T, class Ts>
LobpcgResult<T> LobpcgIteration<T, Ts>::finish(double t_begin) {
  result_.iterations = iteration_;
  result_.norm_estimate = norm_a_;
  take_wanted_pairs(ctx_, column_range(cS(cur_), 0, k_), lambda_, x_norm_, r_norm_, conv_, B_ != nullptr, result_);
  result_.stall = stop_.stall;
  result_.stop = std::all_of(conv_.begin(), conv_.begin() + k_, [](bool c) { return c; }) ? LobpcgStop::converged
                 : stop_.interrupted                                                      ? LobpcgStop::interrupted
                 : stop_.no_search_direction ? LobpcgStop::no_search_direction
                 : stop_.stall               ? (stop_.stall->diverged ? LobpcgStop::diverged : LobpcgStop::stagnated)
                                             : LobpcgStop::iteration_limit;
  const bool guarded = result_.stop == LobpcgStop::diverged || result_.stop == LobpcgStop::stagnated;
  if (guarded && options_.test == StoppingTest::relative) {
    // Every unconverged wanted pair asks for less than fp64 allows it: that, not the iteration, stopped the run.
    double floor = 0;
    std::vector<int> below =
        pairs_below_floor(options_.which, tol_.eps, norm_a_, options_.tolerance, lambda_, conv_, k_, floor);
    const auto unconverged = std::count(conv_.begin(), conv_.begin() + k_, false);
    if (!below.empty() && static_cast<std::ptrdiff_t>(below.size()) == unconverged) {
      result_.stop = LobpcgStop::below_floor;
      result_.below_floor = std::move(below);
      result_.floor = floor;
    }
  }
  // The other buffer's [X P | A X A P] (4 nb columns) is free now.
  best_.restore(A_, B_, comm_, options_, norm_a_, {space_, n_, ld_, ld_, blocks_.SAS[1 - cur_].data()}, result_);
  mark_tests(options_.tolerance, result_);
  clock_.to(time_.other);
  clock_.finish();
  time_.total = MPI_Wtime() - t_begin;
  return std::move(result_);
}

}  // namespace lobpcg_detail

template <class T>
LobpcgResult<T> lobpcg(LinearOperator<T>& A, const LobpcgOptions& options, Preconditioner<T>* preconditioner,
                       std::optional<dense::ConstDenseView<T>> start, LinearOperator<T>* B,
                       std::optional<dense::ConstDenseView<T>> constraints) {
  using lobpcg_detail::LobpcgIteration;
  const double t_begin = MPI_Wtime();
  const int nb = lobpcg_detail::validate_options(A, options, start, preconditioner != nullptr);
  lobpcg_detail::validate_pencil(A, B, constraints, nb, options.search_precision);
  // The residuals in fp32 only for the standard problem without constraints.
  if constexpr (std::is_same_v<T, double>)
    if (!B && !constraints && lobpcg_detail::search_in_fp32(A, options, preconditioner != nullptr, nb))
      return LobpcgIteration<T, float>(A, options, preconditioner, start, nb).run(t_begin);
  return LobpcgIteration<T, T>(A, options, preconditioner, start, nb, B, constraints).run(t_begin);
}

template LobpcgResult<float> lobpcg(LinearOperator<float>&, const LobpcgOptions&, Preconditioner<float>*,
                                    std::optional<dense::ConstDenseView<float>>, LinearOperator<float>*,
                                    std::optional<dense::ConstDenseView<float>>);
template LobpcgResult<double> lobpcg(LinearOperator<double>&, const LobpcgOptions&, Preconditioner<double>*,
                                     std::optional<dense::ConstDenseView<double>>, LinearOperator<double>*,
                                     std::optional<dense::ConstDenseView<double>>);
template LobpcgResult<std::complex<double>> lobpcg(LinearOperator<std::complex<double>>&, const LobpcgOptions&,
                                                   Preconditioner<std::complex<double>>*,
                                                   std::optional<dense::ConstDenseView<std::complex<double>>>,
                                                   LinearOperator<std::complex<double>>*,
                                                   std::optional<dense::ConstDenseView<std::complex<double>>>);
template LobpcgResult<std::complex<float>> lobpcg(LinearOperator<std::complex<float>>&, const LobpcgOptions&,
                                                  Preconditioner<std::complex<float>>*,
                                                  std::optional<dense::ConstDenseView<std::complex<float>>>,
                                                  LinearOperator<std::complex<float>>*,
                                                  std::optional<dense::ConstDenseView<std::complex<float>>>);

}  // namespace blockeigs::solver
