// Chebyshev polynomial preconditioner: W = p(B) R, p the polynomial of
// degree d that the Chebyshev iteration for B y = r builds from y_0 = 0 in
// d products (Saad, Iterative Methods, sec. 12.1): 1 - x p(x) is the scaled
// Chebyshev polynomial T_{d+1}((theta - x) / delta) / T_{d+1}(theta / delta)
// of the interval [a, b] (theta, delta its centre and half-width), so p
// approximates 1/x there, uniformly in the relative sense.
//
// B is the operator A itself for the smallest end, and s I - A for the
// largest (s above the spectrum), so that p(B) is largest on the wanted
// end. With Jacobi scaling A is first replaced by S = D^{-1/2} A D^{-1/2}
// (D = |diag A|) and M = D^{-1/2} p(S) D^{-1/2}. b is the power method's
// estimate of B's largest eigenvalue times a safety factor, a = lower * b.
//
// M is symmetric positive definite whenever every eigenvalue of B is below
// a + b: p(x) > 0 on (-inf, a + b) for every degree (for x < a the
// Chebyshev factor T_{d+1} is above its value at 0; on [a, b] it is below
// it in magnitude), and on the whole line for even degrees (T_{d+1} odd). So it is SPD for
// indefinite A too, where it grows toward the smallest end (the negative
// eigenvalues), and for the largest end, where B = s I - A is positive
// semi-definite. LOBPCG and block CG need exactly that.
//
// Each apply makes d products with the whole block (through A, halo
// included) and d + 1 element-wise passes (chebyshev_steps.hpp); it holds
// two scratch blocks of R's shape.
#pragma once

#include <cstdint>

#include "core/enums.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/operator/linear_operator.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmm/memory.hpp"

namespace blockeigs::solver {

// What `auto` picks: degree 16 for an eigensolver, 8 for a linear solver
// (iterations x (degree + the rest of an iteration, in products) smallest or
// within 10% of it on a 3D Laplacian, bcsstk21 and s1rmq4m1), and the
// interval's lower end as a fraction of its upper, min(0.01, 1 / degree^2)
// (docs/benchmarks/preconditioners.md).
int default_chebyshev_degree(bool eigensolver);
double default_chebyshev_lower(int degree);

struct ChebyshevOptions {
  int degree = 0;          // products with A per apply, to max_chebyshev_degree (core/enums.hpp); 0: default
  double lower = 0;        // a = lower * b, in (0, 1); 0: default_chebyshev_lower(degree)
  bool jacobi = true;      // polynomial in D^{-1/2} A D^{-1/2} (D = |diag A|)
  SpectrumEnd end = SpectrumEnd::smallest;  // the end p(B) amplifies (block CG: smallest)
  bool eigensolver = true;  // serves LOBPCG (else block CG): sets the default degree
  double safety = 1.1;     // b = safety x the power method's estimate, which is a lower bound
  int power_steps = 30;    // products (one column) of each power-method estimate
  std::uint64_t seed = 7;  // of the power method's start vector
};

// The interval p was built for, in terms of B = shift I + sign S.
struct ChebyshevInterval {
  double a = 0, b = 0;
  double shift = 0;  // 0 for the smallest end
  int sign = 1;      // +1 smallest end, -1 largest
  double norm_estimate = 0;  // the power method's ||S||
};

template <class T>
class ChebyshevPreconditioner final : public Preconditioner<T> {
 public:
  // Collective over A.comm(): 30 single-column products for the smallest end,
  // 60 for the largest. InputError (on every rank) for options out of range,
  // a zero operator, or (jacobi) a zero diagonal entry. Keeps a reference to A.
  ChebyshevPreconditioner(LinearOperator<T>& A, const ChebyshevOptions& options);

  // W = M R. Collective.
  void apply(spmm::ConstDenseView<T> R, spmm::DenseView<T> W) override;
  PreconditionerWork work() override;

  int degree() const { return degree_; }
  const ChebyshevInterval& interval() const { return interval_; }

 private:
  void reserve(std::int64_t cols);
  double halo_seconds() const;

  LinearOperator<T>& A_;
  const spmm::Context& context_;
  int degree_ = 0;
  ChebyshevInterval interval_;
  spmm::Buffer<T> dinv_, diag_;  // |d_i|^{-1} and |d_i| (jacobi), local rows, in A's space
  spmm::Buffer<T> Q_, E_;        // scratch: the scaled residual and the step, grown on demand
  PhaseTimer clock_;
  double elementwise_ = 0;       // the passes' time (charged to the caller's preconditioner phase)
  double idle_ = 0;              // between applies
  PreconditionerWork work_;
};

}  // namespace blockeigs::solver
