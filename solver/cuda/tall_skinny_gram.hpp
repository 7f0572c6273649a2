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
};

// Up to 96 columns of X and 64 of [Y1 Y2].
bool tall_skinny_gram_fits(std::int64_t kx, std::int64_t ky);
// Depends on the row count only, so that the sums' order does not depend on the GPU.
std::int64_t tall_skinny_gram_blocks(std::int64_t rows);
void tall_skinny_gram(const TallSkinnyGramArgs& args, cudaStream_t stream);

}  // namespace blockeigs::solver::cuda
