// A solver's block written to a result file by every rank
// (apps/run/output/input_order_block.hpp, distributed_output.hpp): whatever the
// numbering (the input's, permuted within each rank, moved between ranks,
// with a rank that holds no rows), the precision and the size of the pieces,
// the file holds row o of the input's numbering at row o, through MPI-IO and
// straight into the file's place by every rank (serial HDF5's path).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "apps/run/output/distributed_output.hpp"
#include "apps/run/output/input_order_block.hpp"
#include "core/checks.hpp"
#include "distributed_fixtures.hpp"
#include "io/hdf5_dense.hpp"
#include "solver/operator/row_numbering.hpp"

namespace blockeigs {
namespace {

constexpr std::int64_t n = 103, cols = 3;

// Entry (input row o, column j): exact in fp32.
double value(std::int64_t o, std::int64_t j) { return double(o * 8 + j) + 0.5; }

// How the operator numbers the input's rows.
enum class Layout { identity, permuted_within_ranks, moved_between_ranks };

// The operator's row of each input row, and the operator's ranges: moved rows
// go to a distribution with an empty rank where there are several ranks.
struct Numbered {
  solver::RowNumbering numbering;
  std::vector<std::int64_t> current_of;  // every input row's row in the operator's numbering
};

Numbered numbered(Layout layout) {
  const int ranks = test::mpi_size(), rank = test::mpi_rank();
  const solver::RowPartition input = solver::RowPartition::uniform(n, ranks);
  Numbered out;
  out.current_of.resize(n);
  std::iota(out.current_of.begin(), out.current_of.end(), 0);
  if (layout == Layout::identity) {
    out.numbering = solver::RowNumbering::identity(MPI_COMM_WORLD, input);
    return out;
  }
  solver::RowPartition current = input;
  if (layout == Layout::permuted_within_ranks) {
    for (int r = 0; r < ranks; ++r)
      std::reverse(out.current_of.begin() + input.begin(r), out.current_of.begin() + input.end(r));
  } else {
    std::shuffle(out.current_of.begin(), out.current_of.end(), std::mt19937_64(7));  // the same on every rank
    std::vector<std::int64_t> first{0};
    for (int r = 0; r < ranks; ++r)
      first.push_back(ranks == 1 ? n : std::min<std::int64_t>(n, (r + 1) * n / (ranks - 1)));
    first.back() = n;  // with several ranks the last one holds no rows
    current = solver::RowPartition(first);
  }
  std::vector<std::int64_t> original_of_local(static_cast<std::size_t>(current.rows(rank)));
  for (std::int64_t o = 0; o < n; ++o)
    if (current.owner(out.current_of[o]) == rank) original_of_local[out.current_of[o] - current.begin(rank)] = o;
  std::vector<std::int64_t> current_of_original(out.current_of.begin() + input.begin(rank),
                                                out.current_of.begin() + input.end(rank));
  out.numbering = solver::RowNumbering(MPI_COMM_WORLD, input, current, std::move(original_of_local),
                                       std::move(current_of_original));
  return out;
}

// This rank's rows in the operator's numbering, with a leading dimension wider than the columns where `gap`.
template <class T>
dense::DenseBlock<T> operator_rows(const solver::RowNumbering& numbering, bool gap) {
  const std::int64_t rows = numbering.current().rows(test::mpi_rank());
  dense::DenseBlock<T> X(Space::host, rows, cols, gap ? cols + 2 : cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < X.ld(); ++j)
      X.data()[i * X.ld() + j] = j < cols ? static_cast<T>(value(numbering.original_row(i), j)) : T(-1);
  return X;
}

void expect_input_order(const std::string& path, const char* what) {
  const io::DenseRows rows = io::read_hdf5_dense_rows(path, "/X", 0, n, n);
  ASSERT_EQ(rows.cols, cols) << what;
  int wrong = 0;
  for (std::int64_t o = 0; o < n; ++o)
    for (std::int64_t j = 0; j < cols; ++j) wrong += rows.values[o * cols + j] != value(o, j);
  EXPECT_EQ(wrong, 0) << what;
}

template <class T>
void write_and_check(Layout layout, bool gap, std::int64_t piece_bytes, bool serial) {
  const std::string path = (test::shared_folder("distributed_output") / "x.h5").string();
  const Numbered numbered_rows = numbered(layout);
  const dense::DenseBlock<T> X = operator_rows<T>(numbered_rows.numbering, gap);
  apps::set_serial_output_for_tests(serial);
  const apps::OutputTimes times = apps::write_distributed_output(
      MPI_COMM_WORLD, path, [](io::Hdf5Writer& w) { w.attribute("/", "app", "test"); },
      {apps::block_in_input_order("/X", X.cview(), numbered_rows.numbering, MPI_COMM_WORLD, piece_bytes)});
  apps::set_serial_output_for_tests(false);
  EXPECT_EQ(times.bytes, 8 * n * cols);
  EXPECT_GE(times.gather, 0.0);
  EXPECT_GE(times.write, 0.0);
  const std::string what = std::string(sizeof(T) == 4 ? "fp32" : "fp64") + " layout " + std::to_string(int(layout)) +
                           (gap ? " ld > cols" : "") + " pieces of " + std::to_string(piece_bytes) + " bytes" +
                           (serial ? ", rows written straight" : ", MPI-IO");
  if (test::mpi_rank() == 0) expect_input_order(path, what.c_str());
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

class DistributedOutput : public ::testing::TestWithParam<Layout> {};

TEST_P(DistributedOutput, FileHoldsTheInputsOrderInEveryPrecisionAndPieceSize) {
  for (const bool serial : {false, true})
    for (const std::int64_t piece_bytes : {std::int64_t{1}, 8 * cols * 5, apps::output_piece_bytes}) {
      write_and_check<double>(GetParam(), false, piece_bytes, serial);
      write_and_check<double>(GetParam(), true, piece_bytes, serial);
      write_and_check<float>(GetParam(), false, piece_bytes, serial);
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, DistributedOutput,
                         ::testing::Values(Layout::identity, Layout::permuted_within_ranks,
                                           Layout::moved_between_ranks));

// A checkpoint's rows (host doubles, taken over) in the input's order.
TEST(DistributedOutput, HostRowsMovedToTheInputsOrder) {
  const std::string path = (test::shared_folder("distributed_output") / "ck.h5").string();
  const Numbered numbered_rows = numbered(Layout::moved_between_ranks);
  const dense::DenseBlock<double> X = operator_rows<double>(numbered_rows.numbering, false);
  std::vector<double> local(X.data(), X.data() + X.rows() * X.cols());
  apps::write_distributed_output(
      MPI_COMM_WORLD, path, [](io::Hdf5Writer&) {},
      {apps::block_in_input_order("/X", std::move(local), cols, numbered_rows.numbering, MPI_COMM_WORLD)});
  if (test::mpi_rank() == 0) expect_input_order(path, "host rows");
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

// The input's numbering in fp64 on the host: the file is written from the solver's block itself.
TEST(DistributedOutput, CompactHostDoublesAreWrittenInPlace) {
  const Numbered numbered_rows = numbered(Layout::identity);
  const dense::DenseBlock<double> X = operator_rows<double>(numbered_rows.numbering, false);
  const apps::DistributedBlock block =
      apps::block_in_input_order("/X", X.cview(), numbered_rows.numbering, MPI_COMM_WORLD);
  EXPECT_EQ(block.rows, X.data());
  EXPECT_FALSE(block.copy_rows);
  EXPECT_EQ(block.local_rows, X.rows());
}

}  // namespace
}  // namespace blockeigs
