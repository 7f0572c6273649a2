#include "apps/run/summary.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

#include "core/checks.hpp"
#include "solver/blocks/host_blas.hpp"
#include "solver/operator/device_selection.hpp"

namespace blockeigs::apps {
namespace {

std::string format(const char* pattern, auto... values) {
  char line[256];
  std::snprintf(line, sizeof line, pattern, values...);
  return line;
}

// "row order  band (reverse Cuthill-McKee; auto: after the graph partition), 0.120 s (ordering 0.080,
// renumbering 0.030); bandwidth 41,000 -> 2,100, profile 30,512 -> 1,024 rows (largest rank)".
std::string row_order_line(const solver::LocalOrderReport& o) {
  std::string line = "row order  " + std::string(to_string(o.used));
  std::string why = o.used == LocalOrder::band ? o.orderer : "";
  if (!o.reason.empty()) why += (why.empty() ? "" : "; ") + o.reason;
  if (!why.empty()) line += " (" + why + ")";
  if (o.used == LocalOrder::band)
    line += format(
        ", %.3f s (ordering %.3f, renumbering %.3f); bandwidth %lld -> %lld, profile %.0f -> %.0f rows "
        "(largest rank)",
        o.seconds, o.ordering_seconds, o.renumbering_seconds, static_cast<long long>(o.before.bandwidth),
        static_cast<long long>(o.after.bandwidth), o.before.profile, o.after.profile);
  else if (o.measured)
    line += format("; bandwidth %lld, profile %.0f rows (largest rank)", static_cast<long long>(o.before.bandwidth),
                   o.before.profile);
  return line + "\n";
}

}  // namespace

std::string arrangement_lines(const solver::DistributedRows& matrix) {
  std::ostringstream out;
  const solver::PartitionReport& p = matrix.partitioning;
  const std::string reason = p.reason.empty() ? "" : "; " + p.reason;
  const std::string saved = p.saved_to.empty() ? "" : "; saved to " + p.saved_to;
  const bool moved = !p.source.empty() || p.used == PartitionMethod::graph;
  if (!p.source.empty())
    out << "partition  from " << p.source << format(", %.3f s (moving the rows)\n", p.seconds);
  else if (p.used == PartitionMethod::graph)
    out << format("partition  graph (%s%s), %.3f s (partitioner %.3f s, moving the rows %.3f s)", p.partitioner.c_str(),
                  reason.c_str(), p.seconds, p.partitioner_seconds, p.seconds - p.partitioner_seconds)
        << saved << "\n";
  else
    out << "partition  contiguous" << (p.reason.empty() ? "" : " (" + p.reason + ")") << saved << "\n";
  if (moved)
    out << format(
        "           moving the rows: renumbering the columns %.3f s, packing %.3f, heads %.3f, entries %.3f, "
        "placing %.3f\n",
        p.move.columns, p.move.pack, p.move.heads, p.move.entries, p.move.place);
  if (!p.source.empty())
    out << "row order  as saved in " << p.source << "\n";
  else
    out << row_order_line(matrix.local_order);
  return out.str();
}

namespace {

// "threads    2 per rank (OpenMP and OpenBLAS): 2 ranks on the node's 4 cores", "...: 1 rank bound to 1
// of the node's 2 cores", "..., widened from a binding to 1 core" (mpirun's, narrower than the share), or where the
// environment set them "threads    OpenMP 4 (OMP_NUM_THREADS), OpenBLAS 4 (OMP_NUM_THREADS) per rank"; `least` and
// `most`: the OpenMP threads over all ranks.
std::string threads_line(const solver::CpuThreads& t, int least, int most) {
  const std::string count = least == most ? std::to_string(most) : std::to_string(least) + "-" + std::to_string(most);
  auto plural = [](int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  auto source = [](solver::ThreadSource s) {
    return s == solver::ThreadSource::omp_num_threads        ? "OMP_NUM_THREADS"
           : s == solver::ThreadSource::openblas_num_threads ? "OPENBLAS_NUM_THREADS"
                                                             : "its share of the cores";
  };
  if (t.openmp_source != solver::ThreadSource::share || t.openblas_source != solver::ThreadSource::share)
    return format("threads    OpenMP %s (%s), OpenBLAS %d (%s) per rank\n", count.c_str(), source(t.openmp_source),
                  t.openblas, source(t.openblas_source));
  std::string line = "threads    " + count + " per rank (OpenMP and OpenBLAS): " + plural(t.local_ranks, "rank");
  if (t.hardware > t.cores)
    line += " bound to " + std::to_string(t.cores) + " of the node's " + plural(t.hardware, "core");
  else
    line += " on the node's " + plural(t.cores, "core");
  if (t.allowed > 0 && t.allowed < t.cores / std::max(1, t.local_ranks))
    line += ", each bound to " + plural(t.allowed, "core");
  if (t.widened_from > 0) line += ", widened from a binding to " + plural(t.widened_from, "core");
  return line + "\n";
}

}  // namespace

template <class T>
std::string distribution_summary(const solver::DistributedRows& matrix, const solver::DistributedOperator<T>& op,
                                 const cfg::ExecutionConfig& execution, std::int64_t block_width) {
  MPI_Comm comm = op.comm();
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));

