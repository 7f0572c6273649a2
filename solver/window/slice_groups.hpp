// Slices side by side (window.hpp): the operator's ranks split into groups
// of consecutive ranks, each group holding a copy of A's rows spread over
// its own ranks, so that a group solves its slices without the others. A
// group's rank holds the rows of a run of whole ranges of A's ranks (no row
// range is cut), so rows and vectors move between the two layouts in one
// message per pair of ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "core/csr_rows.hpp"
#include "solver/base/linear_operator.hpp"
#include "solver/operator/halo/halo_transport.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

class SliceGroups {
 public:
  // Collective over `comm`, whose ranks own the row ranges of `world`; 1 <= groups <= its ranks.
  SliceGroups(MPI_Comm comm, const RowPartition& world, int groups);
  SliceGroups(const SliceGroups&) = delete;
  SliceGroups& operator=(const SliceGroups&) = delete;
  ~SliceGroups();

  int count() const { return count_; }
  int mine() const { return mine_; }                  // this rank's group
  MPI_Comm group_comm() const { return group_; }      // this rank's group's ranks
  const RowPartition& rows() const { return rows_; }  // A's rows over this rank's group's ranks
  int first_rank(int group) const;                    // the group's rank 0, as a rank of `comm`
  int size(int group) const;

  // The rows this rank holds in its group, from the ranks of `comm` whose ranges make them up (`mine`: this
  // rank's rows of A, sent to one rank of every group; real or complex values). Collective over `comm`.
  template <class V>
  CsrRowsOf<V> gather_rows(const CsrRowsOf<V>& mine) const;

  // A block on the rows of `group`'s layout (held where this rank is in it; ignored elsewhere) into `out`,
  // this rank's rows of A's layout, `cols` columns on every rank. Collective over `comm`.
  template <class T>
  void to_world(const dense::Context& context, int group, std::int64_t cols, dense::ConstDenseView<T> held,
                dense::DenseView<T> out) const;

 private:
  int holder(int group, int rank) const;    // the rank of `comm` that holds `rank`'s rows in `group`
  int chunk_begin(int group, int j) const;  // the first of `comm`'s ranks whose rows `group`'s rank j holds

  MPI_Comm comm_;
  MPI_Comm group_ = MPI_COMM_NULL;
  RowPartition world_, rows_;
  int ranks_ = 1, rank_ = 0, count_ = 1, mine_ = 0;
};

// Builds the operator of this rank's group from its rows (SliceGroups::rows()). Collective over the
// groups' parent communicator.
template <class T>
using GroupOperatorFactory = std::function<std::unique_ptr<LinearOperator<T>>(const SliceGroups&)>;

// A factory of DistributedOperators whose rows come from `rows` (this rank's rows of A, global columns)
// through SliceGroups::gather_rows; the other arguments as DistributedOperator's. `rows` must outlive it.
// Complex T takes complex rows.
template <class T>
GroupOperatorFactory<T> distributed_group_operator(const RowsFor<T>& rows, const dense::Context& context,
                                                   Algorithm algorithm = Algorithm::automatic, HaloOptions halo = {});

}  // namespace blockeigs::solver
