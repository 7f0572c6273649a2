#include "solver/operator/replicated_csr.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "dense/memory.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/symmetry_check.hpp"

namespace blockeigs::solver {
namespace {

using Kind = CsrProblem::Kind;

// Entry i of an index array of either width, in host memory.
std::int64_t at(const void* array, bool wide, std::int64_t i) {
  return wide ? static_cast<const std::int64_t*>(array)[i] : std::int64_t{static_cast<const std::int32_t*>(array)[i]};
}

// The host loops over host arrays: the device kernels' twin.
struct HostView {
  const ReplicatedCsr& a;
  std::int64_t offset(std::int64_t r) const { return at(a.offsets, a.wide, r); }
  std::int64_t column(std::int64_t k) const { return at(a.columns, a.wide, k); }
  // Part `part` (0 real, 1 imaginary) of entry k's value.
  double part(std::int64_t k, int p) const { return a.complex ? a.values[2 * k + p] : a.values[k]; }
  bool finite(std::int64_t k) const { return std::isfinite(part(k, 0)) && std::isfinite(part(k, a.complex ? 1 : 0)); }
  // The position of A(row, col), -1 where it is not stored (a row's columns ascend).
  std::int64_t position(std::int64_t row, std::int64_t col) const {
    std::int64_t lo = offset(row), hi = offset(row + 1);
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (column(mid) < col)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo < offset(row + 1) && column(lo) == col ? lo : -1;
  }
  // Part `p` of A(row, col), 0 where it is not stored.
  double stored(std::int64_t row, std::int64_t col, int p = 0) const {
    const std::int64_t k = position(row, col);
    return k < 0 ? 0.0 : part(k, p);
  }
};

bool close(double aij, double aji) { return std::abs(aij - aji) <= 1e-12 * std::max(std::abs(aij), std::abs(aji)); }

bool on_device(const ReplicatedCsr& a, const dense::Context* context) {
  if (a.space != Space::device) return false;
  if (!context || context->space() != Space::device) throw Error("replicated CSR: device arrays need a device context");
  return true;
}

// A copy of array[first, first + count), wherever the array is.
template <class U>
std::vector<U> fetch(const ReplicatedCsr& a, const void* array, std::int64_t first, std::int64_t count) {
  std::vector<U> out(static_cast<std::size_t>(count));
  if (count > 0)
    dense::copy_bytes(out.data(), Space::host, static_cast<const U*>(array) + first, a.space, sizeof(U) * out.size());
  return out;
}

std::vector<std::int64_t> fetch_indices(const ReplicatedCsr& a, const void* array, std::int64_t first,
                                        std::int64_t count) {
  if (a.wide) return fetch<std::int64_t>(a, array, first, count);
  const std::vector<std::int32_t> narrow = fetch<std::int32_t>(a, array, first, count);
  return std::vector<std::int64_t>(narrow.begin(), narrow.end());
}

}  // namespace

CsrProblem find_offsets_problem(const ReplicatedCsr& a, const dense::Context* context) {
  if (on_device(a, context)) return find_offsets_problem_on_device(a, *context);
  const HostView v{a};
  if (v.offset(0) != 0) return {Kind::offsets_start};
  if (v.offset(a.n) != a.nnz) return {Kind::offsets_end};
  for (std::int64_t r = 0; r < a.n; ++r)
    if (v.offset(r + 1) < v.offset(r)) return {Kind::offsets_decrease, r};
  return {};
}

CsrProblem find_entry_problem(const ReplicatedCsr& a, const dense::Context* context) {
  if (on_device(a, context)) return find_entry_problem_on_device(a, *context);
  const HostView v{a};
  for (std::int64_t i = a.begin; i < a.end; ++i)
    for (std::int64_t k = v.offset(i); k < v.offset(i + 1); ++k) {
      const std::int64_t c = v.column(k);
      if (c < 0 || c >= a.n || (k > v.offset(i) && c <= v.column(k - 1)) || !v.finite(k)) return {Kind::entry, i, k};
    }
  return {};
}

CsrProblem find_asymmetry(const ReplicatedCsr& a, const dense::Context* context) {
  if (a.complex) throw Error("find_asymmetry: complex values take find_hermitian_problem");
  if (on_device(a, context)) return find_asymmetry_on_device(a, *context);
  const HostView v{a};
  for (std::int64_t i = a.begin; i < a.end; ++i)
    for (std::int64_t k = v.offset(i); k < v.offset(i + 1); ++k) {
      const std::int64_t j = v.column(k);
      if (j == i) continue;
      const double aij = a.values[k], aji = v.stored(j, i);
      if (!close(aij, aji)) return {Kind::asymmetric, i, k, j, aij, aji};
    }
  return {};
}

CsrProblem find_hermitian_problem(const ReplicatedCsr& a, HermitianPart part, const dense::Context* context) {
  if (!a.complex) throw Error("find_hermitian_problem: real values take find_asymmetry");
  if (on_device(a, context)) return find_hermitian_problem_on_device(a, part, *context);
  const HostView v{a};
  for (std::int64_t i = a.begin; i < a.end; ++i)
    for (std::int64_t k = v.offset(i); k < v.offset(i + 1); ++k) {
      const std::int64_t j = v.column(k);
      if (part == HermitianPart::diagonal) {
        if (j == i && v.part(k, 1) != 0) return {Kind::imaginary_diagonal, i, k, j, v.part(k, 1), 0};
      } else if (j != i) {
        const int p = part == HermitianPart::real ? 0 : 1;
        const double aij = v.part(k, p), aji = v.stored(j, i, p);
        if (!close(aij, p == 0 ? aji : -aji))
          return {p == 0 ? Kind::real_part : Kind::imaginary_part, i, k, j, aij, aji};
      }
    }
  return {};
}

std::string problem_message(const ReplicatedCsr& a, const CsrProblem& p, const std::string& description) {
  switch (p.kind) {
    case Kind::none: return {};
    case Kind::offsets_start:
      return detail::concat(description, ": row offsets start at ", fetch_indices(a, a.offsets, 0, 1)[0], ", not 0");
    case Kind::offsets_end:
      return detail::concat(description, ": row offsets end at ", fetch_indices(a, a.offsets, a.n, 1)[0],
                            " but there are ", a.nnz, " entries");
    case Kind::offsets_decrease: {
      const std::vector<std::int64_t> o = fetch_indices(a, a.offsets, p.row, 2);
      return detail::concat(description, ": row offsets decrease at row ", p.row, " (", o[0], " then ", o[1], ")");
    }
    case Kind::entry: {
      ReplicatedCsr row = a;  // the offending row alone, checked by validate: its message, by construction
      row.begin = p.row;
      row.end = p.row + 1;
      try {
        if (a.complex)
          validate(host_complex_rows(row), description);
        else
          validate(host_rows(row), description);
      } catch (const InputError& e) {
        return e.what();
      }
      return detail::concat(description, ": row ", p.row, " holds a bad entry");  // not reached
    }
    case Kind::asymmetric: return asymmetry_message(description, "A", p.row, p.column, p.value, p.transpose);
    case Kind::imaginary_diagonal: return imaginary_diagonal_message(description, p.row, p.value);
    case Kind::real_part: return real_part_message(description, p.row, p.column, p.value, p.transpose);
    case Kind::imaginary_part: return imaginary_part_message(description, p.row, p.column, p.value, p.transpose);
  }
  return {};
}

void check_replicated(MPI_Comm comm, const ReplicatedCsr& a, const dense::Context* context,
                      const std::string& description) {
  const auto agree = [&](const CsrProblem& found) {
    const std::string message = problem_message(a, found, description);
    if (!message.empty()) throw InputError(message);
  };
  collectively(comm, [&] { agree(find_offsets_problem(a, context)); });
  collectively(comm, [&] { agree(find_entry_problem(a, context)); });
  if (!a.complex) return collectively(comm, [&] { agree(find_asymmetry(a, context)); });
  for (const HermitianPart part : {HermitianPart::diagonal, HermitianPart::real, HermitianPart::imaginary})
    collectively(comm, [&] { agree(find_hermitian_problem(a, part, context)); });
}

namespace {

template <class V>
CsrRowsOf<V> rows_of(const ReplicatedCsr& a) {
  CsrRowsOf<V> rows;
  rows.global_rows = rows.global_cols = a.n;
  rows.first_row = a.begin;
  rows.row_offsets = fetch_indices(a, a.offsets, a.begin, a.local_rows() + 1);
  const std::int64_t base = rows.row_offsets.front(), count = rows.row_offsets.back() - base;
  for (std::int64_t& o : rows.row_offsets) o -= base;
  rows.col_indices = fetch_indices(a, a.columns, base, count);
  rows.values = fetch<V>(a, a.values, base, count);  // a complex value is two doubles, as std::complex lays them
  return rows;
}

}  // namespace

CsrRows host_rows(const ReplicatedCsr& a) {
  if (a.complex) throw Error("host_rows: the replicated matrix holds complex values (host_complex_rows)");
  return rows_of<double>(a);
}

ComplexCsrRows host_complex_rows(const ReplicatedCsr& a) {
  if (!a.complex) throw Error("host_complex_rows: the replicated matrix holds real values (host_rows)");
  return rows_of<std::complex<double>>(a);
}

}  // namespace blockeigs::solver