  // Per rank: rows, first row, nonzeros, halo rows, neighbours, device.
  constexpr int fields = 6;
  const long long mine[fields] = {op.local_rows(),
                                  op.first_row(),
                                  op.local_nnz(),
                                  op.halo_plan().halo_rows(),
                                  static_cast<long long>(op.halo_plan().recv_ranks.size()),
                                  op.context().device()};
  std::vector<long long> all(static_cast<std::size_t>(fields) * ranks);
  BLOCKEIGS_MPI_CHECK(MPI_Gather(mine, fields, MPI_LONG_LONG, all.data(), fields, MPI_LONG_LONG, 0, comm));
  const solver::CpuThreads& threads = solver::cpu_threads();
  int least = threads.openmp, most = threads.openmp;
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(&threads.openmp, &least, 1, MPI_INT, MPI_MIN, 0, comm));
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(&threads.openmp, &most, 1, MPI_INT, MPI_MAX, 0, comm));
  if (rank != 0) return {};

  const bool device = op.context().space() == Space::device;
  std::ostringstream out;
  out << "matrix     " << matrix.description << "\n";
  out << format("size       %lld x %lld, %lld nonzeros (%.2f per row)%s\n",
                static_cast<long long>(matrix.partition.global_rows()),
                static_cast<long long>(matrix.partition.global_rows()), static_cast<long long>(matrix.global_nnz),
                double(matrix.global_nnz) / double(std::max<std::int64_t>(1, matrix.partition.global_rows())),
                is_complex_v<T> ? ", complex Hermitian" : "");
  out << "backend    " << (device ? "cuda" : "cpu") << " (requested " << to_string(execution.backend) << "), SpMM "
      << to_string(op.algorithm_for(block_width)) << " (requested " << to_string(execution.spmm_algorithm) << "), "
      << (sizeof(real_t<T>) == 8 ? "fp64" : "fp32");
  if (device && ranks > 1) out << ", halo " << op.halo_transport();
  out << "\n";
  if (!device) {
    // The CPU backend's block products are OpenBLAS's: say which kernels it
    // picked, and where it did not recognise the CPU, how to give it the right ones.
    const std::string kernels = solver::host_blas_kernels();
    out << "host BLAS  OpenBLAS, " << kernels << " kernels\n";
    out << threads_line(threads, least, most);
    if (solver::blas_kernels_older_than_cpu(kernels, solver::cpu_has_avx2_fma()))
      out << "warning: OpenBLAS did not recognise this CPU and runs its " << kernels
          << " kernels, which leave AVX2 unused; run with OPENBLAS_CORETYPE=Haswell for the CPU's own\n";
  }
  out << arrangement_lines(matrix);
  out << format("ranks      %d, balanced by nonzeros + rows\n", ranks);
  out << "  rank        rows   first row      nonzeros   halo rows  neighbours  device\n";
  for (int r = 0; r < ranks; ++r) {
    const long long* f = &all[static_cast<std::size_t>(r) * fields];
    out << format("  %4d  %10lld  %10lld  %12lld  %10lld  %10lld  %s\n", r, f[0], f[1], f[2], f[3], f[4],
                  f[5] < 0 ? "cpu" : ("cuda:" + std::to_string(f[5])).c_str());
  }
  return out.str();
}

#define BLOCKEIGS_SUMMARY(T)                                                                                       \
  template std::string distribution_summary(const solver::DistributedRows&, const solver::DistributedOperator<T>&, \
                                            const cfg::ExecutionConfig&, std::int64_t);
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_SUMMARY)
#undef BLOCKEIGS_SUMMARY

}  // namespace blockeigs::apps
