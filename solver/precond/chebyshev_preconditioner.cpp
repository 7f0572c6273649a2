// The recurrence (Saad, Alg. 12.1) for B y = r from y = 0, with
// theta = (a + b) / 2, delta = (b - a) / 2, sigma = theta / delta:
//   r_0 = r, d_0 = r / theta, y = d_0, rho_0 = 1 / sigma
//   for k = 1..deg: r_k = r_{k-1} - B d_{k-1}; rho_k = 1 / (2 sigma - rho_{k-1})
//                   d_k = rho_k rho_{k-1} d_{k-1} + (2 rho_k / delta) r_k; y += d_k
// With Jacobi scaling (B built on S = D^{-1/2} A D^{-1/2}) it runs on
// q = D^{1/2} r and e = D^{-1/2} d, so that the product is a plain
// Q += -/+ A E, D enters only the element-wise pass, and W = D^{-1/2} y is
// the sum of the e_k. The last step forms only the sum.
#include "solver/precond/chebyshev_preconditioner.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/norm_estimate.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_steps.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"

namespace blockeigs::solver {
namespace {

// shift I + sign D^{-1/2} A D^{-1/2} (D = I where dhalf is empty): the
// operator the power method estimates. Used on single columns only.
template <class T>
class ScaledOperator final : public LinearOperator<T> {
 public:
  ScaledOperator(LinearOperator<T>& A, const dense::Buffer<T>& dhalf, double shift, int sign)
      : A_(A), dhalf_(dhalf), shift_(shift), sign_(sign) {}
  MPI_Comm comm() const override { return A_.comm(); }
  const dense::Context& context() const override { return A_.context(); }
  std::int64_t global_rows() const override { return A_.global_rows(); }
  std::int64_t local_rows() const override { return A_.local_rows(); }
  std::int64_t first_row() const override { return A_.first_row(); }
  void diagonal(T*) const override { throw Error("ScaledOperator::diagonal is not used"); }

 protected:
  void apply_impl(T alpha, dense::ConstDenseView<T> X, T beta, dense::DenseView<T> Y) override {
    const dense::Context& ctx = A_.context();
    const Space space = ctx.space();
    dense::DenseBlock<T> scaled(space, X.rows, X.cols), product(space, X.rows, X.cols);
    const bool jacobi = !dhalf_.empty();
    if (jacobi) apply_diagonal(ctx, dhalf_.data(), X, scaled.view());
    A_.apply(T(1), jacobi ? scaled.cview() : X, T(0), product.view());
    if (jacobi) apply_diagonal(ctx, dhalf_.data(), product.cview(), scaled.view());
    axpby(ctx, alpha * static_cast<T>(sign_), jacobi ? scaled.cview() : product.cview(), beta, Y);
    if (shift_ != 0) axpby(ctx, alpha * static_cast<T>(shift_), X, T(1), Y);
  }

