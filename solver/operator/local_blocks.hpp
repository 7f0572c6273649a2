// Splits a rank's rows into the diagonal block (columns it owns, renumbered
// from 0) and the off-diagonal block (columns owned elsewhere, renumbered
// compactly in ascending global order; rows without such columns left out).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "core/backend_lists.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "dense/context.hpp"
#include "spmm/csr.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

// What the split holds, counted without filling it: enough for a memory plan.
struct LocalBlockShape {
  std::vector<std::int64_t> halo_columns;  // global id of each off-diagonal column, ascending
  std::int64_t diagonal_nnz = 0;
  std::int64_t off_diagonal_nnz = 0;
  std::int64_t off_diagonal_rows = 0;  // rows with at least one off-diagonal entry
};

template <class T>
struct LocalBlocks {
  spmm::CsrMatrix<T> diagonal;  // local_rows x local_rows
  // Only the rows that have off-diagonal entries (often a thin surface of the
  // rank's rows): off_diagonal_rows.size() x halo_columns.size(), and row r of
  // it belongs to local row off_diagonal_rows[r]. Multiplying all local rows
  // with beta = 1 would read and write the whole of Y for a few halo rows.
  spmm::CsrMatrix<T> off_diagonal;
  dense::Buffer<std::int32_t> off_diagonal_rows;
  std::vector<std::int64_t> halo_columns;  // global id of each off-diagonal column (host memory)
  dense::Buffer<T> diagonal_entries;       // A(i, i) of each local row
};

// `rows` holds global rows [first_row, first_row + local_rows) and the rank
// owns columns with the same range. Throws InputError when a block would not
// fit the int32 local indices.
template <class V>
LocalBlockShape local_block_shape(const CsrRowsOf<V>& rows);

// The split itself, in host memory: one counting pass and one filling pass
// over the rows (both in parallel), each array written once.
template <class T>
LocalBlocks<T> split_local_rows(const RowsFor<T>& rows);

// The same split done by the device of `context` (cuda/local_blocks_device.cu):
// the rows uploaded once as loaded, counted, scanned and filled there, the
// blocks left in device memory, bit for bit the host split's. Real values
// only; where the build has no CUDA it throws.
#define BLOCKEIGS_SPLIT_LOCAL_ROWS_ON_DEVICE(T) \
  LocalBlocks<T> split_local_rows_on_device(const dense::Context& context, const CsrRows& rows)
// The device split of this rank's rows [a.begin, a.end) of a replicated
// matrix in device memory, read in place (nothing uploaded, nothing copied to
// the host but the halo columns' ids): the same blocks as the host split of
// host_rows(a). Where the build has no CUDA it throws.
#define BLOCKEIGS_SPLIT_REPLICATED_ON_DEVICE(T) \
  LocalBlocks<T> split_replicated_on_device(const dense::Context& context, const ReplicatedCsr& a)
// Each as OP(signature, name) (core/backend_lists.hpp): both for T float and double, the replicated
// matrix's for complex values too.
#define BLOCKEIGS_DEVICE_SPLITS(T, OP)                                      \
  OP(BLOCKEIGS_SPLIT_LOCAL_ROWS_ON_DEVICE(T), "split_local_rows_on_device") \
  OP(BLOCKEIGS_SPLIT_REPLICATED_ON_DEVICE(T), "split_replicated_on_device")
#define BLOCKEIGS_DEVICE_COMPLEX_SPLITS(OP) \
  OP(BLOCKEIGS_SPLIT_REPLICATED_ON_DEVICE(std::complex<double>), "split_replicated_on_device")
BLOCKEIGS_DEVICE_SPLITS(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)

// Device bytes the device split holds beyond the blocks it returns (the rows
// as loaded, per-row counts, the off-diagonal columns while they are sorted).
std::int64_t device_split_scratch_bytes(std::int64_t local_rows, std::int64_t nnz, std::int64_t off_diagonal_nnz);

// The split in the memory of `context`: on the device where it has room for
// the blocks and the device split's scratch together, else on the host and
// then copied there (complex values: always split on the host).
template <class T>
LocalBlocks<T> split_local_rows(const dense::Context& context, const RowsFor<T>& rows);

// The diagonal block's stored diagonal entries, for DistributedOperator::set_diagonal_shift: host loops in
// local_blocks.cpp, which hand device arrays to their device twins of the same signatures in namespace cuda
// (cuda/diagonal_shift.cu, or a stub that throws where the build has no CUDA).
// positions[i] = the index in A's values of A(i, i), -1 where row i stores no
// diagonal entry (positions in A's space, A.rows entries). Returns the count
// of rows without one.
#define BLOCKEIGS_FIND_DIAGONAL_POSITIONS(T)                                                     \
  std::int64_t find_diagonal_positions(const dense::Context& context, const spmm::CsrView<T>& A, \
                                       std::int64_t* positions)
// values[positions[i]] = diagonal[i] + shift for the rows with a position;
// all arrays in the context's space, `rows` entries of positions and diagonal.
#define BLOCKEIGS_SET_SHIFTED_DIAGONAL(T)                                                            \
  void set_shifted_diagonal(const dense::Context& context, T* values, const std::int64_t* positions, \
                            const T* diagonal, T shift, std::int64_t rows)
// Each as OP(signature, name) (core/backend_lists.hpp), for every T of BLOCKEIGS_FOR_EACH_SCALAR.
#define BLOCKEIGS_DIAGONAL_SHIFT(T, OP)                                             \
  OP(BLOCKEIGS_FIND_DIAGONAL_POSITIONS(T), "find_diagonal_positions on the device") \
  OP(BLOCKEIGS_SET_SHIFTED_DIAGONAL(T), "set_shifted_diagonal on the device")
BLOCKEIGS_DIAGONAL_SHIFT(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)

namespace cuda {
BLOCKEIGS_DIAGONAL_SHIFT(T, BLOCKEIGS_BACKEND_DECLARE_TEMPLATE)
}  // namespace cuda

}  // namespace blockeigs::solver
