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
//
// The polynomial may run in fp32 for an fp64 problem (`precision`): the
// products with A's values rounded (SingleInputOperator::rounded_to_single),
// the passes and the scratch blocks (three, the running sum among them) in
// fp32, R rounded in the first pass and the result widened in the last.
// Every pass and product moves half the bytes. M is then p(A) up to fp32
// rounding: symmetric and linear only to that rounding. LOBPCG, whose
// residuals stay fp64, converges as with fp64; block CG, whose short
// recurrence needs a fixed M, may lose many iterations once its residuals
// near that rounding (chebyshev_precision).
#pragma once

#include <cstdint>
#include <memory>

#include "core/enums.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/preconditioner_memory.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

// What `auto` picks: degree 16 for an eigensolver, 8 for a linear solver
// (iterations x (degree + the rest of an iteration, in products) smallest or
// within 10% of it on a 3D Laplacian, bcsstk21 and s1rmq4m1), and the
// interval's lower end as a fraction of its upper, min(0.01, 1 / degree^2)
// (docs/benchmarks/preconditioners.md).
int default_chebyshev_degree(bool eigensolver);
double default_chebyshev_lower(int degree);
// The precision the polynomial runs in for `requested` (ChebyshevOptions::
// precision) on an operator of `problem` precision that has an fp32 copy
// (the apps'). auto: fp32 for LOBPCG (`eigensolver`) on an fp64 problem, on
// either backend; the problem's own precision otherwise, block CG's included:
// fp32 rounding held block CG near relative residuals of 1e-6 on FEM
// matrices (bcsstk21: 21 -> 61 iterations to 1e-8; docs/benchmarks/preconditioners.md#precision).
Precision chebyshev_precision(ChebyshevPrecision requested, Precision problem, bool eigensolver, Space space);

struct ChebyshevOptions {
  int degree = 0;      // products with A per apply, to max_chebyshev_degree (core/enums.hpp); 0: default
  double lower = 0;    // a = lower * b, in (0, 1); 0: default_chebyshev_lower(degree)
  bool jacobi = true;  // polynomial in D^{-1/2} A D^{-1/2} (D = |diag A|)
  SpectrumEnd end = SpectrumEnd::smallest;  // the end p(B) amplifies (block CG: smallest)
  bool eigensolver = true;                  // serves LOBPCG (else block CG): sets the default degree
  double safety = 1.1;                      // b = safety x the power method's estimate, which is a lower bound
  int power_steps = 30;                     // products (one column) of each power-method estimate
  std::uint64_t seed = 7;                   // of the power method's start vector
  // fp32 for an fp64 operator needs one with an fp32 copy (the distributed
  // operator); fp64 needs an fp64 operator. auto: chebyshev_precision, fp64
  // where the operator has no fp32 copy.
  ChebyshevPrecision precision = ChebyshevPrecision::automatic;
};

// The interval p was built for, in terms of B = shift I + sign S.
struct ChebyshevInterval {
  double a = 0, b = 0;
  double shift = 0;          // 0 for the smallest end
  int sign = 1;              // +1 smallest end, -1 largest
  double norm_estimate = 0;  // the power method's ||S||
};

template <class T>
class ChebyshevPreconditioner final : public Preconditioner<T> {
 public:
  // Collective over A.comm(): 30 single-column products (fp64) for the
  // smallest end, 60 for the largest. InputError (on every rank) for options
  // out of range, a zero operator, (jacobi) a zero diagonal entry, or a
  // precision the operator cannot give. Keeps a reference to A.
  ChebyshevPreconditioner(LinearOperator<T>& A, const ChebyshevOptions& options);

  // W = M R. Collective.
  void apply(dense::ConstDenseView<T> R, dense::DenseView<T> W) override;
  PreconditionerWork work() override;

  // For the memory plan, on an operator with an fp32 copy in `space`: the
  // scratch blocks (Q and E, and in fp32 the sum W), with jacobi: true the
  // two diagonals, in the polynomial's precision, and in fp32 the rounded
  // operator's values.
  static PreconditionerMemory memory(const ChebyshevOptions& options, Space space);

  int degree() const { return degree_; }
  const ChebyshevInterval& interval() const { return interval_; }
  Precision precision() const { return rounded_ ? Precision::fp32 : precision_of<T>(); }

 private:
  // The recurrence in U: its operator, diagonals and scratch blocks.
  // Complex values: a real polynomial of the Hermitian operator, its coefficients and diagonals real.
  template <class U>
  struct Polynomial {
    LinearOperator<U>* A = nullptr;
    dense::Buffer<real_t<U>> dinv, diag;  // |d_i|^{-1} and |d_i| (jacobi), local rows, in A's space
    dense::Buffer<U> Q, E, W;             // the scaled residual, the step and (U not T) the sum; grown on demand
  };
  template <class U>
  void run(Polynomial<U>& p, dense::ConstDenseView<T> R, dense::DenseView<T> W);
  double halo_seconds() const;

  LinearOperator<T>& A_;
  const dense::Context& context_;
  int degree_ = 0;
  ChebyshevInterval interval_;
  std::unique_ptr<LinearOperator<single_t<T>>> rounded_;  // A in fp32, for an fp64 A with an fp32 polynomial
  Polynomial<T> same_;                                    // the polynomial in T (unless rounded_)
  Polynomial<single_t<T>> single_;                        // in fp32 over rounded_
  PhaseTimer clock_;
  double elementwise_ = 0;  // the passes' time (charged to the caller's preconditioner phase)
  double idle_ = 0;         // between applies
  PreconditionerWork work_;
};

}  // namespace blockeigs::solver
