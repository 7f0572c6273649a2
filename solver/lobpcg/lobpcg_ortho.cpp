// LOBPCG's start block (the user's columns and random ones, orthonormalised,
// with dropped directions refilled at random) and its search block W
// conditioned against [X P] in the residuals' precision (solver/blocks/orthonormalize.hpp).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/error.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::solver::lobpcg_detail {

template <class T>
void make_start_block(const dense::Context& context, MPI_Comm comm, dense::DenseView<T> X, dense::DenseView<T> scratch,
                      const dense::ConstDenseView<T>* user, std::uint64_t seed, std::int64_t first_row,
                      const Tolerances& tol, const BBasis<T>& Y, LinearOperator<T>* B, dense::DenseView<T> BX) {
  const std::int64_t nb = X.cols;
  const std::int64_t given = user ? std::min(user->cols, nb) : 0;
  if (given > 0) copy_block(context, column_range(*user, 0, given), column_range(X, 0, given));
  if (given < nb) fill_random(context, column_range(X, given, nb - given), seed, first_row, given);
  // The columns [kept, nb) made (B-)orthonormal against Y and X's first `kept`.
  auto condition = [&](std::int64_t kept) {
    dense::DenseView<T> rest = column_range(X, kept, nb - kept);
    if (B) {
      const BBasis<T> Q{column_range(dense::ConstDenseView<T>(X), 0, kept),
                        column_range(dense::ConstDenseView<T>(BX), 0, kept)};
      return b_orthonormalize_against(context, comm, *B, Y, Q, rest, column_range(BX, kept, nb - kept), scratch, tol,
                                      true);
    }
    project_out(context, comm, Y, rest);
    return orthonormalize_against(context, comm, column_range(dense::ConstDenseView<T>(X), 0, kept), rest, scratch,
                                  tol);
  };
  std::int64_t kept = condition(0);
  // Rank deficient (duplicate, zero or nearly parallel columns): replace the
  // dropped directions by fresh random columns (hash columns refill * nb + j,
  // never used before) and orthonormalise them against the kept ones.
  for (int refill = 1; kept < nb; ++refill) {
    if (refill > max_refills)
      throw Error(detail::concat("LOBPCG: could not build ", nb, " independent start vectors (", kept, " after ",
                                 max_refills, " random refills)"));
    fill_random(context, column_range(X, kept, nb - kept), seed, first_row, refill * nb + kept);
    kept += condition(kept);
  }
}

template <class T, class Ts>
ConditionedSearch condition_search_block(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> XP,
                                         dense::DenseView<Ts> W, dense::DenseView<T> Wt, dense::DenseView<T> scratch,
                                         const Tolerances& tol, BasisOptionsOf<small_t<T>>& options, std::uint64_t seed,
                                         std::int64_t first_row, std::int64_t refill_column, const BBasis<T>& Y) {
  constexpr bool single = !std::is_same_v<T, Ts>;
  // W in T: itself, or (single) formed in Wt and rounded back.
  auto condition_in_t = [&](dense::DenseView<T> V) {
    const std::int64_t kept = condition_against(context, comm, XP, V, scratch, tol, &options);
    if constexpr (single) {
      convert_block(context, dense::ConstDenseView<T>(column_range(V, 0, kept)), column_range(W, 0, kept));
      options.w_gram = HostMatrixFor<T>();
    }
    return kept;
  };
  ConditionedSearch out;
  if constexpr (single) {
    // The coefficient form reads nothing of W (Wt is not filled yet).
    options.implicit_only = true;
    out.kept = condition_against(context, comm, XP, Wt, scratch, tol, &options);
    options.implicit_only = false;
    if (out.kept < 0) {
      convert_block(context, dense::ConstDenseView<Ts>(W), Wt);
      out.kept = condition_in_t(Wt);
    }
  } else {
    out.kept = condition_in_t(W);
  }
  options.measured_gram = nullptr;
  if (out.kept > 0) return out;
  // Every residual direction already lies in span[X P] to working precision
  // (stagnation at the rounding floor): explore at random.
  dense::DenseView<T> V;
  if constexpr (single)
    V = Wt;
  else
    V = W;
  fill_random(context, V, seed, first_row, refill_column);
  project_out(context, comm, Y, V);  // the random directions too stay in Y's complement
  out.kept = condition_in_t(V);
  out.refilled = true;
  return out;
}

#define BLOCKEIGS_CONDITION_SEARCH(T, Ts)                                                                           \
  template ConditionedSearch condition_search_block(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>,      \
                                                    dense::DenseView<Ts>, dense::DenseView<T>, dense::DenseView<T>, \
                                                    const Tolerances&, BasisOptionsOf<small_t<T>>&, std::uint64_t,  \
                                                    std::int64_t, std::int64_t, const BBasis<T>&);
BLOCKEIGS_LOBPCG_TYPES(BLOCKEIGS_CONDITION_SEARCH)
#undef BLOCKEIGS_CONDITION_SEARCH

#define BLOCKEIGS_INSTANTIATE(T)                                                                                  \
  template void make_start_block(const dense::Context&, MPI_Comm, dense::DenseView<T>, dense::DenseView<T>,       \
                                 const dense::ConstDenseView<T>*, std::uint64_t, std::int64_t, const Tolerances&, \
                                 const BBasis<T>&, LinearOperator<T>*, dense::DenseView<T>);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
BLOCKEIGS_INSTANTIATE(std::complex<float>)
BLOCKEIGS_INSTANTIATE(std::complex<double>)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::lobpcg_detail
