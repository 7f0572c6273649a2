#include "solver/blocks/norm_estimate.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

template <class T>
double power_norm_estimate(LinearOperator<T>& A, MPI_Comm comm, int steps, std::uint64_t seed) {
  const dense::Context& ctx = A.context();
  const std::int64_t n = A.local_rows();
  dense::DenseBlock<T> v(ctx.space(), n, 1), w(ctx.space(), n, 1);
  fill_random(ctx, v.view(), seed, A.first_row());
  double norm = column_norms(ctx, comm, v.cview())[0];
  double estimate = 0;
  for (int step = 0; step < steps && norm > 0; ++step) {
    scale_columns(ctx, std::vector<double>{1.0 / norm}, v.view());
    A.apply(T(1), v.cview(), T(0), w.view());
    norm = column_norms(ctx, comm, w.cview())[0];
    estimate = std::max(estimate, norm);
    std::swap(v, w);
  }
  return estimate;
}

#define BLOCKEIGS_NORM_ESTIMATE(T) \
  template double power_norm_estimate(LinearOperator<T>&, MPI_Comm, int, std::uint64_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_NORM_ESTIMATE)
#undef BLOCKEIGS_NORM_ESTIMATE

}  // namespace blockeigs::solver
