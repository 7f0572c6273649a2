#include "solver/operator/diagonal_shift.hpp"

namespace blockeigs::solver {

template <class T>
std::int64_t find_diagonal_positions(const spmm::Context& context, const spmm::CsrView<T>& A, std::int64_t* positions) {
  if (A.space == Space::device) return cuda::find_diagonal_positions(context, A, positions);
  std::int64_t missing = 0;
#pragma omp parallel for reduction(+ : missing) schedule(static)
  for (std::int64_t i = 0; i < A.rows; ++i) {
    positions[i] = -1;
    for (std::int32_t p = A.row_offsets[i]; p < A.row_offsets[i + 1]; ++p)
      if (A.col_indices[p] == i) positions[i] = p;
    missing += positions[i] < 0 ? 1 : 0;
  }
  return missing;
}

template <class T>
void set_shifted_diagonal(const spmm::Context& context, T* values, const std::int64_t* positions, const T* diagonal,
                          T shift, std::int64_t rows) {
  if (context.space() == Space::device)
    return cuda::set_shifted_diagonal(context, values, positions, diagonal, shift, rows);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows; ++i)
    if (positions[i] >= 0) values[positions[i]] = diagonal[i] + shift;
}

template std::int64_t find_diagonal_positions(const spmm::Context&, const spmm::CsrView<float>&, std::int64_t*);
template std::int64_t find_diagonal_positions(const spmm::Context&, const spmm::CsrView<double>&, std::int64_t*);
template void set_shifted_diagonal(const spmm::Context&, float*, const std::int64_t*, const float*, float,
                                   std::int64_t);
template void set_shifted_diagonal(const spmm::Context&, double*, const std::int64_t*, const double*, double,
                                   std::int64_t);

}  // namespace blockeigs::solver
