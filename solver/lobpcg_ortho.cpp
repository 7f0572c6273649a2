// LOBPCG's distributed orthonormalisation: W against an orthonormal Q and
// among itself by block Gram-Schmidt plus SVQB with column dropping (Duersch
// et al., "ortho_drop"), and the start block built on it.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "solver/lobpcg_detail.hpp"

namespace blockeigs::solver::lobpcg_detail {
namespace {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

double max_abs(const HostMatrix& M) {
  double m = 0;
  for (double v : M.values()) m = std::max(m, std::abs(v));
  return m;
}

double max_abs_minus_identity(const HostMatrix& M) {
  double m = 0;
  for (std::int64_t i = 0; i < M.rows(); ++i)
    for (std::int64_t j = 0; j < M.cols(); ++j) m = std::max(m, std::abs(M(i, j) - (i == j ? 1.0 : 0.0)));
  return m;
}

}  // namespace

template <class T>
std::int64_t orthonormalize_against(const spmm::Context& context, MPI_Comm comm,
                                    spmm::ConstDenseView<T> Q, spmm::DenseView<T> W,
                                    spmm::DenseView<T> scratch, const Tolerances& tol) {
  const bool root = rank_of(comm) == 0;
  std::int64_t nw = W.cols;
  for (int pass = 0; pass < max_ortho_passes && nw > 0; ++pass) {
    spmm::DenseView<T> Wv = column_range(W, 0, nw);
    HostMatrix C(Q.cols, nw);
    if (Q.cols > 0) {
      C = gram(context, comm, Q, spmm::ConstDenseView<T>(Wv));
      block_update(context, T(-1), Q, C, T(1), Wv);
    }
    const HostMatrix G = gram(context, comm, spmm::ConstDenseView<T>(Wv));
    // Done when the last pass changed nothing that matters: W was already
    // orthogonal to Q and orthonormal.
    if (pass > 0 && max_abs(C) <= tol.orthogonality && max_abs_minus_identity(G) <= tol.orthogonality)
      return nw;
    // ||w_j||^2 before the projection, by Pythagoras (Q is orthonormal).
    std::vector<double> before(static_cast<std::size_t>(nw));
    for (std::int64_t j = 0; j < nw; ++j) {
      before[j] = G(j, j);
      for (std::int64_t i = 0; i < Q.cols; ++i) before[j] += C(i, j) * C(i, j);
    }
    HostMatrix transform;
    collectively(comm, [&] {
      if (root) transform = svqb_transform(G, tol, Q.cols > 0 ? &before : nullptr);
    });
    broadcast(comm, transform);
    const std::int64_t kept = transform.cols();
    if (kept == 0) return 0;
    spmm::DenseView<T> out = column_range(scratch, 0, kept);
    block_update(context, T(1), spmm::ConstDenseView<T>(Wv), transform, T(0), out);
    copy_block(context, spmm::ConstDenseView<T>(out), column_range(W, 0, kept));
    nw = kept;
  }
  return nw;
}

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
  template std::int64_t orthonormalize_against(const spmm::Context&, MPI_Comm, spmm::ConstDenseView<T>, \
                                               spmm::DenseView<T>, spmm::DenseView<T>, const Tolerances&); \
  template void make_start_block(const spmm::Context&, MPI_Comm, spmm::DenseView<T>, spmm::DenseView<T>, \
                                 const spmm::ConstDenseView<T>*, std::uint64_t, std::int64_t,      \
                                 const Tolerances&);

BLOCKEIGS_INSTANTIATE(float)
BLOCKEIGS_INSTANTIATE(double)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver::lobpcg_detail
