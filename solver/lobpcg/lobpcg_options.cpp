// LOBPCG's options: their checks, the default block size, the stopping
// test and the result's pairs and verdict, and when the implicitly updated
// A X and A P are recomputed.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"

namespace blockeigs::solver {

template <class T>
bool LobpcgResult<T>::all_converged() const {
  return std::all_of(converged.begin(), converged.end(), [](bool c) { return c; });
}
#define BLOCKEIGS_RESULT(T) template struct LobpcgResult<T>;
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_RESULT)
#undef BLOCKEIGS_RESULT

int default_block_size(int k, std::int64_t global_rows) {
  const int guard = std::max(2, (k + 3) / 4);
  return static_cast<int>(std::min<std::int64_t>(std::int64_t{k} + guard, global_rows));
}

namespace lobpcg_detail {

template <class T>
int validate_options(const LinearOperator<T>& A, const LobpcgOptions& o,
                     const std::optional<dense::ConstDenseView<T>>& start, bool has_preconditioner) {
  const std::int64_t rows = A.global_rows();
  if (o.k < 1) fail_input("LOBPCG: k (the number of eigenpairs) must be at least 1, got ", o.k);
  if (o.k >= rows)
    fail_input("LOBPCG: k = ", o.k, " but the matrix has ", rows, " rows; k must be smaller than the number of rows");
  if (o.block_size < 0 || (o.block_size > 0 && o.block_size < o.k))
    fail_input("LOBPCG: block size ", o.block_size, " is smaller than k = ", o.k,
               " (use 0 for the default, k plus guard vectors)");
  if (o.block_size > rows) fail_input("LOBPCG: block size ", o.block_size, " exceeds the matrix's ", rows, " rows");
  if (!(o.tolerance > 0) || !std::isfinite(o.tolerance))
    fail_input("LOBPCG: tolerance must be positive and finite, got ", o.tolerance);
  if (o.max_iterations < 1) fail_input("LOBPCG: max_iterations must be at least 1, got ", o.max_iterations);
  if (o.stagnation_window < 0)
    fail_input("LOBPCG: stagnation_window must be 0 (never) or positive, got ", o.stagnation_window);
  if (o.tuning.recompute_interval < 0)
    fail_input("LOBPCG: tuning.recompute_interval must be 0 (automatic) or positive, got ",
               o.tuning.recompute_interval);
  if (o.tuning.column_alignment < 0 || o.tuning.column_alignment > 64)
    fail_input("LOBPCG: tuning.column_alignment must be 0 (automatic) or 1 to 64, got ", o.tuning.column_alignment);
  const int nb = o.block_size > 0 ? o.block_size : default_block_size(o.k, rows);
  // (fp32 blocks hold the search block in fp32 whatever the preconditioner.)
  if (!search_precision_allows_preconditioner(o.search_precision) && has_preconditioner && std::is_same_v<T, double>)
    fail_input("LOBPCG: search_precision ", search_precision_needs_no_preconditioner);
  // The start block's shape is per rank: agree before anyone proceeds.
  collectively(A.comm(), [&] {
    if (!start) return;
    if (start->space != A.context().space())
      fail_input("LOBPCG: the start block is in ", to_string(start->space), " memory, the operator in ",
                 to_string(A.context().space()));
    if (start->rows != A.local_rows())
      fail_input("LOBPCG: the start block has ", start->rows, " local rows, the operator ", A.local_rows(),
                 " on this rank");
    if (start->cols < 1 || start->cols > nb)
      fail_input("LOBPCG: the start block has ", start->cols, " columns; it needs 1 to the block size ", nb);
  });
  return nb;
}

template <class T>
void validate_pencil(const LinearOperator<T>& A, const LinearOperator<T>* B,
                     const std::optional<dense::ConstDenseView<T>>& constraints, int nb, SearchPrecision precision) {
  if (B && B->global_rows() != A.global_rows())
    fail_input("LOBPCG: B has ", B->global_rows(), " rows, A ", A.global_rows(), "; A x = lambda B x needs both ",
               "of one size");
  if (constraints && precision == SearchPrecision::fp32)
    fail_input("LOBPCG: search_precision fp32 is not available with constraints; use fp64 or auto");
  if (B && precision == SearchPrecision::fp32)
    fail_input("LOBPCG: search_precision fp32 is not available for A x = lambda B x; use fp64 or auto");
  if (is_complex_v<T> && precision == SearchPrecision::fp32)
    fail_input(
        "LOBPCG: search_precision fp32 takes real fp64 blocks; complex ones keep their residuals in complex "
        "double (use fp64 or auto)");
  // Shapes are per rank: agree before anyone proceeds.
  collectively(A.comm(), [&] {
    if (B && (B->local_rows() != A.local_rows() || B->first_row() != A.first_row()))
      fail_input("LOBPCG: B's rows on this rank (", B->first_row(), " + ", B->local_rows(), ") are not A's (",
                 A.first_row(), " + ", A.local_rows(), "); B must be distributed like A");
    // One context: B's products queue on A's stream, in order with the blocks they read.
    if (B && &B->context() != &A.context())
      fail_input("LOBPCG: B must share A's context (", to_string(B->context().space()), " and ",
                 to_string(A.context().space()), " contexts given)");
    if (!constraints) return;
    if (constraints->space != A.context().space())
      fail_input("LOBPCG: the constraint block is in ", to_string(constraints->space), " memory, the operator in ",
                 to_string(A.context().space()));
    if (constraints->rows != A.local_rows())
      fail_input("LOBPCG: the constraint block has ", constraints->rows, " local rows, the operator ", A.local_rows(),
                 " on this rank");
    if (constraints->cols < 1 || constraints->cols + nb > A.global_rows())
      fail_input("LOBPCG: the constraint block has ", constraints->cols, " columns; with a block of ", nb,
                 " it needs 1 to ", A.global_rows() - nb, " (the matrix has ", A.global_rows(), " rows)");
  });
}
template void validate_pencil(const LinearOperator<float>&, const LinearOperator<float>*,
                              const std::optional<dense::ConstDenseView<float>>&, int, SearchPrecision);
template void validate_pencil(const LinearOperator<double>&, const LinearOperator<double>*,
                              const std::optional<dense::ConstDenseView<double>>&, int, SearchPrecision);
template void validate_pencil(const LinearOperator<std::complex<double>>&, const LinearOperator<std::complex<double>>*,
                              const std::optional<dense::ConstDenseView<std::complex<double>>>&, int, SearchPrecision);
template void validate_pencil(const LinearOperator<std::complex<float>>&, const LinearOperator<std::complex<float>>*,
                              const std::optional<dense::ConstDenseView<std::complex<float>>>&, int, SearchPrecision);

bool passes(StoppingTest test, double tol, double r, double lambda, double x_norm, double norm_a, double* scaled) {
  const double scale = (test == StoppingTest::backward ? norm_a + std::abs(lambda) : std::abs(lambda)) * x_norm;
  *scaled = scale > 0 ? r / scale : INFINITY;
  return r <= tol * scale;
}

template <class T>
void take_wanted_pairs(const dense::Context& context, dense::ConstDenseView<T> X, const std::vector<double>& lambda,
                       const std::vector<double>& x_norm, const std::vector<double>& r_norm,
                       const std::vector<bool>& conv, bool b_normalized, LobpcgResult<T>& result) {
  const std::int64_t k = X.cols;
  result.eigenvalues.assign(lambda.begin(), lambda.begin() + k);
  result.eigenvectors = dense::DenseBlock<T>(X.space, X.rows, k);
  copy_block(context, X, result.eigenvectors.view());
  std::vector<double> inverse_norm(static_cast<std::size_t>(k));
  for (std::int64_t j = 0; j < k; ++j) {
    inverse_norm[j] = x_norm[j] > 0 ? 1.0 / x_norm[j] : 1.0;
    const double r = b_normalized ? r_norm[j] : r_norm[j] * inverse_norm[j];
    const double bx = b_normalized ? x_norm[j] : 1.0;
    result.residual_norms.push_back(r);
    result.b_norms.push_back(bx);
    result.relative_residuals.push_back(r / (std::abs(lambda[j]) * bx));
    result.converged.push_back(conv[j]);
  }
  if (!b_normalized) scale_columns(context, inverse_norm, result.eigenvectors.view());
}
template void take_wanted_pairs(const dense::Context&, dense::ConstDenseView<float>, const std::vector<double>&,
                                const std::vector<double>&, const std::vector<double>&, const std::vector<bool>&, bool,
                                LobpcgResult<float>&);
template void take_wanted_pairs(const dense::Context&, dense::ConstDenseView<double>, const std::vector<double>&,
                                const std::vector<double>&, const std::vector<double>&, const std::vector<bool>&, bool,
                                LobpcgResult<double>&);
template void take_wanted_pairs(const dense::Context&, dense::ConstDenseView<std::complex<double>>,
                                const std::vector<double>&, const std::vector<double>&, const std::vector<double>&,
                                const std::vector<bool>&, bool, LobpcgResult<std::complex<double>>&);
template void take_wanted_pairs(const dense::Context&, dense::ConstDenseView<std::complex<float>>,
                                const std::vector<double>&, const std::vector<double>&, const std::vector<double>&,
                                const std::vector<bool>&, bool, LobpcgResult<std::complex<float>>&);

template <class T>
void mark_tests(double tolerance, LobpcgResult<T>& result) {
  result.passes_relative.clear();
  result.passes_backward.clear();
  for (std::size_t j = 0; j < result.eigenvalues.size(); ++j) {
    const double r = result.residual_norms[j], lambda = std::abs(result.eigenvalues[j]), bx = result.b_norms[j];
    result.passes_relative.push_back(r <= tolerance * lambda * bx);
    result.passes_backward.push_back(r <= tolerance * (result.norm_estimate + lambda) * bx);
  }
}
#define BLOCKEIGS_MARK_TESTS(T) template void mark_tests(double, LobpcgResult<T>&);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_MARK_TESTS)
#undef BLOCKEIGS_MARK_TESTS

int automatic_recompute_interval(double eps, double norm_a, double tolerance, StoppingTest test,
                                 const std::vector<double>& lambda, const std::vector<double>& x_norm, int k) {
  double demanded = INFINITY;  // the smallest residual norm the test asks of a wanted pair
  double x_scale = 0;          // the largest x_norm: 1, or ||B x|| of B-orthonormal columns
  for (int j = 0; j < k; ++j) {
    const double scale = test == StoppingTest::backward ? norm_a + std::abs(lambda[j]) : std::abs(lambda[j]);
    demanded = std::min(demanded, tolerance * scale * x_norm[j]);
    x_scale = std::max(x_scale, x_norm[j]);
  }
  const double drift_per_step = 10 * eps * norm_a * x_scale;
  if (!(drift_per_step > 0)) return min_recompute_interval;  // nothing known about ||A|| yet
  const double steps = 0.01 * demanded / drift_per_step;
  return static_cast<int>(
      std::clamp(std::floor(steps), double(min_recompute_interval), double(max_recompute_interval)));
}

template <class T>
std::int64_t column_alignment(const LobpcgOptions& options, Space space) {
  if (options.tuning.column_alignment > 0) return options.tuning.column_alignment;
  // (On the device a whole 32-byte sector is 4 doubles or 2 complex doubles.)
  constexpr bool fp64 = std::is_same_v<real_t<T>, double>;
  return space == Space::device && fp64 ? 32 / sizeof(T) : 1;
}

template <class T>
bool search_in_fp32(const LinearOperator<T>& A, const LobpcgOptions& options, bool preconditioned, int nb) {
  if constexpr (!std::is_same_v<T, double>) {
    return false;  // fp32 blocks: Z is in fp32 anyway
  } else {
    if (preconditioned || options.search_precision == SearchPrecision::fp64) return false;
    if (options.search_precision == SearchPrecision::fp32) return true;
    const std::int64_t widest_xp = round_up(2 * std::int64_t{nb}, column_alignment<T>(options, A.context().space()));
    return applies_single(A) && options.tuning.imply_ax != ImplyAX::never &&
           search_single_kernels_fit(A.context(), widest_xp + nb, widest_xp + nb, widest_xp, nb) &&
           search_single_pays(A.context());
  }
}

template std::int64_t column_alignment<float>(const LobpcgOptions&, Space);
template std::int64_t column_alignment<double>(const LobpcgOptions&, Space);
template bool search_in_fp32(const LinearOperator<float>&, const LobpcgOptions&, bool, int);
template bool search_in_fp32(const LinearOperator<double>&, const LobpcgOptions&, bool, int);
template std::int64_t column_alignment<std::complex<float>>(const LobpcgOptions&, Space);
template std::int64_t column_alignment<std::complex<double>>(const LobpcgOptions&, Space);
template bool search_in_fp32(const LinearOperator<std::complex<float>>&, const LobpcgOptions&, bool, int);
template bool search_in_fp32(const LinearOperator<std::complex<double>>&, const LobpcgOptions&, bool, int);

bool search_drift_due(double unit_roundoff, double residual_sum, const std::vector<double>& r_norm,
                      const std::vector<bool>& converged) {
  double smallest = INFINITY;
  for (std::size_t j = 0; j < r_norm.size(); ++j)
    if (!converged[j]) smallest = std::min(smallest, r_norm[j]);
  return std::isfinite(smallest) && unit_roundoff * residual_sum >= search_drift_fraction * smallest;
}

#define BLOCKEIGS_VALIDATE(T)                                                   \
  template int validate_options(const LinearOperator<T>&, const LobpcgOptions&, \
                                const std::optional<dense::ConstDenseView<T>>&, bool);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_VALIDATE)
#undef BLOCKEIGS_VALIDATE

}  // namespace lobpcg_detail
const char* to_string(LobpcgStop stop) {
  switch (stop) {
    case LobpcgStop::converged: return "converged";
    case LobpcgStop::iteration_limit: return "iteration_limit";
    case LobpcgStop::diverged: return "diverged";
    case LobpcgStop::stagnated: return "stagnated";
    case LobpcgStop::below_floor: return "below_floor";
    case LobpcgStop::no_search_direction: return "no_search_direction";
    case LobpcgStop::interrupted: return "interrupted";
  }
  return "";
}

}  // namespace blockeigs::solver
