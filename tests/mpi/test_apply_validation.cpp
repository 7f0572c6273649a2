// LinearOperator::apply (and SingleInputOperator::apply_single) check their
// arguments before any work or message: wrong rows, wrong columns, the wrong
// memory space and overlapping X and Y are refused with a message that says
// which, on every rank that passed them, and the operator still works after.
// Column blocks of one buffer side by side (block CG's [P | Q]) are accepted.
#include <gtest/gtest.h>

#include <vector>

#include "csr_test_operator.hpp"
#include "solver/blocks/apply_single.hpp"
#include "expect_error.hpp"
#include "operator_check.hpp"
#include "test_matrices.hpp"

namespace blockeigs {
namespace {

using test::expect_mentions;
using test::input_error_message;

struct Fixture {
  dense::Context context = dense::Context::host();
  CsrRows whole = test::power_law_matrix(200, 120, 9);
  solver::RowPartition partition = solver::RowPartition::balanced(whole.row_offsets, test::mpi_size());
  std::int64_t m = partition.rows(test::mpi_rank());
  solver::DistributedOperator<double> op{
      MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank())),
      partition};
};

dense::DenseView<double> view(std::vector<double>& v, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                              std::int64_t first_col = 0, Space space = Space::host) {
  return {space, rows, cols, ld, v.data() + first_col};
}

TEST(ApplyValidation, WrongRowsAndColumns) {
  Fixture f;
  const std::int64_t m = f.m;
  std::vector<double> x((m + 1) * 4, 1.0), y((m + 1) * 4, 0.0);
  expect_mentions(input_error_message([&] { f.op.apply(1.0, view(x, m + 1, 4, 4), 0.0, view(y, m, 4, 4)); }),
                  {"LinearOperator::apply", "X is " + std::to_string(m + 1) + " x 4",
                   "this rank owns " + std::to_string(m) + " rows"});
  expect_mentions(input_error_message([&] { f.op.apply(1.0, view(x, m, 4, 4), 0.0, view(y, m + 1, 4, 4)); }),
                  {"Y is " + std::to_string(m + 1) + " x 4", "owns " + std::to_string(m) + " rows"});
  expect_mentions(input_error_message([&] { f.op.apply(1.0, view(x, m, 3, 4), 0.0, view(y, m, 4, 4)); }),
                  {"X has 3 columns but Y has 4"});
  if (m > 1)
    expect_mentions(input_error_message([&] { f.op.apply(1.0, view(x, m, 4, 2), 0.0, view(y, m, 4, 4)); }),
                    {"X's leading dimension 2 is smaller than its 4 columns"});
  std::vector<float> xf(m * 4, 1.0f);
  expect_mentions(input_error_message([&] {
                    f.op.apply_single({Space::host, m, 2, 2, xf.data()}, view(y, m, 4, 4));
                  }),
                  {"LinearOperator::apply_single", "X has 2 columns but Y has 4"});
  // Nothing was sent: the operator still works, on every rank.
  test::check_operator_apply(f.op, f.context, f.whole, 3, "after refused calls");
}

TEST(ApplyValidation, WrongSpace) {
  Fixture f;
  const std::int64_t m = f.m;
  std::vector<double> x(m * 2, 1.0), y(m * 2, 0.0);
  // Host memory labelled as device memory: refused before it is touched.
  expect_mentions(
      input_error_message([&] { f.op.apply(1.0, view(x, m, 2, 2, 0, Space::device), 0.0, view(y, m, 2, 2)); }),
      {"X is in device memory and Y in host memory", "works in host memory"});
  expect_mentions(
      input_error_message([&] { f.op.apply(1.0, view(x, m, 2, 2), 0.0, view(y, m, 2, 2, 0, Space::device)); }),
      {"Y in device memory", "works in host memory"});
  test::check_operator_apply(f.op, f.context, f.whole, 2, "after refused calls");
}

