// Dense blocks between the host and the operator's rows: read from HDF5 in
// the input's numbering, drawn at random for the input's rows, or copied
// from host doubles.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/operator/load_matrix.hpp"

namespace blockeigs::apps {

// The rows of a dense HDF5 block (start block, right-hand sides) that this
// rank holds in the operator's numbering: each rank reads its range of the
// input's numbering, then the rows move to their ranks. Collective; errors
// agreed.
// `values`: whether a complex dataset is taken (complex runs) or refused naming it.
io::DenseRows read_dense_rows(const std::string& file, const std::string& dataset,
                              const solver::RowNumbering& numbering, MPI_Comm comm,
                              io::DenseValues values = io::DenseValues::real_only);

// solver::fill_random's columns [first_column, first_column + cols) for the
// input's rows, as this rank's rows in the operator's numbering: the same
// random block (start block, right-hand sides) whatever the partition and the
// order of the rows. Collective.
template <class T>
dense::DenseBlock<T> random_rows(const dense::Context& context, const solver::RowNumbering& numbering,
                                 std::int64_t cols, std::uint64_t seed, MPI_Comm comm, std::int64_t first_column = 0);

// A block in `space` filled from host doubles (rows x cols, row-major).
template <class T>
dense::DenseBlock<T> from_host_doubles(Space space, std::int64_t rows, std::int64_t cols,
                                       const std::vector<double>& values);

// A block in `space` of a dense dataset's rows (this rank's, rows x cols): real values as they are (widened to
// complex for a complex T), complex ones for a complex T (read_dense_rows refuses them for a real one).
template <class T>
dense::DenseBlock<T> from_dense_rows(Space space, std::int64_t rows, const io::DenseRows& dense);

}  // namespace blockeigs::apps
