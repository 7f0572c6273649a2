// The argument checks the SpMM entry points share: C = A B's shapes and the
// blocks' memory space. Internal to spmm/.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "dense/context.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::spmm {

// The rows, columns and space of a block, whatever its layout.
struct BlockShape {
  std::int64_t rows = 0, cols = 0;
  Space space = Space::host;
};

// Throws Error naming `call` unless B is A.cols x n, C is A.rows x n, and A,
// B and C are in the context's memory space.
inline void check_product(const char* call, const dense::Context& context, const CsrView<double>& A, BlockShape B,
                          BlockShape C) {
  if (B.rows != A.cols || C.rows != A.rows || B.cols != C.cols)
    throw Error(std::string(call) + ": A is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ", B " +
                std::to_string(B.rows) + " x " + std::to_string(B.cols) + ", C " + std::to_string(C.rows) + " x " +
                std::to_string(C.cols));
  if (A.space != context.space() || B.space != context.space() || C.space != context.space())
    throw Error(std::string(call) + ": A, B and C must be in the context's memory space");
}

}  // namespace blockeigs::spmm
