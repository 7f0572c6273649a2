// Block operations for LOBPCG's residual block Z held in a lower precision
// than the basis (LobpcgOptions::search_precision): Z in fp32 beside fp64
// [X P], A [X P] and A Z. Z is a search direction only: its rounding
// perturbs W as a preconditioner would, while A Z is formed in fp64 from the
// stored Z, so A S stays consistent with S (docs/benchmarks/solvers.md#search-precision).
// The pass that matters a step reads 20 of its 180 columns in half the
// bytes and writes 20 more so.
//
// Each operation takes the device kernels' mixed path where they have one,
// and otherwise converts the fp32 views to fp64 in temporary blocks and
// calls the fp64 operation (the host backend, shapes past the kernels): the
// same results as the fp64 operations on the stored (rounded) values.
#pragma once

#include <functional>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/lobpcg/ritz_update.hpp"

namespace blockeigs::solver {

// ritz_update with S's tail (Z) and the residuals R in fp32: the update sums
// in fp64 and rounds R once, as it stores it; the norms are those of the
// fp64 residuals. With `implied_ax` the residuals it names are read from
// S's fp32 tail.
ResidualNorms ritz_update(const dense::Context& context, MPI_Comm comm, const SplitColumns<double, float>& S,
                          const SplitColumns<double>& AS, const HostMatrix& C, const std::vector<double>& lambda,
                          dense::DenseView<double> Y, dense::DenseView<double> AY, dense::DenseView<float> R,
                          const std::vector<std::int64_t>& r_position = {}, const std::function<void()>& meanwhile = {},
                          const ImpliedAX* implied_ax = nullptr, bool store_ax = true);

// Whether the device takes LOBPCG's step with Z in fp32 without conversions:
// the mixed Ritz update (A X implied, S of ns columns, A S of nv, m outputs,
// nb residuals) and the mixed Gram pair over [X P Z] and [Z A Z].
bool search_single_kernels_fit(const dense::Context& context, std::int64_t ns, std::int64_t nv, std::int64_t m,
                               std::int64_t nb);
// Whether those kernels make the step faster than the fp64 ones on this
// device (the host never takes them): they read fewer bytes and issue more
// instructions, which pays only where memory is slow against the SMs, below
// ~15 bytes an SM cycle (an H100, not an H200).
bool search_single_pays(const dense::Context& context);
// The device's peak memory rate in bytes per SM clock cycle, from its
// attributes; 0 on the host or where the driver does not report them.
double memory_bytes_per_sm_cycle(const dense::Context& context);

}  // namespace blockeigs::solver
