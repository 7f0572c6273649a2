// CsrRows helpers: slicing a whole matrix into row blocks, canonicalising
// rows, and the invariant checks every reader and generator result goes through.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "tests/support/expect_error.hpp"
#include "core/csr_rows.hpp"

namespace {

using blockeigs::CsrRows;
using blockeigs::InputError;

// 4 x 5 with an empty row (row 2):
//   [1 0 2 0 0]
//   [0 3 0 0 4]
//   [0 0 0 0 0]
//   [5 0 0 6 7]
CsrRows sample() {
  CsrRows m;
  m.global_rows = 4;
  m.global_cols = 5;
  m.row_offsets = {0, 2, 4, 4, 7};
  m.col_indices = {0, 2, 1, 4, 0, 3, 4};
  m.values = {1, 2, 3, 4, 5, 6, 7};
  return m;
}

using blockeigs::test::expect_mentions;
using blockeigs::test::input_error_message;
std::string validation_error(const CsrRows& rows) {
  return input_error_message([&] { blockeigs::validate(rows, "m.h5"); });
}

TEST(SliceRows, WholeRangeIsACopy) {
  const CsrRows m = sample();
  const CsrRows s = blockeigs::slice_rows(m, 0, 4);
  EXPECT_EQ(s.first_row, 0);
  EXPECT_EQ(s.row_offsets, m.row_offsets);
  EXPECT_EQ(s.col_indices, m.col_indices);
  EXPECT_EQ(s.values, m.values);
}

TEST(SliceRows, MiddleRowsAreRebased) {
  const CsrRows s = blockeigs::slice_rows(sample(), 1, 4);
  EXPECT_EQ(s.global_rows, 4);
  EXPECT_EQ(s.global_cols, 5);
  EXPECT_EQ(s.first_row, 1);
  EXPECT_EQ(s.local_rows(), 3);
  EXPECT_EQ(s.row_offsets, (std::vector<std::int64_t>{0, 2, 2, 5}));
  EXPECT_EQ(s.col_indices, (std::vector<std::int64_t>{1, 4, 0, 3, 4}));
  EXPECT_EQ(s.values, (std::vector<double>{3, 4, 5, 6, 7}));
  EXPECT_NO_THROW(blockeigs::validate(s, "slice"));
}

TEST(SliceRows, EmptyRangesAnywhere) {
  for (const std::int64_t at : {0, 2, 4}) {
    const CsrRows s = blockeigs::slice_rows(sample(), at, at);
    EXPECT_EQ(s.first_row, at);
    EXPECT_EQ(s.local_rows(), 0);
    EXPECT_EQ(s.nnz(), 0);
    EXPECT_EQ(s.row_offsets, std::vector<std::int64_t>{0});
    EXPECT_NO_THROW(blockeigs::validate(s, "slice"));
  }
}

TEST(SliceRows, RejectsBadRangesAndPartialInput) {
  using blockeigs::slice_rows;
  expect_mentions(input_error_message([] { slice_rows(sample(), 3, 5); }), {"[3, 5)", "4 rows"});
  expect_mentions(input_error_message([] { slice_rows(sample(), -1, 2); }), {"[-1, 2)"});
  expect_mentions(input_error_message([] { slice_rows(sample(), 3, 2); }), {"[3, 2)"});
  CsrRows part = blockeigs::slice_rows(sample(), 1, 3);
  expect_mentions(input_error_message([&] { slice_rows(part, 0, 1); }), {"not a whole matrix"});
}

TEST(SortAndSumDuplicates, SortsRowsAndSumsRepeats) {
  CsrRows m;
  m.global_rows = 3;
  m.global_cols = 4;
  m.row_offsets = {0, 4, 4, 7};
  m.col_indices = {3, 1, 3, 0, 2, 2, 2};
  m.values = {1, 2, 10, 4, 1, 2, 3};
  blockeigs::sort_and_sum_duplicates(m);
  EXPECT_EQ(m.row_offsets, (std::vector<std::int64_t>{0, 3, 3, 4}));
  EXPECT_EQ(m.col_indices, (std::vector<std::int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{4, 2, 11, 6}));
  EXPECT_NO_THROW(blockeigs::validate(m, "m"));
}

TEST(SortAndSumDuplicates, LeavesCanonicalRowsAlone) {
  CsrRows m = sample();
  blockeigs::sort_and_sum_duplicates(m);
  const CsrRows original = sample();
  EXPECT_EQ(m.row_offsets, original.row_offsets);
  EXPECT_EQ(m.col_indices, original.col_indices);
  EXPECT_EQ(m.values, original.values);
}

TEST(SortAndSumDuplicates, StartsAtTheFirstRowToFix) {
  CsrRows m;
  m.global_rows = 4;
  m.global_cols = 5;
  m.row_offsets = {0, 2, 2, 5, 7};
  m.col_indices = {0, 3, 4, 1, 4, 2, 2};
  m.values = {1, 2, 3, 4, 5, 6, 7};
  CsrRows all = m;
  blockeigs::sort_and_sum_duplicates(all);
  for (const std::int64_t from : {1, 2}) {  // rows 0 and 1 are canonical already
    CsrRows part = m;
    blockeigs::sort_and_sum_duplicates(part, from);
    EXPECT_EQ(part.row_offsets, all.row_offsets);
    EXPECT_EQ(part.col_indices, all.col_indices);
    EXPECT_EQ(part.values, all.values);
  }
  EXPECT_EQ(all.row_offsets, (std::vector<std::int64_t>{0, 2, 2, 4, 5}));
  EXPECT_EQ(all.col_indices, (std::vector<std::int64_t>{0, 3, 1, 4, 2}));
  EXPECT_EQ(all.values, (std::vector<double>{1, 2, 4, 8, 13}));
  CsrRows none = m;  // from past the last row: nothing is touched
  blockeigs::sort_and_sum_duplicates(none, 4);
  EXPECT_EQ(none.col_indices, m.col_indices);
}

TEST(Validate, AcceptsGoodBlocks) {
  EXPECT_NO_THROW(blockeigs::validate(sample(), "m.h5"));
  CsrRows empty;  // no rows at all, no offsets
  empty.global_rows = 4;
  empty.global_cols = 4;
  empty.first_row = 4;
  EXPECT_NO_THROW(blockeigs::validate(empty, "m.h5"));
}

TEST(Validate, NegativeSize) {
  CsrRows m = sample();
  m.global_cols = -1;
  expect_mentions(validation_error(m), {"m.h5", "negative"});
}

TEST(Validate, RowsOutsideTheMatrix) {
  CsrRows m = sample();
  m.first_row = 1;  // rows [1, 5) of a 4-row matrix
  expect_mentions(validation_error(m), {"m.h5", "[1, 5)", "4 rows"});
  m.first_row = -1;
  expect_mentions(validation_error(m), {"m.h5", "[-1, 3)"});
}

TEST(Validate, ValueCountDiffers) {
  CsrRows m = sample();
  m.values.pop_back();
  expect_mentions(validation_error(m), {"m.h5", "7 column indices but 6 values"});
}

TEST(Validate, OffsetsDoNotStartAtZero) {
  CsrRows m = sample();
  m.row_offsets[0] = 1;
  expect_mentions(validation_error(m), {"m.h5", "start at 1"});
}

TEST(Validate, OffsetsDecrease) {
  CsrRows m = sample();
  m.row_offsets = {0, 4, 2, 4, 7};
  expect_mentions(validation_error(m), {"m.h5", "decrease at row 1", "4 then 2"});
}

TEST(Validate, OffsetsEndBeforeNnz) {
  CsrRows m = sample();
  m.row_offsets.back() = 6;
  expect_mentions(validation_error(m), {"m.h5", "end at 6", "7 entries"});
}

TEST(Validate, EntriesWithoutOffsets) {
  CsrRows m = sample();
  m.row_offsets.clear();
  expect_mentions(validation_error(m), {"m.h5", "no row offsets"});
}

TEST(Validate, ColumnOutOfRangeNamesTheGlobalRow) {
  CsrRows m = blockeigs::slice_rows(sample(), 1, 4);
  m.col_indices[1] = 5;  // local row 0 is global row 1
  expect_mentions(validation_error(m), {"m.h5", "row 1 has column 5", "5 columns"});
  m.col_indices[1] = -2;
  expect_mentions(validation_error(m), {"m.h5", "row 1 has column -2"});
}

TEST(Validate, UnsortedAndRepeatedColumns) {
  CsrRows m = sample();
  std::swap(m.col_indices[0], m.col_indices[1]);
  expect_mentions(validation_error(m), {"m.h5", "row 0", "out of order or repeated", "2 then 0"});
  m = sample();
  m.col_indices[3] = 1;  // row 1: columns 1, 1
  expect_mentions(validation_error(m), {"m.h5", "row 1", "1 then 1"});
}

TEST(Validate, NonFiniteValues) {
  CsrRows m = sample();
  m.values[5] = std::numeric_limits<double>::quiet_NaN();
  expect_mentions(validation_error(m), {"m.h5", "row 3, column 3", "nan"});
  m.values[5] = -std::numeric_limits<double>::infinity();
  expect_mentions(validation_error(m), {"m.h5", "row 3, column 3", "inf"});
}

}  // namespace
