#include "solver/cg/block_cg.hpp"

#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/operator/collective.hpp"

namespace blockeigs::solver {

bool BlockCgResult::all_converged() const {
  return std::all_of(converged.begin(), converged.end(), [](bool c) { return c; });
}

namespace {

// The small solves, done on rank 0 and broadcast so every rank takes the
// same branch: Delta = P^T A P is Cholesky-factored (its failure means A is
// not positive definite on span P) and applied to the right-hand sides.
struct SmallSolve {
  HostMatrix factor;  // Cholesky factor of Delta (lower), r x r
  bool positive_definite = true;
  double smallest_diagonal = 0;
};

SmallSolve factor_delta(MPI_Comm comm, const HostMatrix& delta) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SmallSolve out;
  out.factor = delta;
  double status[2] = {1, 0};
  if (rank == 0) {
    const std::int64_t r = delta.rows();
    double smallest = INFINITY;
    for (std::int64_t i = 0; i < r; ++i) smallest = std::min(smallest, delta(i, i));
    int info = smallest > 0 ? LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', static_cast<int>(r), out.factor.data(),
                                             static_cast<int>(r))
                            : 1;
    status[0] = info == 0 ? 1 : 0;
    status[1] = smallest;
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(status, 2, MPI_DOUBLE, 0, comm));
  out.positive_definite = status[0] == 1;
  out.smallest_diagonal = status[1];
  if (out.positive_definite) BLOCKEIGS_MPI_CHECK(MPI_Bcast(out.factor.data(), static_cast<int>(out.factor.values().size()), MPI_DOUBLE, 0, comm));
  return out;
}

// Delta^{-1} rhs (r x a), computed on rank 0 and broadcast.
HostMatrix solve_delta(MPI_Comm comm, const SmallSolve& delta, HostMatrix rhs, double sign) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const auto r = static_cast<int>(rhs.rows()), a = static_cast<int>(rhs.cols());
  if (rank == 0 && r > 0 && a > 0) {
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', r, a, delta.factor.data(), r, rhs.data(), a);
    if (sign != 1)
      for (double& v : rhs.values()) v *= sign;
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(rhs.data(), static_cast<int>(rhs.values().size()), MPI_DOUBLE, 0, comm));
  return rhs;
}

HostMatrix columns_of(const HostMatrix& M, std::int64_t first, std::int64_t count) {
  return M.block(0, M.rows(), first, count);
}

}  // namespace

