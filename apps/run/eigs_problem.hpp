// What block-eigs solves beyond A x = lambda x: B of A x = lambda B x (the
// config's matrix_b) as an operator on A's rows and in A's memory, and the
// constraint block Y (eigensolver.constraints) the eigenvectors are kept
// B-orthogonal to, read and checked in the input's numbering and placed on
// the operator's rows; and how the summary, result files and checkpoints
// name them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/run_config.hpp"
#include "io/hdf5_writer.hpp"
#include "solver/chfsi/chfsi.hpp"
#include "solver/chfsi/eigen_method.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/load_matrix.hpp"
#include "dense/dense.hpp"

namespace blockeigs::apps {

template <class T>
struct EigsProblem {
  std::unique_ptr<solver::DistributedOperator<T>> b;  // null: B = I
  std::string b_source;                               // B's description; empty without one
  std::int64_t b_nnz = 0;
  std::optional<dense::DenseBlock<T>> constraints;  // this rank's rows of Y, in the operator's memory
  std::string constraints_source;                   // "constant" or "y.h5:/Y"; empty without
  std::int64_t constraint_columns = 0;

  bool generalized() const { return b != nullptr; }
};

// Collective; input errors agreed on by every rank. `b` is B's rows as
// load_matrix_b left them (null: none). Y from a file must have the
// matrix's rows and full column rank (its column-scaled Gram matrix's
// condition below 1e10); `constant` is the all-ones vector.
template <class T>
EigsProblem<T> set_up_problem(const cfg::EigsConfig& config, const solver::DistributedRows& a,
                              const solver::DistributedRows* b, const dense::Context& context, MPI_Comm comm);

// "A x = λ B x" or "A x = λ x".
std::string equation(bool generalized);

// The eigensolver the run takes (eigensolver.method; `auto` by its rule,
// solver::choose_eigen_method), and the block it works on (eigensolver.block_size,
// or the method's default for k and the matrix's rows).
solver::MethodChoice eigen_method(const cfg::EigsConfig& config, bool complex = false);
int eigen_block_size(const cfg::EigsConfig& config, const solver::MethodChoice& method, std::int64_t global_rows);

// The summary's lines about B and Y (empty for neither), rank 0's.
template <class T>
std::string problem_summary(const EigsProblem<T>& problem);

// Root attributes of a result file or checkpoint (rank 0 writes them):
// problem ("standard" or "generalized"), matrix (A's source), matrix_b (B's),
// eigenvectors ("orthonormal" or "B-orthonormal"), constraints (their source)
// and constraint_columns.
template <class T>
void write_problem_attributes(io::Hdf5Writer& writer, const EigsProblem<T>& problem, const std::string& matrix);

// resume: a checkpoint of the other problem (standard against generalized)
// is refused, naming both; one whose B came from another source gets a note.
// Collective.
void check_resume_problem(const std::string& checkpoint, bool generalized, const std::string& b_source, MPI_Comm comm);

}  // namespace blockeigs::apps
