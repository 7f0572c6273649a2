// B of A x = lambda B x (the config's matrix_b section) on A's rows: read
// in A's input partition, checked, then moved and renumbered exactly as A's
// rows were (execution.partition), so that an operator built from it has
// A's row ranges on every rank. Collective; errors agreed on by every rank.
#pragma once

#include <mpi.h>

#include <string>

#include "io/matrix_config.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/load_matrix.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver {

// `a` is A as load_symmetric_matrix / distribute_rows left it. B must be
// square, of A's size, symmetric (checked unless so by construction; Hermitian
// where it holds complex values, which a real A refuses; a real B beside a
// complex A is held as complex) and
// have a positive diagonal (the cheap necessary condition for positive
// definiteness); each failure is an InputError naming matrix_b and B's
// source. The result has a's partition, numbering and partition report.
// `context`, where given, lends its device to the symmetry check.
DistributedRows load_matrix_b(const io::MatrixConfig& config, const DistributedRows& a, MPI_Comm comm,
                              const dense::Context* context = nullptr);

// B's rows on A's input partition (a real B, or a complex one beside a complex
// A), put on A's rows as A's were moved and renumbered: its diagonal checked
// positive (`what` names B in the message), a real B beside a complex A held
// as complex. The apps' load_matrix_b and Python's B both end here. Collective.
DistributedRows place_b_like_a(DistributedRows b, const DistributedRows& a, MPI_Comm comm, const std::string& what);

// InputError (agreed) naming `what` and the first row (zero-based, the rows'
// numbering) whose diagonal entry is zero, negative or not stored (its real
// part, for complex rows): a positive definite matrix has a positive
// diagonal. Collective.
template <class Rows>
void check_positive_diagonal(MPI_Comm comm, const Rows& rows, const std::string& what);

}  // namespace blockeigs::solver
