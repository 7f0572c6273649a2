#include "apps/run/eigs_problem.hpp"

#include <complex>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "apps/environment.hpp"
#include "apps/run/steps/host_rows.hpp"
#include "apps/run/steps/scientific.hpp"
#include "core/checks.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/blocks/symmetric_eigen.hpp"
#include "solver/base/collective.hpp"

namespace blockeigs::apps {
namespace {

// Y's columns count as dependent where the Gram matrix of the columns scaled
// to unit norm has a condition above this (Y's own above 1e5): projecting
// against them would lose half the digits fp64 has.
constexpr double kConstraintGramCondition = 1e10;

std::int64_t local_rows_of(const solver::DistributedRows& a) {
  return a.with_rows([](const auto& rows) { return rows.local_rows(); });
}

// eigensolver.constraints as this rank's rows (the operator's numbering), host doubles; complex ones too where
// A is complex. Collective.
io::DenseRows read_constraints(const cfg::EigensolverSettings& e, const solver::DistributedRows& a, MPI_Comm comm) {
  if (e.constraints == cfg::ConstraintsSource::constant) {
    io::DenseRows ones;
    ones.global_rows = a.partition.global_rows();
    ones.cols = 1;
    ones.values.assign(static_cast<std::size_t>(local_rows_of(a)), 1.0);
    return ones;
  }
  try {
    return read_dense_rows(e.constraints_file, e.constraints_dataset, a.numbering, comm,
                           a.complex ? io::DenseValues::real_or_complex : io::DenseValues::real_only);
  } catch (const solver::AgreedError& error) {  // every rank has it: name the key on every rank
    throw solver::AgreedError("eigensolver.constraints: " + std::string(error.what()), error.is_input_error());
  }
}

// Full column rank, judged on the column-scaled Gram matrix (Y^H Y for complex columns; the same bits on every
// rank: block_ops' reductions are deterministic). Collective.
template <class S>
void check_full_column_rank_of(const io::DenseRows& y, const std::string& what, MPI_Comm comm) {
  const std::int64_t m = y.cols;
  const std::int64_t rows = m > 0 ? static_cast<std::int64_t>(y.values.size()) / y.doubles_per_row() : 0;
  const dense::ConstDenseView<S> view{Space::host, rows, m, m, reinterpret_cast<const S*>(y.values.data())};
  const solver::PrivateComm reduce(comm);
  const solver::HostMatrixOf<S> gram = solver::gram<S>(dense::Context::host(), reduce.get(), view);
  solver::HostMatrixOf<S> scaled(m, m);
  for (std::int64_t j = 0; j < m; ++j)
    if (!(std::real(gram(j, j)) > 0))
      solver::fail_input_everywhere(what, ": column ", j, " is zero: the constraints must have full column rank");
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      scaled(i, j) = gram(i, j) / std::sqrt(std::real(gram(i, i)) * std::real(gram(j, j)));
  const solver::EigenOf<S> eigen = solver::small_eigen(scaled, 0, 1);
  const double lowest = eigen.values.front(), highest = eigen.values.back();
  if (lowest > highest / kConstraintGramCondition) return;
  // The nearly vanishing combination: the columns with the largest weights in it.
  double largest = 0;
  for (std::int64_t j = 0; j < m; ++j) largest = std::max(largest, std::abs(eigen.vectors(j, 0)));
  std::string columns;
  for (std::int64_t j = 0; j < m; ++j)
    if (std::abs(eigen.vectors(j, 0)) >= 0.1 * largest) columns += (columns.empty() ? "" : ", ") + std::to_string(j);
  std::ostringstream condition;
  if (lowest > 0)
    condition << "has condition " << scientific(highest / lowest, 2);
  else
    condition << "is singular to working precision";
  solver::fail_input_everywhere(what, ": the ", m,
                                " columns are linearly dependent: the Gram matrix of the columns "
                                "scaled to unit norm ",
                                condition.str(), " (at most ", scientific(kConstraintGramCondition, 0),
                                " is accepted), and a combination of columns ", columns,
                                " nearly vanishes; the constraints must have full column rank");
}

void check_full_column_rank(const io::DenseRows& y, const std::string& what, MPI_Comm comm) {
  if (y.complex)
    check_full_column_rank_of<std::complex<double>>(y, what, comm);
  else
    check_full_column_rank_of<double>(y, what, comm);
}

}  // namespace

std::string equation(bool generalized) { return generalized ? "A x = \u03bb B x" : "A x = \u03bb x"; }

solver::MethodChoice eigen_method(const cfg::EigsConfig& config, bool complex) {
  const cfg::EigensolverSettings& e = config.eigensolver;
  return solver::choose_eigen_method(e.method, e.lobpcg.k, config.matrix_b.has_value(),
                                     e.constraints != cfg::ConstraintsSource::none,
                                     solver::names_a_preconditioner(e.preconditioner), complex);
}

int eigen_block_size(const cfg::EigsConfig& config, const solver::MethodChoice& method, std::int64_t global_rows) {
  const solver::LobpcgOptions& o = config.eigensolver.lobpcg;
  if (o.block_size > 0) return o.block_size;
  return method.method == solver::EigenMethod::chebyshev_filter ? solver::default_filter_block_size(o.k, global_rows)
                                                                : solver::default_block_size(o.k, global_rows);
}

namespace {

template <class T>
EigsProblem<T> build_problem(const cfg::EigsConfig& config, const solver::DistributedRows& a,
                             const solver::DistributedRows* b, const dense::Context& context, MPI_Comm comm) {
  EigsProblem<T> problem;
  if (b) {
    problem.b = std::make_unique<solver::DistributedOperator<T>>(
        comm, context, b->rows_for<T>(), b->partition, config.execution.spmm_algorithm, config.execution.halo);
    problem.b_source = b->description;
    problem.b_nnz = b->global_nnz;
  }
  const cfg::EigensolverSettings& e = config.eigensolver;
  if (e.constraints == cfg::ConstraintsSource::none) return problem;
  problem.constraints_source =
      e.constraints == cfg::ConstraintsSource::constant ? "constant" : e.constraints_file + ":" + e.constraints_dataset;
  const io::DenseRows y = read_constraints(e, a, comm);
  const std::string what = "eigensolver.constraints: " + problem.constraints_source;
  const std::int64_t rows = a.partition.global_rows();
  if (e.lobpcg.k + y.cols >= rows)
    solver::fail_input_everywhere(what, " has ", y.cols, " column", y.cols == 1 ? "" : "s", " and eigensolver.k is ",
                                  e.lobpcg.k, ": together they must be below the matrix's ", rows, " rows");
  check_full_column_rank(y, what, comm);
  problem.constraint_columns = y.cols;
  problem.constraints.emplace(from_dense_rows<T>(context.space(), local_rows_of(a), y));
  return problem;
}

}  // namespace

template <class T>
EigsProblem<T> set_up_problem(const cfg::EigsConfig& config, const solver::DistributedRows& a,
                              const solver::DistributedRows* b, const dense::Context& context, MPI_Comm comm) {
  return build_problem<T>(config, a, b, context, comm);
}

template <class T>
std::string problem_summary(const EigsProblem<T>& p) {
  if (!p.generalized() && p.constraint_columns == 0) return {};
  std::ostringstream out;
  out << "problem    " << equation(p.generalized());
  if (p.generalized()) out << ", B: " << p.b_source << ", " << p.b_nnz << " nonzeros; eigenvectors B-orthonormal";
  if (p.constraint_columns > 0)
    out << "; eigenvectors " << (p.generalized() ? "B-orthogonal" : "orthogonal") << " to " << p.constraint_columns
        << " constraint column" << (p.constraint_columns == 1 ? "" : "s") << " (" << p.constraints_source << ")";
  out << "\n";
  return out.str();
}

template <class T>
void write_problem_attributes(io::Hdf5Writer& w, const EigsProblem<T>& p, const std::string& matrix) {
  w.attribute("/", "problem", std::string(p.generalized() ? "generalized" : "standard"));
  w.attribute("/", "equation", std::string(p.generalized() ? "A x = lambda B x" : "A x = lambda x"));
  w.attribute("/", "matrix", matrix);
  if (p.generalized()) w.attribute("/", "matrix_b", p.b_source);
  w.attribute("/", "eigenvectors", std::string(p.generalized() ? "B-orthonormal" : "orthonormal"));
  if (p.constraint_columns > 0) {
    w.attribute("/", "constraints", p.constraints_source);
    w.attribute("/", "constraint_columns", p.constraint_columns);
  }
}

void check_resume_problem(const std::string& checkpoint, bool generalized, const std::string& b_source, MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const std::string note = solver::collectively(comm, [&] {
    if (rank != 0) return std::string();
    // Checkpoints written before B was recorded are of the standard problem.
    const std::string problem = io::read_root_string_if_present(checkpoint, "problem").value_or("standard");
    const std::string source = io::read_root_string_if_present(checkpoint, "matrix_b").value_or("");
    const bool was_generalized = problem == "generalized";
    if (was_generalized != generalized)
      fail_input("resume: ", checkpoint, " is a checkpoint of ", equation(was_generalized),
                 was_generalized ? " (B: " + source + ")" : std::string(), ", but this run solves ",
                 equation(generalized), ": give matrix_b as that run did, or start afresh");
    if (generalized && source != b_source)
      return "note: resume: the checkpoint's B was " + source + ", this run's is " + b_source + "\n";
    return std::string();
  });
  if (rank == 0 && !note.empty()) std::printf("%s", note.c_str());
}

template EigsProblem<float> set_up_problem(const cfg::EigsConfig&, const solver::DistributedRows&,
                                           const solver::DistributedRows*, const dense::Context&, MPI_Comm);
template EigsProblem<double> set_up_problem(const cfg::EigsConfig&, const solver::DistributedRows&,
                                            const solver::DistributedRows*, const dense::Context&, MPI_Comm);
template EigsProblem<std::complex<float>> set_up_problem(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                         const solver::DistributedRows*, const dense::Context&,
                                                         MPI_Comm);
template EigsProblem<std::complex<double>> set_up_problem(const cfg::EigsConfig&, const solver::DistributedRows&,
                                                          const solver::DistributedRows*, const dense::Context&,
                                                          MPI_Comm);
template std::string problem_summary(const EigsProblem<std::complex<float>>&);
template std::string problem_summary(const EigsProblem<std::complex<double>>&);
template void write_problem_attributes(io::Hdf5Writer&, const EigsProblem<std::complex<float>>&, const std::string&);
template void write_problem_attributes(io::Hdf5Writer&, const EigsProblem<std::complex<double>>&, const std::string&);
template std::string problem_summary(const EigsProblem<float>&);
template std::string problem_summary(const EigsProblem<double>&);
template void write_problem_attributes(io::Hdf5Writer&, const EigsProblem<float>&, const std::string&);
template void write_problem_attributes(io::Hdf5Writer&, const EigsProblem<double>&, const std::string&);

}  // namespace blockeigs::apps
