#include "solver/block_cg.hpp"

#include <lapacke.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "solver/block_ops.hpp"
#include "solver/collective.hpp"
#include "solver/orthonormalize.hpp"

namespace blockeigs::solver {

bool BlockCgResult::all_converged() const {
  return std::all_of(converged.begin(), converged.end(), [](bool c) { return c; });
}

namespace {

// Wall-clock phases, device work synchronised at each boundary so that the
// split is honest (the syncs cost microseconds against millisecond phases).
class PhaseClock {
 public:
  explicit PhaseClock(const spmm::Context& context) : context_(context), last_(MPI_Wtime()) {}
  void to(double& bucket) {
    context_.synchronize();
    const double now = MPI_Wtime();
    bucket += now - last_;
    last_ = now;
  }

 private:
  const spmm::Context& context_;
  double last_;
};

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
  MPI_Comm_rank(comm, &rank);
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
  MPI_Bcast(status, 2, MPI_DOUBLE, 0, comm);
  out.positive_definite = status[0] == 1;
  out.smallest_diagonal = status[1];
  if (out.positive_definite) MPI_Bcast(out.factor.data(), static_cast<int>(out.factor.values().size()), MPI_DOUBLE, 0, comm);
  return out;
}

// Delta^{-1} rhs (r x a), computed on rank 0 and broadcast.
HostMatrix solve_delta(MPI_Comm comm, const SmallSolve& delta, HostMatrix rhs, double sign) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto r = static_cast<int>(rhs.rows()), a = static_cast<int>(rhs.cols());
  if (rank == 0 && r > 0 && a > 0) {
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', r, a, delta.factor.data(), r, rhs.data(), a);
    if (sign != 1)
      for (double& v : rhs.values()) v *= sign;
  }
  MPI_Bcast(rhs.data(), static_cast<int>(rhs.values().size()), MPI_DOUBLE, 0, comm);
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
  PhaseClock clock(context);
  const auto tol = OrthonormalizeTolerances::for_type<T>();

  // Buffers. QR holds [Q | R_active] side by side (R from column s on, Q
  // just before it) so that P^T [Q R] is one reduction.
  spmm::DenseBlock<T> QR(space, m, 2 * s), Xa(space, m, s), P(space, m, s), W(space, m, s), scratch(space, m, s);
  auto R_view = [&](std::int64_t a) { return spmm::DenseView<T>{space, m, a, 2 * s, QR.data() + s}; };
  auto Q_view = [&](std::int64_t r) { return spmm::DenseView<T>{space, m, r, 2 * s, QR.data() + s - r}; };
  auto narrow = [&](spmm::DenseBlock<T>& block, std::int64_t cols) {
    return spmm::DenseView<T>{space, m, cols, block.ld(), block.data()};
  };

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
    select_columns(context, spmm::ConstDenseView<T>(narrow(Xa, a)), keep, narrow(scratch, kept));
    copy_block(context, spmm::ConstDenseView<T>(narrow(scratch, kept)), narrow(Xa, kept));
    select_columns(context, spmm::ConstDenseView<T>(R_view(a)), keep, narrow(scratch, kept));
    copy_block(context, spmm::ConstDenseView<T>(narrow(scratch, kept)), R_view(kept));
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

  // Z = M^{-1} R (or R) for the active columns, written straight into the
  // block that becomes the search block.
  auto new_directions = [&](spmm::DenseView<T> target, std::int64_t a) {
    if (preconditioner) {
      preconditioner->apply(spmm::ConstDenseView<T>(R_view(a)), target);
      clock.to(time.preconditioner);
    } else {
      copy_block(context, spmm::ConstDenseView<T>(R_view(a)), target);
    }
  };

  std::vector<double> norms = column_norms(context, comm, spmm::ConstDenseView<T>(R_view(s)));
  (void)retire_converged(norms, 0);
  clock.to(time.other);

  std::int64_t r = 0;
  if (!active.empty()) {
    const auto a = static_cast<std::int64_t>(active.size());
    new_directions(narrow(P, a), a);
    r = orthonormalize(context, comm, narrow(P, a), narrow(scratch, a), tol);
    clock.to(time.orthogonalization);
  }

