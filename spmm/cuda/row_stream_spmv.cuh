// Row-split's n = 1 body for skewed rows and scattered columns: blocks of
// consecutive rows with up to row_stream_tile nonzeros (1536 in fp32, 1024 in
// fp64), streamed through shared memory (CSR-stream, as in Greathouse and
// Daga's CSR-Adaptive, SC14). A block's threads load its nonzeros coalesced,
// a few each, and store their products; then groups of lanes add each row's
// products. Rows longer than row_stream_long_row get a block of their own,
// whose threads stride over the row and add by a fixed tree; rows longer than
// row_stream_piece are cut into pieces, a block each, whose partial sums a
// second kernel adds in a fixed order. No atomics: deterministic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "spmm/cuda/row_stream_blocks.hpp"
#include "spmm/cuda/spmm_group.cuh"
#include "dense/memory.hpp"

namespace blockeigs::spmm::cuda::detail {

// The layout of one matrix on the device (row_stream_layout), and the
// partial sums of its split rows' pieces.
template <class T>
class RowStreamSpmv {
 public:
  RowStreamSpmv() = default;
  explicit RowStreamSpmv(const RowStreamLayout& layout);

  // C = alpha * A * B + beta * C for one column (args.n == 1), alpha != 0.
  void multiply(const SpmmArgs<T>& args, cudaStream_t stream);

 private:
  std::int64_t blocks_ = 0, pieces_ = 0, split_rows_ = 0;
  dense::Buffer<std::int32_t> block_rows_, piece_rows_, piece_begins_, piece_order_, split_rows_list_,
      split_first_piece_;
  dense::Buffer<T> partials_;
};

}  // namespace blockeigs::spmm::cuda::detail
