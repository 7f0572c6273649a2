// Graph partitioning with PT-Scotch's distributed graphs (SCOTCH_dgraph*).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <new>

#include <omp.h>
#include <unistd.h>

#include <ptscotch.h>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/partition/graph_partition.hpp"

namespace blockeigs::solver {
namespace {

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

LocalGraph local_graph(const CsrRows& rows) {
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
void check_fits(MPI_Comm comm, const CsrRows& rows) {
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

// SCOTCH_STRAT* bits of the tuning's flags.
SCOTCH_Num scotch_flags(unsigned flags) {
  SCOTCH_Num out = SCOTCH_STRATDEFAULT;
  if (flags & GraphPartitionTuning::speed) out |= SCOTCH_STRATSPEED;
  if (flags & GraphPartitionTuning::safety) out |= SCOTCH_STRATSAFETY;
  if (flags & GraphPartitionTuning::balance) out |= SCOTCH_STRATBALANCE;
  return out;
}

// The threads asked for where MPI allows threads to call it at once, else one.
int scotch_threads(int wanted) {
  int provided = MPI_THREAD_SINGLE;
  BLOCKEIGS_MPI_CHECK(MPI_Query_thread(&provided));
  return provided == MPI_THREAD_MULTIPLE ? std::max(wanted, 1) : 1;
}

MPI_Datatype scotch_num_type() { return sizeof(SCOTCH_Num) == 8 ? MPI_INT64_T : MPI_INT32_T; }

// Sequential Scotch's parts of the whole graph (n vertices, `arcs` edges) on
// rank 0: `degrees`, `weights` and `edges` are every rank's, concatenated in
// rank order, each with one entry more (never a null pointer). Returns the
// code of the first call that failed (0: none).
int partition_whole(SCOTCH_Num n, SCOTCH_Num arcs, const std::vector<SCOTCH_Num>& degrees,
                    std::vector<SCOTCH_Num>& weights, std::vector<SCOTCH_Num>& edges, int parts,
                    const GraphPartitionTuning& tuning, std::vector<SCOTCH_Num>& part) {
  std::vector<SCOTCH_Num> vertices(static_cast<std::size_t>(n) + 1, 0);
  for (SCOTCH_Num i = 0; i < n; ++i) vertices[i + 1] = vertices[i] + degrees[i];
  if (vertices[n] != arcs) return 1;
  SCOTCH_Context context;
  if (SCOTCH_contextInit(&context) != 0) return 1;
  int code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  if (code == 0) code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
  if (code == 0) code = SCOTCH_contextThreadSpawn(&context, std::max(tuning.threads, 1), nullptr);
  SCOTCH_Graph graph, bound;
  if (code == 0) code = SCOTCH_graphInit(&graph);
  if (code != 0) {
    SCOTCH_contextExit(&context);
    return code;
  }
  code = SCOTCH_graphBuild(&graph, 0, n, vertices.data(), vertices.data() + 1, weights.data(), nullptr, arcs,
                           edges.data(), nullptr);
  const bool bound_ok = code == 0 && SCOTCH_contextBindGraph(&context, &graph, &bound) == 0;
  if (!bound_ok && code == 0) code = 1;
  SCOTCH_Strat strategy;
  SCOTCH_stratInit(&strategy);
  if (code == 0) code = SCOTCH_stratGraphMapBuild(&strategy, scotch_flags(tuning.flags), parts, tuning.imbalance);
  if (code == 0) code = SCOTCH_graphPart(&bound, parts, &strategy, part.data());
  SCOTCH_stratExit(&strategy);
  if (bound_ok) SCOTCH_graphExit(&bound);
  SCOTCH_graphExit(&graph);
  SCOTCH_contextExit(&context);
  return code;
}

// The graph gathered on rank 0, partitioned there, the parts scattered back.
// chosen_partition_tuning keeps every count and offset within int.
std::vector<SCOTCH_Num> partition_on_rank0(MPI_Comm comm, const LocalGraph& g, SCOTCH_Num m, int parts,
                                           const GraphPartitionTuning& tuning) {
  int rank = 0, ranks = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const MPI_Datatype type = scotch_num_type();
  const int sizes[2] = {static_cast<int>(m), static_cast<int>(g.vertices[m])};
  std::vector<int> all_sizes(2 * static_cast<std::size_t>(ranks));
  BLOCKEIGS_MPI_CHECK(MPI_Gather(sizes, 2, MPI_INT, all_sizes.data(), 2, MPI_INT, 0, comm));
  std::vector<int> rows(static_cast<std::size_t>(ranks)), arcs(rows.size()), row_at(rows.size() + 1, 0),
      arc_at(rows.size() + 1, 0);
  for (int r = 0; r < ranks; ++r) {
    rows[r] = all_sizes[2 * r];
    arcs[r] = all_sizes[2 * r + 1];
    row_at[r + 1] = row_at[r] + rows[r];
    arc_at[r + 1] = arc_at[r] + arcs[r];
  }
  std::vector<SCOTCH_Num> degrees(static_cast<std::size_t>(m) + 1);
  for (SCOTCH_Num i = 0; i < m; ++i) degrees[i] = g.vertices[i + 1] - g.vertices[i];
  // Rank 0's arrays for the whole graph: a failed allocation stops every rank before the gathers.
  std::vector<SCOTCH_Num> all_degrees, all_weights, all_edges, part;
  int allocated = 1;
  if (rank == 0) {
    try {
      all_degrees.resize(static_cast<std::size_t>(row_at[ranks]) + 1);
      all_weights.resize(all_degrees.size());
      all_edges.resize(static_cast<std::size_t>(arc_at[ranks]) + 1);
      part.resize(all_degrees.size());
    } catch (const std::bad_alloc&) {
      allocated = 0;
    }
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&allocated, 1, MPI_INT, 0, comm));
  if (!allocated) throw LibraryError("graph partitioning on rank 0: no memory for the whole graph there");
  BLOCKEIGS_MPI_CHECK(
      MPI_Gatherv(degrees.data(), sizes[0], type, all_degrees.data(), rows.data(), row_at.data(), type, 0, comm));
  BLOCKEIGS_MPI_CHECK(
      MPI_Gatherv(g.weights.data(), sizes[0], type, all_weights.data(), rows.data(), row_at.data(), type, 0, comm));
  BLOCKEIGS_MPI_CHECK(
      MPI_Gatherv(g.edges.data(), sizes[1], type, all_edges.data(), arcs.data(), arc_at.data(), type, 0, comm));
  int code = 0;
  if (rank == 0)
    code = partition_whole(row_at[ranks], arc_at[ranks], all_degrees, all_weights, all_edges, parts, tuning, part);
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, comm));
  check_scotch(code, "graph partitioning on rank 0 (SCOTCH_graphBuild / SCOTCH_graphPart)");
  std::vector<SCOTCH_Num> owner(static_cast<std::size_t>(m) + 1);
  BLOCKEIGS_MPI_CHECK(
      MPI_Scatterv(part.data(), rows.data(), row_at.data(), type, owner.data(), sizes[0], type, 0, comm));
  return owner;
}

}  // namespace

