// The stored diagonal entries of a square local CSR block: where they are in
// its value array, and those entries set to a diagonal plus a shift
// (DistributedOperator::set_diagonal_shift). Host loops here, their device
// twins in cuda/diagonal_shift.cu (a stub without CUDA).
#pragma once

#include <cstdint>

#include "dense/context.hpp"
#include "spmm/csr.hpp"

namespace blockeigs::solver {

// positions[i] = the index in A's values of A(i, i), -1 where row i stores no
// diagonal entry (positions in A's space, A.rows entries). Returns the count
// of rows without one.
template <class T>
std::int64_t find_diagonal_positions(const spmm::Context& context, const spmm::CsrView<T>& A, std::int64_t* positions);

// values[positions[i]] = diagonal[i] + shift for the rows with a position;
// all arrays in the context's space, `rows` entries of positions and diagonal.
template <class T>
void set_shifted_diagonal(const spmm::Context& context, T* values, const std::int64_t* positions, const T* diagonal,
                          T shift, std::int64_t rows);

namespace cuda {
template <class T>
std::int64_t find_diagonal_positions(const spmm::Context& context, const spmm::CsrView<T>& A, std::int64_t* positions);
template <class T>
void set_shifted_diagonal(const spmm::Context& context, T* values, const std::int64_t* positions, const T* diagonal,
                          T shift, std::int64_t rows);
}  // namespace cuda

}  // namespace blockeigs::solver
