// Two blocks of CSR rows equal in every field (readers against a reference).
#pragma once

#include <gtest/gtest.h>

#include "core/csr_rows.hpp"

namespace blockeigs::test {

inline void expect_same_rows(const CsrRows& got, const CsrRows& want) {
  EXPECT_EQ(got.global_rows, want.global_rows);
  EXPECT_EQ(got.global_cols, want.global_cols);
  EXPECT_EQ(got.first_row, want.first_row);
  EXPECT_EQ(got.row_offsets, want.row_offsets);
  EXPECT_EQ(got.col_indices, want.col_indices);
  EXPECT_EQ(got.values, want.values);
}

}  // namespace blockeigs::test
