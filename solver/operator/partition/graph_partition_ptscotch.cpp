// Graph partitioning with PT-Scotch's distributed graphs (SCOTCH_dgraph*).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <limits>

#include <ptscotch.h>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/graph_partition.hpp"

namespace blockeigs::solver {
namespace {

// The parts may differ from the mean load (vertex weights) by this fraction:
// 3% costs little halo and keeps the ranks' SpMM times within a few percent.
constexpr double kImbalance = 0.03;

// Throws when a PT-Scotch call fails (it prints its own reason on stderr).
void check_scotch(int code, const char* call) {
  if (code != 0) throw LibraryError(detail::concat("PT-Scotch's ", call, " failed (code ", code, ")"));
}

// This rank's graph in PT-Scotch's arrays: vertices are the rows, edges the
// off-diagonal nonzeros, vertex weights nnz + 1.
struct LocalGraph {
  std::vector<SCOTCH_Num> vertices;  // offsets, rows + 1
  std::vector<SCOTCH_Num> edges;     // global vertex numbers
  std::vector<SCOTCH_Num> weights;
};

LocalGraph local_graph(const io::CsrRows& rows) {
  LocalGraph g;
  const std::int64_t m = rows.local_rows();
  g.vertices.reserve(static_cast<std::size_t>(m) + 1);
  g.edges.reserve(static_cast<std::size_t>(rows.nnz()));
  g.weights.reserve(static_cast<std::size_t>(m));
  g.vertices.push_back(0);
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t row = rows.first_row + i;
    for (std::int64_t k = rows.row_offsets[i]; k < rows.row_offsets[i + 1]; ++k)
      if (rows.col_indices[k] != row && rows.values[k] != 0.0)
        g.edges.push_back(static_cast<SCOTCH_Num>(rows.col_indices[k]));
    g.vertices.push_back(static_cast<SCOTCH_Num>(g.edges.size()));
    g.weights.push_back(static_cast<SCOTCH_Num>(rows.row_offsets[i + 1] - rows.row_offsets[i] + 1));
  }
  return g;
}

// SCOTCH_Num is the integer PT-Scotch was built with (int in Debian's
// default package): the graph's global sizes must fit it.
void check_fits(MPI_Comm comm, const io::CsrRows& rows) {
  const std::int64_t mine[2] = {rows.nnz(), rows.nnz() + rows.local_rows()};
  std::int64_t total[2] = {0, 0};
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(mine, total, 2, MPI_INT64_T, MPI_SUM, comm));
  const auto limit = static_cast<std::int64_t>(std::numeric_limits<SCOTCH_Num>::max());
  if (total[1] > limit || rows.global_rows > limit)
    fail_input_everywhere("the matrix has ", total[0], " nonzeros and ", rows.global_rows,
                          " rows, more than this build's PT-Scotch can number (", sizeof(SCOTCH_Num) * 8,
                          "-bit integers, at most ", limit,
                          "): use a PT-Scotch built with 64-bit integers, or execution.partition: contiguous");
}

}  // namespace

bool graph_partitioner_compiled() { return true; }

std::string graph_partitioner_name() {
  int version = 0, release = 0, patch = 0;
  SCOTCH_version(&version, &release, &patch);
  return "PT-Scotch " + std::to_string(version) + "." + std::to_string(release) + "." + std::to_string(patch);
}

std::vector<int> partition_graph(MPI_Comm comm, const io::CsrRows& rows, const RowPartition& partition,
                                 int parts) {
  BLOCKEIGS_ASSERT(parts >= 1 && rows.global_rows == partition.global_rows());
  check_fits(comm, rows);
  LocalGraph g = local_graph(rows);
  const auto m = static_cast<SCOTCH_Num>(rows.local_rows());
  const auto arcs = static_cast<SCOTCH_Num>(g.edges.size());
  // A null array means "none" to PT-Scotch (no weights): a rank with no rows
  // or no edges passes arrays of one unused entry, as the others do.
  g.edges.push_back(0);
  g.weights.push_back(0);
  std::vector<SCOTCH_Num> owner(static_cast<std::size_t>(m) + 1);  // one extra: never a null pointer
  collectively(comm, [&] {
    // One thread per rank, deterministic and with a fixed seed: PT-Scotch's
    // threads make MPI calls of their own, which need MPI_THREAD_MULTIPLE
    // (the apps start MPI without it: two threads' collectives deadlock).
    SCOTCH_Context context;
    check_scotch(SCOTCH_contextInit(&context), "SCOTCH_contextInit");
    int code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
    if (code == 0) code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
    if (code == 0) code = SCOTCH_contextThreadSpawn(&context, 1, nullptr);
    SCOTCH_Dgraph graph, bound;
    if (code == 0) code = SCOTCH_dgraphInit(&graph, comm);
    if (code != 0) {
      SCOTCH_contextExit(&context);
      check_scotch(code, "context and graph set-up");
    }
    SCOTCH_Strat strategy;
    SCOTCH_stratInit(&strategy);
    code = SCOTCH_dgraphBuild(&graph, 0, m, m, g.vertices.data(), g.vertices.data() + 1, g.weights.data(), nullptr,
                              arcs, arcs, g.edges.data(), nullptr, nullptr);
    const bool bound_ok = code == 0 && SCOTCH_contextBindDgraph(&context, &graph, &bound) == 0;
    if (!bound_ok && code == 0) code = 1;
    if (code == 0) code = SCOTCH_stratDgraphMapBuild(&strategy, SCOTCH_STRATDEFAULT, parts, parts, kImbalance);
    if (code == 0) code = SCOTCH_dgraphPart(&bound, parts, &strategy, owner.data());
    SCOTCH_stratExit(&strategy);
    if (bound_ok) SCOTCH_dgraphExit(&bound);
    SCOTCH_dgraphExit(&graph);
    SCOTCH_contextExit(&context);
    check_scotch(code, "graph partitioning (SCOTCH_dgraphBuild / SCOTCH_dgraphPart)");
  });
  std::vector<int> out(static_cast<std::size_t>(m));
  for (SCOTCH_Num i = 0; i < m; ++i) {
    BLOCKEIGS_ASSERT(owner[i] >= 0 && owner[i] < parts);
    out[i] = static_cast<int>(owner[i]);
  }
  return out;
}

}  // namespace blockeigs::solver
