// The block update on narrow blocks (up to 64 input and 16 output columns,
// 48 in fp64, millions of rows), in place or into a new block in one pass, which cuBLAS
// cannot do: the changes of basis after SVQB, LOBPCG's projection and
// transform of W, block CG's new search blocks (row_group_update.cu). Used by
// block_ops_cuda.cu when the shape fits; cuBLAS (with a scratch block)
// otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace blockeigs::solver::cuda {

// Whether the kernels below take k1 input and k2 output columns (any leading
// dimensions and column offsets): up to 64 inputs, and 16 outputs
// (row_group_update.cu), or 48 in fp64 (dmma_update.cu, tensor cores).
template <class T>
bool narrow_update_fits(std::int64_t k1, std::int64_t k2);

// Whether the row-group kernel alone takes the shape (up to 64 inputs and 16
// outputs, any type). Beyond it, out of place, cuBLAS is as fast as the
// tensor-core kernel; in place, where cuBLAS needs a scratch block and a copy,
// the kernel is faster (docs/benchmarks/block-ops.md#narrow-updates).
bool row_group_update_fits(std::int64_t k1, std::int64_t k2);

// The fp64 tensor-core kernel behind narrow_update for 17 to 48 outputs.
bool dmma_update_fits(std::int64_t k1, std::int64_t k2);
void dmma_update(std::int64_t rows, std::int64_t k1x, std::int64_t k1, std::int64_t k2, double alpha, const double* x,
                 std::int64_t ldx, const double* x2, std::int64_t ldx2, const double* s, double beta, const double* z,
                 std::int64_t ldz, double* y, std::int64_t ldy, cudaStream_t stream);

// LOBPCG's Ritz update and next residuals in one pass (ritz_update.cu):
// Y = S C, AY = AS C (C: ns x m row-major on the host, passed by value, or
// copied to the device past 64 inputs or 48 outputs; at most 96 and 64),
// R = AY(:, 0:nb) - Y(:, 0:nb) diag(lambda), and per thread block the sums of
// squares of R's columns then of Y(:, 0:nb)'s (2 nb values per block, for
// ritz_update_blocks(rows, ns, nv, m, implied nb or 0) blocks). AY's columns
// below ay_first are not written. Y, AY and R must not overlap S or AS.
//
// AS has nv <= ns columns (C's rows past nv multiply S alone). With
// `implied` (the staged kernel only), AS's first nb columns are not read:
// A X(:, j) = theta[j] S(:, j) + S(:, column[j]) is formed in its place.
struct RitzUpdateArgs {
  std::int64_t rows;
  int ns, m, nb;
  int ns_head = 0;  // S's columns: [0, ns_head) in s, the rest in s_tail
  int nv = 0;       // AS's columns: [0, nv_head) in as, the rest in as_tail
  int nv_head = 0;
  int ay_first = 0;    // AY's first column written
  int implied_nb = 0;  // set by ritz_update: nb with A X implied, else 0
  int k_steps = 0;     // set by ritz_update
  const double* s;
  std::int64_t lds;
  const double* s_tail;  // S(:, ns_head + j) at s_tail + j (LOBPCG's compact Z)
  std::int64_t lds_tail;
  const double* as;
  std::int64_t ldas;
  const double* as_tail;  // AS(:, nv_head + j) at as_tail + j (LOBPCG's compact A Z)
  std::int64_t ldas_tail;
  double* y;
  std::int64_t ldy;
  double* ay;
  std::int64_t lday;
  double* r;
  std::int64_t ldr;
  double* partial;
  // LOBPCG's residual block in fp32 (search_block_ops.hpp; the staged kernel
  // only): S's tail at s_tail_single (ld lds_tail) and R at r_single (ld
  // ldr) instead of s_tail and r. The tail's rows are staged as they are and
  // widened in shared memory by the lane that copied them.
  const float* s_tail_single = nullptr;
  float* r_single = nullptr;
};
struct ImpliedColumns {
  const double* theta;         // nb values
  const std::int64_t* column;  // nb columns of S
};
bool ritz_update_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb, bool implied);
// Whether the staged kernel takes the shape with S's tail and R in fp32.
bool ritz_update_single_fits(std::int64_t ns, std::int64_t nv, std::int64_t m, std::int64_t nb);
std::int64_t ritz_update_blocks(std::int64_t rows, std::int64_t ns, std::int64_t nv, std::int64_t m,
                                std::int64_t implied_nb, std::int64_t tail_floats = 0);
// position (host, nb entries): R's column for residual j.
void ritz_update(RitzUpdateArgs args, const double* c, const double* lambda, const std::int64_t* position,
                 const ImpliedColumns* implied, cudaStream_t stream);

// Y = alpha * X * S + beta * Z (beta == 0: Z is not read), S k1 x k2 row-major
// on the host (passed to the kernel by value). Y may overlap X and Z in any
// columns of the same rows (in place: Y = X with k2 <= k1).
template <class T>
void narrow_update(std::int64_t rows, std::int64_t k1, std::int64_t k2, T alpha, const T* x, std::int64_t ldx,
                   const double* s, T beta, const T* z, std::int64_t ldz, T* y, std::int64_t ldy, cudaStream_t stream);

// Y = [X1 X2] S (X1: k1a columns, X2: k1b, S: (k1a + k1b) x k2 row-major on
// the host), in one pass. All three may be views of one buffer whose columns
// overlap in any way: a row of X1 and X2 is wholly read before that row of Y
// is written.
template <class T>
void narrow_update_pair(std::int64_t rows, std::int64_t k1a, const T* x1, std::int64_t ldx1, std::int64_t k1b,
                        const T* x2, std::int64_t ldx2, std::int64_t k2, const double* s, T* y, std::int64_t ldy,
                        cudaStream_t stream);

}  // namespace blockeigs::solver::cuda
