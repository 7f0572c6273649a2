// Loads (or generates) a global matrix distributed by contiguous row blocks:
// every rank ends with its own rows only, and the partition is balanced by
// nonzeros plus rows. Collective; a failure on any rank is an error on all.
// partition/distribute_rows.hpp may then move the rows by a graph partition.
#pragma once

#include <mpi.h>

#include <string>

#include "io/matrix_config.hpp"
#include "core/enums.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/partition/move_timings.hpp"
#include "solver/operator/row_numbering.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

// How the rows came to be where they are (partition/distribute_rows.hpp).
struct PartitionReport {
  PartitionMethod requested = PartitionMethod::contiguous;
  PartitionMethod used = PartitionMethod::contiguous;
  std::string partitioner;         // "PT-Scotch 7.0.3" where used == graph
  double seconds = 0;              // deciding, partitioning and moving the rows
  double partitioner_seconds = 0;  // of which the partitioner's
  double contiguous_halo = -1;     // max over ranks of halo rows / owned rows, contiguous split; < 0: not measured
  std::string reason;              // why auto chose as it did ("auto: contiguous halo up to 8.3% of a rank's rows"),
                                   // and where it stayed contiguous for want of PT-Scotch
  std::string source;              // a saved numbering's file, where the rows were moved by it
  std::string saved_to;            // the file this distribution was saved to, if any
  MoveTimings move;                // the steps of moving the rows (max over ranks), where they moved
};

// How far each rank's rows reach inside its own range (the diagonal block):
// the locality of the local SpMM's reads of X. Each is the maximum over ranks.
struct BandStats {
  std::int64_t bandwidth = 0;   // largest |i - j| of an entry (i, j) of the diagonal block
  double profile = 0;           // mean over rows i of i - (the row's first column, at most i)
  double profile_fraction = 0;  // that mean over the rank's rows
};

// How each rank ordered its rows within its range (partition/local_order.hpp).
struct LocalOrderReport {
  LocalOrder requested = LocalOrder::none;
  LocalOrder used = LocalOrder::none;
  std::string orderer;             // "reverse Cuthill-McKee" where used == band
  double seconds = 0;              // measuring, ordering and renumbering
  double ordering_seconds = 0;     // of which the band order itself
  double renumbering_seconds = 0;  // and the rows, columns and numbering renumbered by it
  bool measured = false;           // before (and after, where used == band) were measured
  BandStats before, after;
  std::string reason;  // why auto chose as it did, and whether it kept the new order
};

struct DistributedRows {
  CsrRows rows;  // this rank's rows, global column indices (the operator's numbering)
  // Complex values (matrix.field, or a source that holds them): this rank's
  // rows are in complex_rows, and `rows` holds none.
  bool complex = false;
  ComplexCsrRows complex_rows;
  RowPartition partition;  // every rank's row range (the operator's numbering)
  RowNumbering numbering;  // the operator's numbering against the input's
  PartitionReport partitioning;
  LocalOrderReport local_order;
  std::int64_t global_nnz = 0;
  std::string description;                 // "3D Laplacian 24x24x24 (7-point)", "matrix.h5:/A", ...
  bool symmetric_by_construction = false;  // generator, or a Matrix Market file marked symmetric

  // The rows of an operator of element type T (RowsFor<T>): `rows` for real T, `complex_rows` for complex T.
  template <class T>
  RowsFor<T>& rows_for() {
    if constexpr (is_complex_v<T>)
      return complex_rows;
    else
      return rows;
  }
  template <class T>
  const RowsFor<T>& rows_for() const {
    return const_cast<DistributedRows*>(this)->rows_for<T>();
  }
  // f(complex_rows) or f(rows), whichever holds this rank's rows.
  template <class F>
  decltype(auto) with_rows(F&& f) {
    return complex ? f(complex_rows) : f(rows);
  }
  template <class F>
  decltype(auto) with_rows(F&& f) const {
    return complex ? f(complex_rows) : f(rows);
  }
};

// Which values a caller takes: real ones only (complex values, or matrix.field: complex, refused naming the
// source), or complex ones too (block-eigs), in complex_rows.
enum class Values { real_only, real_or_complex };
DistributedRows load_distributed_rows(const io::MatrixConfig& config, MPI_Comm comm, Values values = Values::real_only);

// The same for a second matrix on the rows of a first (B of A x = lambda B x):
// split by `like` (A's input partition) instead of balanced on its own
// nonzeros. InputError (agreed) naming `key` ("matrix_b") and the source
// when it is not square or has other than like.global_rows() rows, or holds
// complex values where `values` is real_only (a real A's B).
DistributedRows load_distributed_rows_like(const io::MatrixConfig& config, const RowPartition& like,
                                           const std::string& key, MPI_Comm comm, Values values = Values::real_only);

// Real rows held as the complex rows they also are (a real B beside a complex A); complex ones as they are.
void widen_to_complex(DistributedRows& matrix);

}  // namespace blockeigs::solver
