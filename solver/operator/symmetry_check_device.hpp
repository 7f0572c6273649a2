// The symmetry check's lookups on the device (symmetry_check.cpp): a rank's
// rows uploaded once, each entry compared with its transpose by a binary
// search in the transposed row, by a thread a row. The device only says
// whether some entry mismatches; the host check then names the smallest, so
// the message is the same whichever ran. cuda/symmetry_check_device.cu, or a
// stub that throws where the build has no CUDA.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/csr_rows.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver {

// What the pass over a rank's own entries found.
struct DeviceLocalPass {
  bool mismatch = false;                  // some (i, j) with j local differs from A(j, i)
  std::vector<std::int64_t> remote_rows;  // local rows with entries whose columns other ranks own, ascending
};

class DeviceSymmetryRows {
 public:
  // Uploads `rows` to the device of `context`; false from fits() where the
  // device lacks room for them and `received` entries beside them.
  static bool fits(const CsrRows& rows, std::int64_t received);
  DeviceSymmetryRows(const dense::Context& context, const CsrRows& rows);
  ~DeviceSymmetryRows();
  DeviceSymmetryRows(const DeviceSymmetryRows&) = delete;
  DeviceSymmetryRows& operator=(const DeviceSymmetryRows&) = delete;

  DeviceLocalPass local_pass() const;
  // Entries received from other ranks: (row[e], a local row; col[e]; value[e]),
  // each compared with A(first_row + row[e], col[e])'s transpose here. True
  // where some mismatch.
  template <class Index>
  bool received_mismatch(const std::vector<Index>& row, const std::vector<Index>& col,
                         const std::vector<double>& value) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace blockeigs::solver