TEST(ApplyValidation, OverlappingBlocks) {
  Fixture f;
  const std::int64_t m = f.m;
  std::vector<double> buffer(m * 8 + 8, 1.0);
  const auto refused = [&](dense::DenseView<double> X, dense::DenseView<double> Y) {
    if (m == 0) {  // an empty block overlaps nothing
      EXPECT_NO_THROW(f.op.apply(1.0, X, 0.0, Y));
      return;
    }
    expect_mentions(input_error_message([&] { f.op.apply(1.0, X, 0.0, Y); }),
                    {"LinearOperator::apply", "X and Y overlap in memory"});
  };
  refused(view(buffer, m, 4, 4), view(buffer, m, 4, 4));        // in place
  refused(view(buffer, m, 4, 8), view(buffer, m, 4, 8, 2));     // columns 0-3 and 2-5 of one buffer
  refused(view(buffer, m, 4, 4), view(buffer, m, 4, 4, 4));     // shifted by one row
  refused(view(buffer, m, 4, 8, 6), view(buffer, m, 4, 8, 0));  // X's rows run into Y's next row
  // fp32 X inside Y's bytes.
  if (m > 0)
    expect_mentions(input_error_message([&] {
                      f.op.apply_single({Space::host, m, 4, 4, reinterpret_cast<const float*>(buffer.data())},
                                        view(buffer, m, 4, 4));
                    }),
                    {"LinearOperator::apply_single", "overlap"});

  // Side by side in one buffer ([P | Q], as block CG keeps them): accepted,
  // and the same as with separate blocks.
  const std::vector<double> x = test::hashed_block(f.partition.begin(test::mpi_rank()), m, 4, 5);
  std::vector<double> pq(m * 8, 0.0), separate(m * 4, 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < 4; ++j) pq[i * 8 + j] = x[i * 4 + j];
  std::vector<double> x_copy(x);
  f.op.apply(1.0, view(pq, m, 4, 8), 0.0, view(pq, m, 4, 8, 4));
  f.op.apply(1.0, view(x_copy, m, 4, 4), 0.0, view(separate, m, 4, 4));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(pq[i * 8 + 4 + j], separate[i * 4 + j]);
}

// The checks live in the base: every implementation gets them, test doubles
// included; the fp32 capability is asked for with applies_single(A).
TEST(ApplyValidation, EveryOperatorIsChecked) {
  const auto context = dense::Context::host();
  const CsrRows whole = test::power_law_matrix(120, 40, 3);
  const auto partition = solver::RowPartition::balanced(whole.row_offsets, test::mpi_size());
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, dense::Context::host(), whole, partition);
  const std::int64_t m = A.local_rows();
  std::vector<double> x(m * 3 + 3, 1.0), y(m * 3 + 3, 0.0);
  expect_mentions(input_error_message([&] { A.apply(1.0, view(x, m, 3, 3), 0.0, view(y, m, 2, 3)); }),
                  {"X has 3 columns but Y has 2"});
  EXPECT_TRUE(A.widths().empty());  // apply_impl never ran

  solver::LinearOperator<double>& base = A;
  EXPECT_FALSE(solver::applies_single(base));
  Fixture f;
  EXPECT_TRUE(solver::applies_single(static_cast<solver::LinearOperator<double>&>(f.op)));
  const int rank = test::mpi_rank();
  solver::DistributedOperator<float> op32(MPI_COMM_WORLD, context,
                                          slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  EXPECT_FALSE(solver::applies_single(static_cast<solver::LinearOperator<float>&>(op32)));

  // apply_single(A, ...) on an operator without its own fp32 path widens X.
  std::vector<float> xf(m * 3);
  const std::vector<double> h = test::hashed_block(partition.begin(rank), m, 3, 2);
  for (std::int64_t e = 0; e < m * 3; ++e) xf[e] = static_cast<float>(h[e]);
  std::vector<double> widened(xf.begin(), xf.end()), want(m * 3), got(m * 3);
  solver::apply_single(base, {Space::host, m, 3, 3, xf.data()}, view(got, m, 3, 3));
  A.apply(1.0, view(widened, m, 3, 3), 0.0, view(want, m, 3, 3));
  EXPECT_EQ(got, want);
  EXPECT_EQ(A.widths().size(), 2u);
}

}  // namespace
}  // namespace blockeigs
