#include "solver/base/linear_operator.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace blockeigs::solver {
namespace {

// Where a block lies on a grid of rows `pitch` bytes long that starts at
// `offset` bytes before it: grid rows [r0, r1), bytes [c0, c1) of each. A
// block whose rows run past the end of a grid row is two pieces.
struct Piece {
  std::int64_t r0, r1, c0, c1;
};

int pieces(const BlockExtent& b, std::int64_t offset, std::int64_t pitch, std::array<Piece, 2>& out) {
  const std::int64_t row = offset / pitch, column = offset % pitch;
  const std::int64_t width = b.cols * static_cast<std::int64_t>(b.element_bytes);
  out[0] = {row, row + b.rows, column, std::min(column + width, pitch)};
  if (column + width <= pitch) return 1;
  out[1] = {row + 1, row + 1 + b.rows, 0, column + width - pitch};
  return 2;
}

bool intersect(const Piece& a, const Piece& b) { return a.r0 < b.r1 && b.r0 < a.r1 && a.c0 < b.c1 && b.c0 < a.c1; }

std::int64_t pitch(const BlockExtent& b) { return b.ld * static_cast<std::int64_t>(b.element_bytes); }

}  // namespace

bool blocks_overlap(const BlockExtent& a, const BlockExtent& b) {
  if (a.rows <= 0 || a.cols <= 0 || b.rows <= 0 || b.cols <= 0 || !a.data || !b.data) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data), b0 = reinterpret_cast<std::uintptr_t>(b.data);
  const auto end = [](const BlockExtent& x, std::uintptr_t x0) {
    return x0 + static_cast<std::uintptr_t>((x.rows - 1) * pitch(x) + x.cols * std::int64_t(x.element_bytes));
  };
  if (end(a, a0) <= b0 || end(b, b0) <= a0) return false;  // disjoint byte ranges
  // A single row fits any pitch; two blocks with different pitches whose
  // byte ranges meet are taken to overlap.
  const std::int64_t p = a.rows == 1 ? pitch(b) : pitch(a);
  if (p <= 0 || (a.rows > 1 && b.rows > 1 && pitch(a) != pitch(b))) return true;
  if (a.cols * std::int64_t(a.element_bytes) > p || b.cols * std::int64_t(b.element_bytes) > p) return true;
  const std::uintptr_t base = std::min(a0, b0);
  std::array<Piece, 2> pa{}, pb{};
  const int na = pieces(a, static_cast<std::int64_t>(a0 - base), p, pa);
  const int nb = pieces(b, static_cast<std::int64_t>(b0 - base), p, pb);
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j)
      if (intersect(pa[i], pb[j])) return true;
  return false;
}

void check_apply_arguments(const char* call, std::int64_t local_rows, Space space, const BlockExtent& X,
                           const BlockExtent& Y) {
  if (X.rows != local_rows || Y.rows != local_rows)
    fail_input("LinearOperator::", call, ": X is ", X.rows, " x ", X.cols, " and Y is ", Y.rows, " x ", Y.cols,
               ", but this rank owns ", local_rows, " rows of the operator (X and Y need one row per local row)");
  if (X.cols != Y.cols)
    fail_input("LinearOperator::", call, ": X has ", X.cols, " columns but Y has ", Y.cols, " (Y = A X has X's width)");
  for (const auto& [name, b] : {std::pair<const char*, const BlockExtent&>{"X", X}, {"Y", Y}})
    if (b.rows > 1 && b.ld < b.cols)
      fail_input("LinearOperator::", call, ": ", name, "'s leading dimension ", b.ld, " is smaller than its ", b.cols,
                 " columns");
  if (X.space != space || Y.space != space)
    fail_input("LinearOperator::", call, ": X is in ", to_string(X.space), " memory and Y in ", to_string(Y.space),
               " memory, but the operator works in ", to_string(space), " memory (its context's space)");
  if (blocks_overlap(X, Y))
    fail_input("LinearOperator::", call,
               ": X and Y overlap in memory; Y must be a separate block (it is written while X is read)");
}

}  // namespace blockeigs::solver
