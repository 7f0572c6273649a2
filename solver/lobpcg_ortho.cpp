// LOBPCG's start block: the user's columns and random ones, orthonormalised
// (solver/orthonormalize.hpp), with dropped directions refilled at random.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "solver/lobpcg_detail.hpp"

namespace blockeigs::solver::lobpcg_detail {

template <class T>
void make_start_block(const spmm::Context& context, MPI_Comm comm, spmm::DenseView<T> X,
                      spmm::DenseView<T> scratch, const spmm::ConstDenseView<T>* user,
                      std::uint64_t seed, std::int64_t first_row, const Tolerances& tol) {
  const std::int64_t nb = X.cols;
  const std::int64_t given = user ? std::min(user->cols, nb) : 0;
  if (given > 0) copy_block(context, column_range(*user, 0, given), column_range(X, 0, given));
  if (given < nb) fill_random(context, column_range(X, given, nb - given), seed, first_row, given);
  const spmm::ConstDenseView<T> none(X.space, X.rows, 0, X.ld, X.data);
  std::int64_t kept = orthonormalize_against(context, comm, none, X, scratch, tol);
  // Rank deficient (duplicate, zero or nearly parallel columns): replace the
  // dropped directions by fresh random columns (hash columns refill * nb + j,
  // never used before) and orthonormalise them against the kept ones.
  for (int refill = 1; kept < nb; ++refill) {
    if (refill > max_refills)
      throw Error(detail::concat("LOBPCG: could not build ", nb, " independent start vectors (",
                                 kept, " after ", max_refills, " random refills)"));
    spmm::DenseView<T> rest = column_range(X, kept, nb - kept);
    fill_random(context, rest, seed, first_row, refill * nb + kept);
    kept += orthonormalize_against(context, comm,
                                   spmm::ConstDenseView<T>(column_range(X, 0, kept)), rest, scratch, tol);
  }
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                   \
  template void make_start_block(const spmm::Context&, MPI_Comm, spmm::DenseView<T>, spmm::DenseView<T>, \
                                 const spmm::ConstDenseView<T>*, std::uint64_t, std::int64_t,      \
                                 const Tolerances&);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::lobpcg_detail
