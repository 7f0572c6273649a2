#include "apps/cg_run.hpp"

#include <cmath>
#include <cstdio>

#include "apps/app_main.hpp"
#include "apps/distributed_output.hpp"
#include "apps/run_common.hpp"
#include "apps/summary.hpp"
#include "core/checks.hpp"
#include "core/enums.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/cg/block_cg.hpp"
#include "solver/operator/collective.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"

namespace blockeigs::apps {
namespace {

template <class T>
int solve(const io::CgConfig& config, const solver::DistributedRows& matrix, const spmm::Context& context,
          MPI_Comm comm) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const io::BlockCgConfig& settings = config.solver;
  solver::DistributedOperator<T> op(comm, context, matrix.rows, matrix.partition, config.execution.spmm_algorithm);
  const Space space = context.space();
  const std::int64_t m = op.local_rows(), n = op.global_rows();

  // Right-hand sides, and the known solution when there is one.
  spmm::DenseBlock<T> B, X_known;
  std::int64_t s = settings.columns;
  if (settings.rhs == io::RhsSource::hdf5) {
    const io::DenseRows rows = solver::collectively(comm, [&] {
      return io::read_hdf5_dense_rows(settings.rhs_file, settings.rhs_dataset, op.first_row(),
                                      op.first_row() + m, n);
    });
    s = rows.cols;
    B = from_host_doubles<T>(space, m, s, rows.values);
  } else {
    B = spmm::DenseBlock<T>(space, m, s);
    if (settings.rhs == io::RhsSource::random) {
      solver::fill_random(context, B.view(), settings.seed, op.first_row());
    } else {
      X_known = spmm::DenseBlock<T>(space, m, s);
      solver::fill_random(context, X_known.view(), settings.seed, op.first_row());
      op.apply(T(1), X_known.cview(), T(0), B.view());
    }
  }

  const std::string summary = distribution_summary(matrix, op, config.execution, s);
  if (rank == 0) {
    std::printf("block-cg %s\n%s", BLOCKEIGS_VERSION, summary.c_str());
    std::printf("solve      %lld right-hand side(s), rtol %g, atol %g, max %d iterations, preconditioner %s\n",
                static_cast<long long>(s), settings.rtol, settings.atol, settings.max_iterations,
                to_string(settings.preconditioner).data());
  }

  std::optional<solver::JacobiPreconditioner<T>> jacobi;
  if (settings.preconditioner == PreconditionerKind::jacobi) jacobi.emplace(op);
  solver::BlockCgOptions options;
  options.rtol = settings.rtol;
  options.atol = settings.atol;
  options.max_iterations = settings.max_iterations;
  if (config.output.monitor && rank == 0)
    options.monitor = [](const solver::BlockCgProgress& p) {
      std::printf("iter %5d  converged %3d  search width %3d  max rel. residual %s\n", p.iteration, p.converged,
                  p.search_width, scientific(p.worst_relative).c_str());
    };
  spmm::DenseBlock<T> X(space, m, s);
  spmm::fill_bytes(X.data(), space, 0, sizeof(T) * m * s);
  op.reset_timings();
  const solver::BlockCgResult result =
      solver::block_cg<T>(op, B.cview(), X.view(), options, jacobi ? &*jacobi : nullptr);
  const solver::ApplyTimings& halo = op.timings();
  const double halo_time = halo.pack + halo.wait + halo.unpack;

  // Error against the known solution, per column.
  std::vector<double> errors;
  if (settings.rhs == io::RhsSource::known_solution) {
    spmm::DenseBlock<T> difference(space, m, s);
    solver::copy_block(context, X.cview(), difference.view());
    solver::axpby(context, T(-1), X_known.cview(), T(1), difference.view());
    const auto diff = solver::column_norms(context, comm, difference.cview());
    const auto scale = solver::column_norms(context, comm, X_known.cview());
    for (std::int64_t j = 0; j < s; ++j) errors.push_back(scale[j] > 0 ? diff[j] / scale[j] : diff[j]);
  }

  if (rank == 0) {
    std::printf("\n column  iterations  converged   ||b||       rel. residual  true rel. residual%s\n",
                errors.empty() ? "" : "  rel. error");
    for (std::int64_t j = 0; j < s; ++j) {
      const double b = result.rhs_norms[j] > 0 ? result.rhs_norms[j] : 1.0;
      std::printf(" %6lld  %10d  %9s   %s  %s      %s%s%s\n", static_cast<long long>(j), result.iterations[j],
                  result.converged[j] ? "yes" : "NO", scientific(result.rhs_norms[j]).c_str(),
                  scientific(result.residual_norms[j] / b).c_str(),
                  scientific(result.true_residual_norms[j] / b).c_str(), errors.empty() ? "" : "          ",
                  errors.empty() ? "" : scientific(errors[j]).c_str());
    }
    const auto& t = result.timings;
    std::printf("\niterations %d; time %.3f s: SpMM %.3f (halo %.3f), orthogonalisation %.3f, updates %.3f, "
                "preconditioner %.3f, other %.3f\n",
                result.total_iterations, t.total, t.spmm - halo_time, halo_time, t.orthogonalization, t.update,
                t.preconditioner, t.other);
  }

  if (!config.output.path.empty()) {
    const std::string text = config_text(config.path, config.overrides, comm);
    std::vector<std::int64_t> iterations(result.iterations.begin(), result.iterations.end());
    std::vector<std::int64_t> converged(result.converged.begin(), result.converged.end());
    std::vector<double> history;
    for (const auto& row : result.history) history.insert(history.end(), row.begin(), row.end());
    write_distributed_output(
        comm, config.output.path,
        [&](io::Hdf5Writer& w) {
          w.write("/iterations", iterations);
          w.write("/converged", converged);
          w.write("/rhs_norms", result.rhs_norms);
          w.write("/residual_norms", result.residual_norms);
          w.write("/true_residual_norms", result.true_residual_norms);
          if (!errors.empty()) w.write("/relative_errors", errors);
          w.write_matrix("/history/relative_residuals", static_cast<std::int64_t>(result.history.size()), s, history);
          w.write_string("/config", text);
          write_provenance(w, "block-cg", context, comm);
          w.attribute("/", "all_converged", result.all_converged());
          w.attribute("/", "total_iterations", std::int64_t{result.total_iterations});
          for (auto [name, value] : {std::pair{"time_total", result.timings.total},
                                     {"time_spmm", result.timings.spmm - halo_time}, {"time_halo", halo_time},
                                     {"time_orthogonalization", result.timings.orthogonalization},
                                     {"time_update", result.timings.update},
                                     {"time_preconditioner", result.timings.preconditioner},
                                     {"time_other", result.timings.other}})
            w.attribute("/", name, value);
        },
        {{"/X", n, s, op.first_row(), to_host_doubles<T>(X.cview())}});
    if (rank == 0) std::printf("wrote %s\n", config.output.path.c_str());
  }
  return result.all_converged() ? exit_ok : exit_not_converged;
}

}  // namespace

int run_cg(const std::string& config_path, MPI_Comm comm, const std::vector<std::string>& overrides) {
  const io::CgConfig config =
      solver::collectively(comm, [&] { return io::read_cg_config(config_path, overrides); });
  return prepare_and_solve(config, comm, [&](auto precision, const solver::DistributedRows& matrix,
                                             const spmm::Context& context) {
    return solve<decltype(precision)>(config, matrix, context, comm);
  });
}

}  // namespace blockeigs::apps