 private:
  LinearOperator<T>& A_;
  const dense::Buffer<T>& dhalf_;
  double shift_;
  int sign_;
};

void validate(const ChebyshevOptions& o) {
  if (o.degree < 0 || o.degree > max_chebyshev_degree)
    fail_input("Chebyshev preconditioner: degree ", o.degree, " is out of range: 1 to ", max_chebyshev_degree,
               " products per apply (or auto)");
  if (o.lower != 0 && !(o.lower > 0 && o.lower < 1))
    fail_input("Chebyshev preconditioner: lower = ", o.lower, " gives ",
               o.lower >= 1 ? "an empty or inverted interval [lower b, b]" : "an interval reaching 0 or below",
               "; lower must be in (0, 1)");
  if (!(o.safety >= 1) || o.power_steps < 1)
    fail_input("Chebyshev preconditioner: safety ", o.safety, " (at least 1) or power_steps ", o.power_steps,
               " (at least 1) out of range");
}

// The diagonals of the polynomial in U: |d_i|^{-1} and |d_i|, real (R).
template <class R, class T>
void set_diagonals(Space space, const std::vector<T>& inverse, dense::Buffer<R>& dinv, dense::Buffer<R>& diag) {
  std::vector<R> i(inverse.size()), d(inverse.size());
  for (std::size_t r = 0; r < inverse.size(); ++r) {
    i[r] = static_cast<R>(std::real(inverse[r]));
    d[r] = static_cast<R>(1 / std::real(inverse[r]));
  }
  dinv = dense::Buffer<R>(space, i);
  diag = dense::Buffer<R>(space, d);
}

}  // namespace

int default_chebyshev_degree(bool eigensolver) { return eigensolver ? 16 : 8; }

double default_chebyshev_lower(int degree) { return std::min(0.01, 1.0 / (double(degree) * degree)); }

Precision chebyshev_precision(ChebyshevPrecision requested, Precision problem, bool eigensolver, Space space) {
  (void)space;  // fp32 pays on the host too: 20% less preconditioner time at 48^3, one core
  switch (requested) {
    case ChebyshevPrecision::fp32: return Precision::fp32;
    case ChebyshevPrecision::fp64: return Precision::fp64;
    case ChebyshevPrecision::automatic: break;
  }
  return eigensolver ? Precision::fp32 : problem;
}

template <class T>
PreconditionerMemory ChebyshevPreconditioner<T>::memory(const ChebyshevOptions& options, Space space) {
  // (An fp64 polynomial on an fp32 operator is refused by the constructor.)
  const bool rounded =
      chebyshev_precision(options.precision, precision_of<T>(), options.eigensolver, space) != precision_of<T>();
  const int polynomial_bytes = rounded ? 4 : int{sizeof(T)};
  return {.vector_bytes = options.jacobi ? 2 * polynomial_bytes : 0,
          .block_bytes = rounded ? 3 * 4 : 2 * int{sizeof(T)},
          .matrix_copy = rounded};
}

template <class T>
ChebyshevPreconditioner<T>::ChebyshevPreconditioner(LinearOperator<T>& A, const ChebyshevOptions& options)
    : A_(A), context_(A.context()), clock_(A.context()) {
  validate(options);
  degree_ = options.degree > 0 ? options.degree : default_chebyshev_degree(options.eigensolver);
  const double lower = options.lower > 0 ? options.lower : default_chebyshev_lower(degree_);
  const Space space = context_.space();
  const Precision precision = chebyshev_precision(options.precision, precision_of<T>(), options.eigensolver, space);
  if (precision == Precision::fp64 && !std::is_same_v<real_t<T>, double>)
    fail_input(
        "Chebyshev preconditioner: precision fp64 needs an fp64 operator, and this one is fp32 "
        "(execution.spmm_precision: fp32); use fp32 or auto");
  if (precision == Precision::fp32 && std::is_same_v<real_t<T>, double>) {
    rounded_ = rounded_to_single(A);  // collective; the same on every rank
    if (!rounded_ && options.precision == ChebyshevPrecision::fp32)
      fail_input(
          "Chebyshev preconditioner: precision fp32 needs an operator with an fp32 copy of its matrix "
          "(the distributed operator); use fp64 or auto");
  }
  if (rounded_)
    single_.A = rounded_.get();
  else
    same_.A = &A;
  dense::Buffer<T> dhalf;
  if (options.jacobi) {
    std::vector<T> inverse = inverse_abs_diagonal(A, "Chebyshev preconditioner with jacobi: true");
    std::vector<T> half(inverse.size());
    for (std::size_t i = 0; i < inverse.size(); ++i) half[i] = std::sqrt(inverse[i]);
    if (single_.A) set_diagonals(space, inverse, single_.dinv, single_.diag);
    if (same_.A) set_diagonals(space, inverse, same_.dinv, same_.diag);
    dhalf = dense::Buffer<T>(space, half);
  }
  ChebyshevInterval& iv = interval_;
  ScaledOperator<T> S(A, dhalf, 0.0, 1);
  iv.norm_estimate = power_norm_estimate<T>(S, A.comm(), options.power_steps, options.seed);
  if (!(iv.norm_estimate > 0) || !std::isfinite(iv.norm_estimate))
    fail_input("Chebyshev preconditioner: the power method estimates ||A|| = ", iv.norm_estimate,
               " (a zero or non-finite matrix): there is no interval to build the polynomial on");
  double top = options.safety * iv.norm_estimate;  // B's largest eigenvalue, bounded
  if (options.end == SpectrumEnd::largest) {
    // B = s I - S with s above S's spectrum: positive semi-definite, small on the wanted end.
    iv.shift = top;
    iv.sign = -1;
    ScaledOperator<T> B(A, dhalf, iv.shift, -1);
    top = options.safety * power_norm_estimate<T>(B, A.comm(), options.power_steps, options.seed + 1);
    if (!(top > 0)) top = iv.shift;  // S = c I: B = 0 up to rounding
  }
  iv.b = top;
  iv.a = lower * top;
}

template <class T>
double ChebyshevPreconditioner<T>::halo_seconds() const {
  const auto* distributed = dynamic_cast<const DistributedOperator<T>*>(&A_);
  return distributed ? distributed->halo_seconds() : 0;  // the fp32 copy's exchanges count there too
}

template <class T>
void ChebyshevPreconditioner<T>::apply(dense::ConstDenseView<T> R, dense::DenseView<T> W) {
  check_apply_arguments("Chebyshev preconditioner", A_.local_rows(), context_.space(), BlockExtent::of(R),
                        BlockExtent::of(dense::ConstDenseView<T>(W)));
  if (single_.A)
    run(single_, R, W);
  else
    run(same_, R, W);
}

template <class T>
template <class U>
void ChebyshevPreconditioner<T>::run(Polynomial<U>& p, dense::ConstDenseView<T> R, dense::DenseView<T> W) {
  constexpr bool separate_sum = !std::is_same_v<U, T>;  // else the sum is formed in W itself
  const auto needed = static_cast<std::size_t>(R.rows * R.cols);
  if (p.Q.size() < needed) {
    p.Q = dense::Buffer<U>(context_.space(), needed);
    p.E = dense::Buffer<U>(context_.space(), needed);
    if (separate_sum) p.W = dense::Buffer<U>(context_.space(), needed);
  }
  const auto block = [&](dense::Buffer<U>& b) {
    return dense::DenseView<U>{context_.space(), R.rows, R.cols, R.cols, b.data()};
  };
  const dense::DenseView<U> Q = block(p.Q), E = block(p.E);
  dense::DenseView<U> S;  // the running sum
  if constexpr (separate_sum)
    S = block(p.W);
  else
    S = W;
  const real_t<U>* dinv = p.dinv.empty() ? nullptr : p.dinv.data();
  const real_t<U>* diag = p.diag.empty() ? nullptr : p.diag.data();
  const ChebyshevInterval& iv = interval_;
  const double theta = (iv.a + iv.b) / 2, delta = (iv.b - iv.a) / 2, sigma = theta / delta;

  clock_.to(idle_);
  using Real = real_t<U>;  // the polynomial's coefficients and diagonals
  chebyshev_start<T, U>(context_, static_cast<Real>(1 / theta), dinv, R, Q, E, S);  // S = E = D^{-1} R / theta, Q = R
  clock_.to(elementwise_);
  double rho = 1 / sigma;
  for (int k = 1; k <= degree_; ++k) {
    const double halo_before = halo_seconds();
    p.A->apply(static_cast<U>(-iv.sign), dense::ConstDenseView<U>(E), U(1), Q);  // Q -= sign A E
    clock_.to(work_.spmm);
    work_.halo += halo_seconds() - halo_before;
    work_.products += 1;
    const double next = 1 / (2 * sigma - rho);
    const Real shift = static_cast<Real>(iv.shift), alpha = static_cast<Real>(next * rho),
               beta = static_cast<Real>(2 * next / delta);
    if (k < degree_)
      chebyshev_step(context_, shift, alpha, beta, diag, dinv, iv.shift != 0, Q, E, S);
    else  // W = S + the last step
      chebyshev_finish<T, U>(context_, shift, alpha, beta, diag, dinv, Q, E, dense::ConstDenseView<U>(S), W);
    rho = next;
    clock_.to(elementwise_);
  }
  clock_.settle_done();
}

template <class T>
PreconditionerWork ChebyshevPreconditioner<T>::work() {
  clock_.finish();
  return work_;
}

template class ChebyshevPreconditioner<float>;
template class ChebyshevPreconditioner<double>;
template class ChebyshevPreconditioner<std::complex<float>>;
template class ChebyshevPreconditioner<std::complex<double>>;

}  // namespace blockeigs::solver
