// LOBPCG's fused device reductions: the Ritz update with its residuals'
// sums in one pass (ritz_update.cu's kernels) and the Gram pair with an fp32
// tail (tall_skinny_gram.cu's), their sums delivered through pinned memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/blocks/cuda/device_support.cuh"
#include "solver/blocks/cuda/narrow_block_kernels.hpp"
#include "solver/blocks/cuda/pinned_sums.cuh"
#include "solver/blocks/cuda/tall_skinny_gram.hpp"
#include "spmm/cuda/cuda_check.hpp"

namespace blockeigs::solver::device_ops {

using namespace support;

template <class Ts>
bool ritz_update_local(const dense::Context& context, dense::ConstDenseView<double> S, dense::ConstDenseView<Ts> S_tail,
                       dense::ConstDenseView<double> AS, dense::ConstDenseView<double> AS_tail, const double* C,
                       const double* lambda, dense::DenseView<double> Y, dense::DenseView<double> AY,
                       dense::DenseView<Ts> R, const std::int64_t* position, std::int64_t ay_first,
                       const double* implied_theta, const std::int64_t* implied_column,
                       std::unique_ptr<LocalGramTransfer>& out) {
  constexpr bool single = std::is_same_v<Ts, float>;
  const std::int64_t nb = R.cols;
  const bool implied = implied_theta != nullptr;
  out.reset();
  const std::int64_t ns = S.cols + S_tail.cols, nv = AS.cols + AS_tail.cols;
  if (single ? !implied || S_tail.cols == 0 || !cuda::ritz_update_single_fits(ns, nv, Y.cols, nb)
             : !cuda::ritz_update_fits(ns, nv, Y.cols, nb, implied))
    return false;
  // The kernels address rows in 32 bits (row index, row stride in bytes).
  constexpr std::int64_t most = std::numeric_limits<std::int32_t>::max();
  if (S.rows > most || std::max({S.ld, AS.ld, AS_tail.ld}) > most / std::int64_t(sizeof(double)) ||
      S_tail.ld > most / std::int64_t(sizeof(Ts)))
    return false;
  if (S.rows == 0) return true;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t blocks =
      cuda::ritz_update_blocks(S.rows, ns, nv, Y.cols, implied ? nb : 0, single ? S_tail.cols : 0);
  StreamArray<double> partial(stream, static_cast<std::size_t>(blocks * 2 * nb));
  cuda::RitzUpdateArgs a{};
  a.rows = S.rows;
  a.ns = int(ns);
  a.ns_head = int(S.cols);
  a.nv = int(nv);
  a.nv_head = int(AS.cols);
  a.m = int(Y.cols);
  a.nb = int(nb);
  a.ay_first = int(ay_first);
  a.s = S.data;
  a.lds = S.ld;
  a.lds_tail = S_tail.cols > 0 ? S_tail.ld : S.ld;
  a.as = AS.data;
  a.ldas = AS.ld;
  a.as_tail = AS_tail.cols > 0 ? AS_tail.data : AS.data;
  a.ldas_tail = AS_tail.cols > 0 ? AS_tail.ld : AS.ld;
  a.y = Y.data;
  a.ldy = Y.ld;
  a.ay = AY.data;
  a.lday = AY.ld;
  a.ldr = R.ld;
  a.partial = partial.data();
  if constexpr (single) {
    a.s_tail = S.data;  // not read: the tail is at s_tail_single
    a.s_tail_single = S_tail.data;
    a.r_single = R.data;
  } else {
    a.s_tail = S_tail.cols > 0 ? S_tail.data : S.data;
    a.r = R.data;
  }
  const cuda::ImpliedColumns columns{implied_theta, implied_column};
  cuda::ritz_update(a, C, lambda, position, implied ? &columns : nullptr, stream);
  out = std::make_unique<PinnedGramTransfer>(stream, blocks, 2 * nb, partial.data());
  return true;
}

BLOCKEIGS_DEVICE_RITZ_UPDATES(double, BLOCKEIGS_BACKEND_INSTANTIATE)
BLOCKEIGS_DEVICE_RITZ_UPDATES(float, BLOCKEIGS_BACKEND_INSTANTIATE)

bool ritz_update_implied_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb) {
  return cuda::ritz_update_fits(ns, nv, m, nb, true);
}

bool gram_pair_single_local_start(const dense::Context& context, dense::ConstDenseView<double> X,
                                  dense::ConstDenseView<float> X_tail, dense::ConstDenseView<float> Y1,
                                  dense::ConstDenseView<double> Y2, std::unique_ptr<LocalGramTransfer>& out) {
  out.reset();
  const std::int64_t kx = X.cols + X_tail.cols, ky = Y1.cols + Y2.cols;
  if (X.rows == 0 || kx == 0 || ky == 0) return true;  // an empty product: zeros
  if (!cuda::tall_skinny_gram_single_fits(kx, ky)) return false;
  // The kernel's fp32 path takes rows and strides in bytes in 32 bits.
  constexpr std::int64_t most = std::numeric_limits<std::int32_t>::max();
  if (X.rows > most || std::max({X.ld, Y2.ld}) > most / std::int64_t(sizeof(double)) ||
      std::max(X_tail.ld, Y1.ld) > most / std::int64_t(sizeof(float)))
    return false;
  const cudaStream_t stream = stream_of(context);
  const std::int64_t blocks = cuda::tall_skinny_gram_blocks(X.rows);
  StreamArray<double> partial(stream, static_cast<std::size_t>(blocks * kx * ky));
  const cuda::TallSkinnyGramArgs a{.rows = X.rows,
                                   .kx = int(kx),
                                   .ky1 = int(Y1.cols),
                                   .ky2 = int(Y2.cols),
                                   .x = X.data,
                                   .ldx = X.ld,
                                   .kx_head = int(X.cols),
                                   .x_tail = X.data,
                                   .ldx_tail = X_tail.cols > 0 ? X_tail.ld : 1,
                                   .y1 = X.data,
                                   .ldy1 = Y1.cols > 0 ? Y1.ld : 1,
                                   .y2 = Y2.cols > 0 ? Y2.data : X.data,
                                   .ldy2 = Y2.cols > 0 ? Y2.ld : X.ld,
                                   .partial = partial.data(),
                                   .x_tail_single = X_tail.data,
                                   .y1_single = Y1.data};
  cuda::tall_skinny_gram(a, stream);
  out = std::make_unique<PinnedGramTransfer>(stream, blocks, kx * ky, partial.data());
  return true;
}

bool search_single_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb) {
  // The Ritz update over [X P Z], and the Gram pair [X P Z]^T [Z A Z].
  return cuda::ritz_update_single_fits(ns, nv, m, nb) && cuda::tall_skinny_gram_single_fits(ns, 2 * nb);
}

}  // namespace blockeigs::solver::device_ops