  int iteration = 0;
  while (!active.empty() && r > 0 && iteration < options.max_iterations) {
    ++iteration;
    const auto a = static_cast<std::int64_t>(active.size());
    const spmm::ConstDenseView<T> Pr = narrow(P, r);
    A.apply(T(1), Pr, T(0), Q_view(r));
    clock.to(time.spmm);

    // [Delta C] = P^T [Q R]; alpha = Delta^{-1} C.
    const HostMatrix G = gram(context, comm, Pr, spmm::ConstDenseView<T>(
                                                      spmm::DenseView<T>{space, m, r + a, 2 * s, QR.data() + s - r}));
    const SmallSolve delta = factor_delta(comm, columns_of(G, 0, r));
    if (!delta.positive_definite)
      fail_input_everywhere("block CG: the matrix is not positive definite (negative curvature at iteration ", iteration,
                 ": smallest p^T A p over the orthonormal search block is ", delta.smallest_diagonal,
                 ", or P^T A P has no Cholesky factor)");
    const HostMatrix alpha = solve_delta(comm, delta, columns_of(G, r, a), 1.0);
    block_update(context, T(1), Pr, alpha, T(1), narrow(Xa, a));
    block_update(context, T(-1), spmm::ConstDenseView<T>(Q_view(r)), alpha, T(1), R_view(a));
    clock.to(time.update);

    // [Q R]^T R in one pass over the two blocks: the residual norms are the
    // square roots of its R^T R diagonal, and Q^T R is what beta needs when
    // there is no preconditioner.
    const HostMatrix QR_R = gram(context, comm, spmm::ConstDenseView<T>(spmm::DenseView<T>{space, m, r + a, 2 * s,
                                                                                          QR.data() + s - r}),
                                 spmm::ConstDenseView<T>(R_view(a)));
    norms.resize(static_cast<std::size_t>(a));
    for (std::int64_t c = 0; c < a; ++c) norms[c] = std::sqrt(std::max(0.0, QR_R(r + c, c)));
    const double worst = record(norms);
    const std::vector<std::int64_t> kept = retire_converged(norms, iteration);
    monitor(iteration, r, worst);
    clock.to(time.other);
    if (active.empty()) break;

    // P <- orth(Z + P beta), beta = -Delta^{-1} Q^T Z, built in W in one pass
    // (Z is R itself without a preconditioner, else M^{-1} R written to W).
    const auto a2 = static_cast<std::int64_t>(active.size());
    spmm::ConstDenseView<T> Z = R_view(a2);
    HostMatrix QtZ(r, a2);
    if (preconditioner) {
      new_directions(narrow(W, a2), a2);
      Z = narrow(W, a2);
      QtZ = gram(context, comm, spmm::ConstDenseView<T>(Q_view(r)), Z);
    } else {
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t c = 0; c < a2; ++c) QtZ(i, c) = QR_R(i, kept[c]);
    }
    const HostMatrix beta = solve_delta(comm, delta, QtZ, -1.0);
    block_combine(context, T(1), Pr, beta, T(1), Z, narrow(W, a2));
    clock.to(time.update);
    r = orthonormalize(context, comm, narrow(W, a2), narrow(scratch, a2), tol);
    std::swap(P, W);
    clock.to(time.orthogonalization);
  }
  result.total_iterations = iteration;

  // Columns still active keep their latest iterate.
  for (std::size_t c = 0; c < active.size(); ++c)
    copy_block(context, spmm::ConstDenseView<T>(column_range(narrow(Xa, s), std::int64_t(c), 1)),
               column_range(X, active[c], 1));

  // The true residual B - A X, which the recurrence only approximates.
  A.apply(T(-1), spmm::ConstDenseView<T>(X), T(0), R_view(s));
  axpby(context, T(1), B, T(1), R_view(s));
  result.true_residual_norms = column_norms(context, comm, spmm::ConstDenseView<T>(R_view(s)));
  clock.to(time.other);
  time.total = MPI_Wtime() - start;
  return result;
}

template BlockCgResult block_cg(LinearOperator<float>&, spmm::ConstDenseView<float>, spmm::DenseView<float>,
                                const BlockCgOptions&, Preconditioner<float>*);
template BlockCgResult block_cg(LinearOperator<double>&, spmm::ConstDenseView<double>, spmm::DenseView<double>,
                                const BlockCgOptions&, Preconditioner<double>*);

}  // namespace blockeigs::solver