template <class T>
BlockCgResult block_cg(LinearOperator<T>& A, spmm::ConstDenseView<T> B, spmm::DenseView<T> X,
                       const BlockCgOptions& options, Preconditioner<T>* preconditioner) {
  const spmm::Context& context = A.context();
  const MPI_Comm comm = A.comm();
  const Space space = context.space();
  const std::int64_t m = A.local_rows(), s = B.cols;
  if (B.rows != m || X.rows != m || X.cols != s)
    fail_input("block CG: B is ", B.rows, " x ", B.cols, " and X is ", X.rows, " x ", X.cols,
               " on this rank, but the matrix gives this rank ", m, " rows: B and X must have the matrix's rows");
  if (B.space != space || X.space != space)
    fail_input("block CG: B and X must be in the operator's memory (", to_string(space), ")");
  if (s < 1) fail_input("block CG: B has no columns");
  if (!(options.rtol > 0) || !(options.atol >= 0) || options.max_iterations < 1)
    fail_input("block CG: rtol must be positive, atol non-negative and max_iterations at least 1");

  BlockCgResult result;
  BlockCgTimings& time = result.timings;
  const double start = MPI_Wtime();
  PhaseTimer clock(context);
  const auto tol = OrthonormalizeTolerances::for_type<T>();

  // Buffers. PQR holds [P | Q | R] side by side (ld 3s): R from column 2s on,
  // Q = A P just before it and P before that, so that P^T [Q R] and
  // [P Q R]^T R are single reductions, and the new P can be written over the
  // old one (block_combine_pair reads a row before writing it).
  const std::int64_t ld = 3 * s;
  spmm::DenseBlock<T> PQR(space, m, ld), Xa(space, m, s), scratch(space, m, s);
  spmm::DenseBlock<T> Zbuf(space, preconditioner ? m : 0, preconditioner ? s : 0);
  auto at = [&](std::int64_t column, std::int64_t cols) {
    return spmm::DenseView<T>{space, m, cols, ld, PQR.data() + column};
  };
  auto R_view = [&](std::int64_t a) { return at(2 * s, a); };
  auto Q_view = [&](std::int64_t r) { return at(2 * s - r, r); };
  auto P_view = [&](std::int64_t r) { return at(2 * s - 2 * r, r); };
  auto narrow = [&](spmm::DenseBlock<T>& block, std::int64_t cols) {
    return spmm::DenseView<T>{space, m, cols, block.ld(), block.data()};
  };
  auto cview = [](spmm::DenseView<T> v) { return spmm::ConstDenseView<T>(v); };

  result.rhs_norms = column_norms(context, comm, B);
  result.iterations.assign(s, 0);
  result.converged.assign(s, false);
  result.residual_norms.assign(s, 0.0);

  // R = B - A X; the active set starts with every column.
  A.apply(T(-1), spmm::ConstDenseView<T>(X), T(0), R_view(s));
  axpby(context, T(1), B, T(1), R_view(s));
  copy_block(context, spmm::ConstDenseView<T>(X), narrow(Xa, s));
  std::vector<std::int64_t> active(s);
  for (std::int64_t j = 0; j < s; ++j) active[j] = j;
  clock.to(time.spmm);

  auto threshold = [&](std::int64_t column) {
    return std::max(options.rtol * result.rhs_norms[column], options.atol);
  };
  // Marks converged columns, writes them to X and squeezes them out of Xa and
  // R; returns the positions (in the previous active set) of those kept.
  auto retire_converged = [&](const std::vector<double>& norms, int iteration) {
    std::vector<std::int64_t> keep;
    for (std::size_t c = 0; c < active.size(); ++c) {
      const std::int64_t j = active[c];
      result.residual_norms[j] = norms[c];
      result.iterations[j] = iteration;
      if (norms[c] <= threshold(j)) {
        result.converged[j] = true;
        copy_block(context, spmm::ConstDenseView<T>(column_range(narrow(Xa, s), std::int64_t(c), 1)),
                   column_range(X, j, 1));
      } else {
        keep.push_back(static_cast<std::int64_t>(c));
      }
    }
    if (keep.size() == active.size()) return keep;
    const auto a = static_cast<std::int64_t>(active.size()), kept = static_cast<std::int64_t>(keep.size());
    select_columns(context, cview(narrow(Xa, a)), keep, narrow(scratch, kept));
    copy_block(context, cview(narrow(scratch, kept)), narrow(Xa, kept));
    select_columns(context, cview(R_view(a)), keep, narrow(scratch, kept));
    copy_block(context, cview(narrow(scratch, kept)), R_view(kept));
    std::vector<std::int64_t> still;
    for (std::int64_t c : keep) still.push_back(active[c]);
    active = std::move(still);
    return keep;
  };
  // History row (before retiring, while `active` still maps norms to columns);
  // returns the worst relative residual for the monitor.
  auto record = [&](const std::vector<double>& norms) {
    double worst = 0;
    std::vector<double> row(s, 0.0);
    for (std::size_t c = 0; c < active.size(); ++c) {
      const double b = result.rhs_norms[active[c]];
      const double rel = b > 0 ? norms[c] / b : norms[c];
      row[active[c]] = rel;
      worst = std::max(worst, rel);
    }
    if (options.keep_history) result.history.push_back(std::move(row));
    return worst;
  };
  auto monitor = [&](int iteration, std::int64_t width, double worst) {
    if (!options.monitor) return;
    BlockCgProgress progress;
    progress.iteration = iteration;
    progress.search_width = static_cast<int>(width);
    progress.worst_relative = worst;
    progress.converged = static_cast<int>(std::count(result.converged.begin(), result.converged.end(), true));
    options.monitor(progress);
  };
  // Z = M^{-1} R for the active columns (preconditioned runs only).
  auto preconditioned_residual = [&](std::int64_t a) {
    preconditioner->apply(cview(R_view(a)), narrow(Zbuf, a));
    clock.to(time.preconditioner);
    return narrow(Zbuf, a);
  };
  // The search block's columns sit where P_view(r) expects them: a block made
  // elsewhere (or conditioned into fewer columns at the wrong offset) is moved
  // there through scratch.
  auto place_search_block = [&](spmm::DenseView<T> from, std::int64_t r) {
    if (from.data == P_view(r).data) return;
    copy_block(context, cview(column_range(from, 0, r)), narrow(scratch, r));
    copy_block(context, cview(narrow(scratch, r)), P_view(r));
  };

  std::vector<double> norms = column_norms(context, comm, cview(R_view(s)));
  (void)retire_converged(norms, 0);
  clock.to(time.other);

  std::int64_t r = 0;
  if (!active.empty()) {
    // P = a well-conditioned basis of Z (or R), built in the columns before
    // R's (free now) and then moved to its place.
    const auto a = static_cast<std::int64_t>(active.size());
    const spmm::DenseView<T> W = at(0, a);
    copy_block(context, preconditioner ? cview(preconditioned_residual(a)) : cview(R_view(a)), W);
    r = condition_basis(context, comm, W, narrow(scratch, a), tol);
    place_search_block(W, r);
    clock.to(time.orthogonalization);
  }

  // P^T P and P^T R for the current P and R, when the last step derived them
  // from small matrices (the unpreconditioned path); otherwise empty, and
  // they are read off the blocks.
  HostMatrix known_PtP, known_PtR;
  int iteration = 0;
  while (!active.empty() && r > 0 && iteration < options.max_iterations) {
    ++iteration;
    const auto a = static_cast<std::int64_t>(active.size());
    const spmm::ConstDenseView<T> Pr = cview(P_view(r));
    A.apply(T(1), Pr, T(0), Q_view(r));
    clock.to(time.spmm);

    // Delta = P^T Q, C = P^T R (one reduction over [Q R] unless C is known);
    // alpha = Delta^{-1} C.
    HostMatrix Delta, C;
    if (known_PtR.rows() == r && known_PtR.cols() == a) {
      Delta = gram(context, comm, Pr, cview(Q_view(r)));
      C = known_PtR;
    } else {
      const HostMatrix G = gram(context, comm, Pr, cview(at(2 * s - r, r + a)));
      Delta = columns_of(G, 0, r);
      C = columns_of(G, r, a);
    }
    const SmallSolve delta = factor_delta(comm, Delta);
    if (!delta.positive_definite)
      fail_input_everywhere("block CG: the matrix is not positive definite (negative curvature at iteration ", iteration,
                 ": smallest p^T A p over the search block is ", delta.smallest_diagonal,
                 ", or P^T A P has no Cholesky factor)");
    const HostMatrix alpha = solve_delta(comm, delta, C, 1.0);
    block_update(context, T(-1), cview(Q_view(r)), alpha, T(1), R_view(a));
    clock.to(time.update);

    // [Q R]^T R in one pass: the residual norms are the square roots of its
    // R^T R diagonal, Q^T R is what beta needs, and with P^T P and
    // P^T R = C - Delta alpha (zero but for rounding: alpha made R orthogonal
    // to P) it gives the Gram matrix of the new search block without reading
    // that block. X += P alpha is queued behind it and runs while the host
    // works on the small matrices.
    GramInFlight QR_R_in_flight = start_gram(context, comm, cview(at(2 * s - r, r + a)), cview(R_view(a)));
    block_update(context, T(1), Pr, alpha, T(1), narrow(Xa, a));
    const HostMatrix QR_R = QR_R_in_flight.finish();
    clock.to(time.update);
    const std::int64_t r0 = r;  // first row of R^T R in QR_R
    norms.resize(static_cast<std::size_t>(a));
    for (std::int64_t c = 0; c < a; ++c) norms[c] = std::sqrt(std::max(0.0, QR_R(r0 + c, c)));
    const double worst = record(norms);
    const std::vector<std::int64_t> kept = retire_converged(norms, iteration);
    monitor(iteration, r, worst);
    clock.to(time.other);
    if (active.empty()) break;

    // P <- a well-conditioned basis of Z + P beta, beta = -Delta^{-1} Q^T Z.
    const auto a2 = static_cast<std::int64_t>(active.size());
    std::int64_t r_next = 0;
    if (preconditioner) {
      const spmm::DenseView<T> Z = preconditioned_residual(a2);
      const HostMatrix beta = solve_delta(comm, delta, gram(context, comm, cview(Q_view(r)), cview(Z)), -1.0);
      block_combine(context, T(1), Pr, beta, T(1), cview(Z), Z);  // W = Z + P beta, in Z's buffer
      clock.to(time.update);
      r_next = condition_basis(context, comm, Z, narrow(scratch, a2), tol);
      place_search_block(Z, r_next);
      clock.to(time.orthogonalization);
    } else {
      // Z = R. With M = [P R]^T [P R] (R's kept columns), W = [P R] [beta; I]
      // has W^T W = [beta; I]^T M [beta; I]. No cancellation spoils it: R is
      // orthogonal to P (alpha made it so), so ||W||^2 = ||R||^2 + ||P beta||^2
      // up to rounding.
      const HostMatrix PtP = known_PtP.rows() == r ? known_PtP : gram(context, comm, Pr);
      const HostMatrix Delta_alpha = multiply(Delta, alpha);  // P^T R = C - Delta alpha
      HostMatrix QtR(r, a2), PtR(r, a2), RtR(a2, a2);
      for (std::int64_t c = 0; c < a2; ++c) {
        for (std::int64_t i = 0; i < r; ++i) {
          QtR(i, c) = QR_R(i, kept[c]);
          PtR(i, c) = C(i, kept[c]) - Delta_alpha(i, kept[c]);
        }
        for (std::int64_t i = 0; i < a2; ++i) RtR(i, c) = QR_R(r0 + kept[i], kept[c]);
      }
      const HostMatrix beta = solve_delta(comm, delta, QtR, -1.0);
      const std::int64_t n = r + a2;
      HostMatrix M(n, n), E(n, a2);  // M = [P R]^T [P R], E = [beta; I]
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          M(i, j) = i < r ? (j < r ? PtP(i, j) : PtR(i, j - r)) : (j < r ? PtR(j, i - r) : RtR(i - r, j - r));
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t c = 0; c < a2; ++c) E(i, c) = beta(i, c);
      for (std::int64_t c = 0; c < a2; ++c) E(r + c, c) = 1;
      const HostMatrix GW = transpose_times(E, multiply(M, E));
      // SVQB of W from GW.
      double ratio = 1;
      const HostMatrix S = svqb_on_root(comm, GW, tol, nullptr, ratio);
      r_next = S.cols();
      known_PtP = HostMatrix();
      known_PtR = HostMatrix();
      if (r_next > 0) {
        // P_new = P (beta S) + R S, written over the old P's columns.
        const HostMatrix betaS = multiply(beta, S);
        block_combine_pair(context, Pr, betaS, cview(R_view(a2)), S, P_view(r_next), narrow(scratch, r_next));
        clock.to(time.update);
        if (ratio >= tol.single_pass_ratio) {
          // P_new^T P_new = S^T GW S and P_new^T R = (beta S)^T P^T R + S^T R^T R,
          // as exact as reading them off the blocks: the next iteration
          // needs no pass for them.
          known_PtP = transpose_times(S, multiply(GW, S));
          known_PtR = transpose_times(betaS, PtR);
          const HostMatrix StRtR = transpose_times(S, RtR);
          for (std::size_t e = 0; e < known_PtR.values().size(); ++e) known_PtR.values()[e] += StRtR.values()[e];
        } else {
          // One pass leaves W^T W within ~eps / ratio of I; far from it, condition again.
          const spmm::DenseView<T> W = P_view(r_next);
          r_next = condition_basis(context, comm, W, narrow(scratch, r_next), tol);
          place_search_block(W, r_next);
        }
      }
      clock.to(time.orthogonalization);
    }
    r = r_next;
  }
  result.total_iterations = iteration;

  // Columns still active keep their latest iterate.
  for (std::size_t c = 0; c < active.size(); ++c)
    copy_block(context, cview(column_range(narrow(Xa, s), std::int64_t(c), 1)), column_range(X, active[c], 1));

  // The true residual B - A X, which the recurrence only approximates.
  A.apply(T(-1), spmm::ConstDenseView<T>(X), T(0), R_view(s));
  axpby(context, T(1), B, T(1), R_view(s));
  result.true_residual_norms = column_norms(context, comm, spmm::ConstDenseView<T>(R_view(s)));
  clock.to(time.other);
  clock.finish();
  time.total = MPI_Wtime() - start;
  return result;
}

template BlockCgResult block_cg(LinearOperator<float>&, spmm::ConstDenseView<float>, spmm::DenseView<float>,
                                const BlockCgOptions&, Preconditioner<float>*);
template BlockCgResult block_cg(LinearOperator<double>&, spmm::ConstDenseView<double>, spmm::DenseView<double>,
                                const BlockCgOptions&, Preconditioner<double>*);

}  // namespace blockeigs::solver