bool graph_partitioner_compiled() { return true; }

std::string graph_partitioner_name() {
  int version = 0, release = 0, patch = 0;
  SCOTCH_version(&version, &release, &patch);
  return "PT-Scotch " + std::to_string(version) + "." + std::to_string(release) + "." + std::to_string(patch);
}

GraphPartitionTuning chosen_partition_tuning(MPI_Comm comm, const CsrRows& rows) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::int64_t entries[1] = {2 * rows.local_rows() + rows.nnz()};  // degrees, weights, edges
  BLOCKEIGS_MPI_CHECK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : entries, entries, 1, MPI_INT64_T, MPI_SUM, 0, comm));
  GraphPartitionTuning tuning;
  int decision[2] = {0, 1};  // gathered, threads
  if (rank == 0) {
    const double free_bytes = double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    decision[0] = 4.0 * double(entries[0]) * sizeof(SCOTCH_Num) <= 0.5 * free_bytes &&
                  entries[0] < std::numeric_limits<int>::max();  // MPI's counts and offsets
    decision[1] = omp_get_max_threads();
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(decision, 2, MPI_INT, 0, comm));
  tuning.gathered = decision[0] != 0;
  tuning.threads = tuning.gathered ? decision[1] : 1;
  return tuning;
}

std::string describe_partitioner(const GraphPartitionTuning& tuning, int ranks) {
  if (!tuning.gathered) return graph_partitioner_name() + " on " + std::to_string(ranks) + " ranks";
  std::string name = graph_partitioner_name();
  if (name.rfind("PT-", 0) == 0) name.erase(0, 3);  // the sequential library within it
  return name + " on rank 0, " + std::to_string(tuning.threads) + (tuning.threads == 1 ? " thread" : " threads");
}

std::vector<int> partition_graph(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition, int parts,
                                 const GraphPartitionTuning& tuning) {
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
  if (tuning.gathered) owner = partition_on_rank0(comm, g, m, parts, tuning);
  const int threads = scotch_threads(tuning.threads);
  if (!tuning.gathered)
    collectively(comm, [&] {
      // Deterministic and with a fixed seed. PT-Scotch's threads make MPI calls
      // of their own: more than one only under MPI_THREAD_MULTIPLE.
      SCOTCH_Context context;
      check_scotch(SCOTCH_contextInit(&context), "SCOTCH_contextInit");
      int code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
      if (code == 0) code = SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
      if (code == 0) code = SCOTCH_contextThreadSpawn(&context, threads, nullptr);
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
      if (code == 0)
        code = SCOTCH_stratDgraphMapBuild(&strategy, scotch_flags(tuning.flags), parts, parts, tuning.imbalance);
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
