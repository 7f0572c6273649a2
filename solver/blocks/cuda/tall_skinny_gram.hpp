// X^T [Y1 Y2] for tall row-major fp64 blocks in one pass on the tensor cores
// (tall_skinny_gram.cu): LOBPCG's [X P Z]^T [Z A Z], W's Gram matrix and
// S^T A Z, read [X P Z] once instead of twice. X may come in two views. Used by
// block_reductions_cuda.cu where the shape fits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace blockeigs::solver::cuda {

struct TallSkinnyGramArgs {
  std::int64_t rows;
  int kx, ky1, ky2;  // columns of X, Y1 and Y2 (Y2 may have none)
  const double* x;
  std::int64_t ldx;
  // X in two views (LOBPCG's [X P] and its compact Z): columns from kx_head
  // on at x_tail + (column - kx_head); kx_head = kx for one view.
  int kx_head;
  const double* x_tail;
  std::int64_t ldx_tail;
  const double* y1;
  std::int64_t ldy1;
  const double* y2;
  std::int64_t ldy2;
  // tall_skinny_gram_blocks(rows) partial sums, each kx x (ky1 + ky2)
  // row-major: add them in order for the product.
  double* partial;
  // LOBPCG's residual block in fp32 (search_block_ops.hpp; the narrow
  // variant only): X's tail at x_tail_single (ld ldx_tail) and Y1 at
  // y1_single (ld ldy1) instead of x_tail and y1. Their rows are staged as
  // they are and widened in shared memory by the thread that copied them.
  const float* x_tail_single = nullptr;
  const float* y1_single = nullptr;
};

// Up to 96 columns of X and 64 of [Y1 Y2].
bool tall_skinny_gram_fits(std::int64_t kx, std::int64_t ky);
// With X's tail and Y1 in fp32: up to 64 columns of X and 40 of [Y1 Y2].
bool tall_skinny_gram_single_fits(std::int64_t kx, std::int64_t ky);
// Depends on the row count only, so that the sums' order does not depend on the GPU.
std::int64_t tall_skinny_gram_blocks(std::int64_t rows);
void tall_skinny_gram(const TallSkinnyGramArgs& args, cudaStream_t stream);

}  // namespace blockeigs::solver::cuda
