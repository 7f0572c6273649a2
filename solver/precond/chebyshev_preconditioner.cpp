// The recurrence (Saad, Alg. 12.1) for B y = r from y = 0, with
// theta = (a + b) / 2, delta = (b - a) / 2, sigma = theta / delta:
//   r_0 = r, d_0 = r / theta, y = d_0, rho_0 = 1 / sigma
//   for k = 1..deg: r_k = r_{k-1} - B d_{k-1}; rho_k = 1 / (2 sigma - rho_{k-1})
//                   d_k = rho_k rho_{k-1} d_{k-1} + (2 rho_k / delta) r_k; y += d_k
// With Jacobi scaling (B built on S = D^{-1/2} A D^{-1/2}) it runs on
// q = D^{1/2} r and e = D^{-1/2} d, so that the product is a plain
// Q += -/+ A E, D enters only the element-wise pass, and W = D^{-1/2} y is
// the sum of the e_k.
#include "solver/precond/chebyshev_preconditioner.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/norm_estimate.hpp"
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
  ScaledOperator(LinearOperator<T>& A, const spmm::Buffer<T>& dhalf, double shift, int sign)
      : A_(A), dhalf_(dhalf), shift_(shift), sign_(sign) {}
  MPI_Comm comm() const override { return A_.comm(); }
  const spmm::Context& context() const override { return A_.context(); }
  std::int64_t global_rows() const override { return A_.global_rows(); }
  std::int64_t local_rows() const override { return A_.local_rows(); }
  std::int64_t first_row() const override { return A_.first_row(); }
  void diagonal(T*) const override { throw Error("ScaledOperator::diagonal is not used"); }

 protected:
  void apply_impl(T alpha, spmm::ConstDenseView<T> X, T beta, spmm::DenseView<T> Y) override {
    const spmm::Context& ctx = A_.context();
    const Space space = ctx.space();
    spmm::DenseBlock<T> scaled(space, X.rows, X.cols), product(space, X.rows, X.cols);
    const bool jacobi = !dhalf_.empty();
    if (jacobi) apply_diagonal(ctx, dhalf_.data(), X, scaled.view());
    A_.apply(T(1), jacobi ? scaled.cview() : X, T(0), product.view());
    if (jacobi) apply_diagonal(ctx, dhalf_.data(), product.cview(), scaled.view());
    axpby(ctx, static_cast<T>(alpha * sign_), jacobi ? scaled.cview() : product.cview(), beta, Y);
    if (shift_ != 0) axpby(ctx, static_cast<T>(alpha * shift_), X, T(1), Y);
  }

 private:
  LinearOperator<T>& A_;
  const spmm::Buffer<T>& dhalf_;
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

}  // namespace

int default_chebyshev_degree(bool eigensolver) { return eigensolver ? 16 : 8; }

double default_chebyshev_lower(int degree) { return std::min(0.01, 1.0 / (double(degree) * degree)); }

template <class T>
ChebyshevPreconditioner<T>::ChebyshevPreconditioner(LinearOperator<T>& A, const ChebyshevOptions& options)
    : A_(A), context_(A.context()), clock_(A.context()) {
  validate(options);
  degree_ = options.degree > 0 ? options.degree : default_chebyshev_degree(options.eigensolver);
  const double lower = options.lower > 0 ? options.lower : default_chebyshev_lower(degree_);
  const Space space = context_.space();
  spmm::Buffer<T> dhalf;
  if (options.jacobi) {
    std::vector<T> inverse = inverse_abs_diagonal(A, "Chebyshev preconditioner with jacobi: true");
    std::vector<T> d(inverse.size()), half(inverse.size());
    for (std::size_t i = 0; i < inverse.size(); ++i) {
      d[i] = T(1) / inverse[i];
      half[i] = std::sqrt(inverse[i]);
    }
    dinv_ = spmm::Buffer<T>(space, inverse);
    diag_ = spmm::Buffer<T>(space, d);
    dhalf = spmm::Buffer<T>(space, half);
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
void ChebyshevPreconditioner<T>::reserve(std::int64_t cols) {
  const auto needed = static_cast<std::size_t>(A_.local_rows() * cols);
  if (Q_.size() >= needed) return;
  Q_ = spmm::Buffer<T>(context_.space(), needed);
  E_ = spmm::Buffer<T>(context_.space(), needed);
}

template <class T>
double ChebyshevPreconditioner<T>::halo_seconds() const {
  const auto* distributed = dynamic_cast<const DistributedOperator<T>*>(&A_);
  return distributed ? distributed->halo_seconds() : 0;
}

template <class T>
void ChebyshevPreconditioner<T>::apply(spmm::ConstDenseView<T> R, spmm::DenseView<T> W) {
  check_apply_arguments("Chebyshev preconditioner", A_.local_rows(), context_.space(), BlockExtent::of(R),
                        BlockExtent::of(spmm::ConstDenseView<T>(W)));
  reserve(R.cols);
  const spmm::DenseView<T> Q{context_.space(), R.rows, R.cols, R.cols, Q_.data()};
  const spmm::DenseView<T> E{context_.space(), R.rows, R.cols, R.cols, E_.data()};
  const T* dinv = dinv_.empty() ? nullptr : dinv_.data();
  const T* diag = diag_.empty() ? nullptr : diag_.data();
  const ChebyshevInterval& iv = interval_;
  const double theta = (iv.a + iv.b) / 2, delta = (iv.b - iv.a) / 2, sigma = theta / delta;

  clock_.to(idle_);
  chebyshev_start(context_, static_cast<T>(1 / theta), dinv, R, Q, E, W);  // W = E = D^{-1} R / theta, Q = R
  clock_.to(elementwise_);
  double rho = 1 / sigma;
  for (int k = 1; k <= degree_; ++k) {
    const double halo_before = halo_seconds();
    A_.apply(static_cast<T>(-iv.sign), spmm::ConstDenseView<T>(E), T(1), Q);  // Q -= sign A E
    clock_.to(work_.spmm);
    work_.halo += halo_seconds() - halo_before;
    work_.products += 1;
    const double next = 1 / (2 * sigma - rho);
    chebyshev_step(context_, static_cast<T>(iv.shift), static_cast<T>(next * rho), static_cast<T>(2 * next / delta),
                   diag, dinv, iv.shift != 0 && k < degree_, Q, E, W);
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

}  // namespace blockeigs::solver
