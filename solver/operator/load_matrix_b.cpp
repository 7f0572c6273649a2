#include "solver/operator/load_matrix_b.hpp"

#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/distribute_rows.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs::solver {

void check_positive_diagonal(MPI_Comm comm, const CsrRows& rows, const std::string& what) {
  collectively(comm, [&] {
    for (std::int64_t i = 0; i < rows.local_rows(); ++i) {
      const std::int64_t row = rows.first_row + i;
      double diagonal = 0;
      bool stored = false;
      for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
        if (rows.col_indices[k] == row) {
          diagonal += rows.values[k];
          stored = true;
        }
      if (diagonal > 0) continue;
      fail_input(what, ": B(", row, ", ", row, ") = ", diagonal, stored ? "" : " (not stored)",
                 " (zero-based): B of A x = lambda B x must be positive definite, and a positive definite matrix "
                 "has a positive diagonal");
    }
  });
}

DistributedRows load_matrix_b(const io::MatrixConfig& config, const DistributedRows& a, MPI_Comm comm,
                              const dense::Context* context) {
  DistributedRows b = load_distributed_rows_like(config, a.numbering.original(), "matrix_b", comm);
  const std::string what = "matrix_b: " + b.description;
  check_positive_diagonal(comm, b.rows, what);
  distribute_like(b, a, comm);
  // On A's rows: where A's were partitioned, most of a row's partners are then on its rank.
  if (!b.symmetric_by_construction) check_symmetric(comm, b.rows, b.partition, what, "B", &b.numbering, context);
  return b;
}

}  // namespace blockeigs::solver
