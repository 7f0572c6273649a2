#include "solver/operator/load_matrix_b.hpp"

#include <complex>
#include <utility>

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs::solver {

template <class Rows>
void check_positive_diagonal(MPI_Comm comm, const Rows& rows, const std::string& what) {
  collectively(comm, [&] {
    for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
      const std::int64_t row = rows.first_row + i;
      double diagonal = 0;  // its real part: a Hermitian B's diagonal is real (check_hermitian)
      bool stored = false;
      for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
        if (rows.col_indices[k] == row) {
          diagonal += std::real(rows.values[k]);
          stored = true;
        }
      if (diagonal > 0) continue;
      fail_input(what, ": B(", row, ", ", row, ") = ", diagonal, stored ? "" : " (not stored)",
                 " (zero-based): B of A x = lambda B x must be positive definite, and a positive definite matrix "
                 "has a positive diagonal");
    }
  });
}
template void check_positive_diagonal(MPI_Comm, const CsrRows&, const std::string&);
template void check_positive_diagonal(MPI_Comm, const ComplexCsrRows&, const std::string&);

DistributedRows place_b_like_a(DistributedRows b, const DistributedRows& a, MPI_Comm comm, const std::string& what) {
  b.with_rows([&](const auto& rows) { check_positive_diagonal(comm, rows, what); });
  if (a.complex) widen_to_complex(b);
  distribute_like(b, a, comm);
  return b;
}

DistributedRows load_matrix_b(const io::MatrixConfig& config, const DistributedRows& a, MPI_Comm comm,
                              const dense::Context* context) {
  DistributedRows b = load_distributed_rows_like(config, a.numbering.original(), "matrix_b", comm,
                                                 a.complex ? Values::real_or_complex : Values::real_only);
  const std::string what = "matrix_b: " + b.description;
  // A complex B, or a real one beside a complex A, is checked as read, in the input's numbering (as A is);
  // a real one beside a real A after the move below.
  if (!b.symmetric_by_construction && b.complex) check_hermitian(comm, b.complex_rows, b.partition, what, context, "B");
  if (!b.symmetric_by_construction && !b.complex && a.complex)
    check_symmetric(comm, b.rows, b.partition, what, "B", nullptr, context);
  const bool check_after_move = !b.symmetric_by_construction && !b.complex && !a.complex;
  b = place_b_like_a(std::move(b), a, comm, what);
  // On A's rows: where A's were partitioned, most of a row's partners are then on its rank.
  if (check_after_move) check_symmetric(comm, b.rows, b.partition, what, "B", &b.numbering, context);
  return b;
}

}  // namespace blockeigs::solver
