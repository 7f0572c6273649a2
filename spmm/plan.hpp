// spmm::Plan: built once per local matrix (algorithm choice per block width,
// partition and library buffers), reused for every multiply.
//
//   spmm::Plan<double> plan(context, A.view(), Algorithm::automatic);
//   plan.multiply(1.0, B.view(), 0.0, C.view());   // C = A B
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "core/enums.hpp"
#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "dense/dense.hpp"

namespace blockeigs::spmm {

// Widest block for which Plan tabulates its choice; wider blocks use the
// choice for this width.
inline constexpr std::int64_t max_tabulated_width = 256;

template <class T>
class Plan {
 public:
  // `A` must live in context.space() and outlive the plan. Throws when the
  // algorithm cannot run in that space (e.g. row_split on the host).
  Plan(const dense::Context& context, const CsrView<T>& A, Algorithm algorithm = Algorithm::automatic);
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  // The algorithm that runs for a block of n columns (never `automatic`).
  Algorithm algorithm_for(std::int64_t n) const;
  // Columns multiplied at once for a block of n columns: n, or for
  // `automatic` on the device a narrower slab where B's band of rows in use
  // would not fit in L2 (spmm/heuristic.hpp, column_slab); the block
  // then runs in slabs of about that width, each reading A again.
  std::int64_t column_slab(std::int64_t n) const;
  Algorithm requested_algorithm() const;
  const CsrView<T>& matrix() const;

  // C = alpha * A * B + beta * C (BLAS semantics; beta == 0 never reads C).
  // B and C must be in the plan's space with matching shapes.
  void multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class T>
void multiply(Plan<T>& plan, T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) {
  plan.multiply(alpha, B, beta, C);
}

// Algorithms that can run in `space` in this build (automatic excluded).
bool algorithm_available(Algorithm algorithm, Space space);

}  // namespace blockeigs::spmm
