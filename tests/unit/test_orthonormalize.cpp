// condition_against (LOBPCG's W against [X P]) on the host: the fused first
// pass, taken where Q and W are adjacent columns of one block, against the
// explicit pass it replaces (Q and W apart), and the cases where it must
// step aside: a column nearly inside span(Q), and one exactly inside it.
// One MPI rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <utility>
#include <vector>

#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/orthonormalize.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/test_matrices.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;

const dense::Context& host() { return test::host_context(); }

constexpr std::int64_t rows = 3000, q = 12, w = 7;
const auto tol = solver::OrthonormalizeTolerances::for_type<double>();

dense::ConstDenseView<double> cview(dense::DenseView<double> v) { return v; }

// [Q | W] in one block (ld q + w + 1): Q orthonormal, W random plus a part
// inside span(Q) (so the projection has work to do); `inside` columns of W
// get `leftover` times their random part only.
dense::DenseBlock<double> q_then_w(std::uint64_t seed, std::int64_t inside, double leftover) {
  dense::DenseBlock<double> b = test::random_block<double>(rows, q + w, seed, q + w + 1);
  const dense::DenseView<double> Q = solver::column_range(b.view(), 0, q);
  dense::DenseBlock<double> scratch(Space::host, rows, q);
  EXPECT_EQ(solver::orthonormalize<double>(host(), MPI_COMM_WORLD, Q, scratch.view(), tol), q);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < w; ++j) {
      double& x = b.view()(i, q + j);
      x = (j < inside ? leftover : 1.0) * x + 0.5 * b.view()(i, j % q) - 0.25 * b.view()(i, (j + 3) % q);
    }
  return b;
}

// The same W in a block of its own, so that condition_against cannot fuse.
dense::DenseBlock<double> w_apart(const dense::DenseBlock<double>& both) {
  dense::DenseBlock<double> W(Space::host, rows, w);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < w; ++j) W.view()(i, j) = both.view()(i, q + j);
  return W;
}

// max |Q^T W| and the spread of W^T W's eigenvalues, through its diagonal and
// off-diagonal (a well-conditioned basis from one SVQB pass is within ~1e-10
// of orthonormal here).
void expect_well_conditioned_and_orthogonal(dense::ConstDenseView<double> Q, dense::ConstDenseView<double> W) {
  const HostMatrix C = solver::gram<double>(host(), MPI_COMM_WORLD, Q, W);
  for (double c : C.values()) EXPECT_LT(std::abs(c), 1e-12);
  const HostMatrix G = solver::gram<double>(host(), MPI_COMM_WORLD, W);
  for (std::int64_t i = 0; i < G.rows(); ++i)
    for (std::int64_t j = 0; j < G.cols(); ++j) EXPECT_NEAR(G(i, j), i == j ? 1.0 : 0.0, 1e-8);
}

// span(A) == span(B) for two near-orthonormal blocks of equal width:
// B = A (A^T B) to rounding.
void expect_same_span(dense::ConstDenseView<double> A, dense::ConstDenseView<double> B) {
  ASSERT_EQ(A.cols, B.cols);
  const HostMatrix AtB = solver::gram<double>(host(), MPI_COMM_WORLD, A, B);
  dense::DenseBlock<double> AAtB(Space::host, rows, B.cols);
  solver::block_update<double>(host(), 1.0, A, AtB, 0.0, AAtB.view());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < B.cols; ++j) EXPECT_NEAR(AAtB.view()(i, j), B(i, j), 1e-9);
}

// condition_against on W next to Q and on a copy of W apart (the fused pass
// measures [Q W]^T W over the one block or over the two), and
// orthonormalize_against (always the explicit passes) on another copy: all
// keep every column, and give well-conditioned bases of the same span.
void check_adjacent_and_apart(std::uint64_t seed, std::int64_t inside, double leftover) {
  auto both = q_then_w(seed, inside, leftover);
  auto apart = w_apart(both), explicit_passes = w_apart(both);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  const dense::ConstDenseView<double> Q = solver::column_range(both.cview(), 0, q);
  const dense::DenseView<double> W = solver::column_range(both.view(), q, w);
  EXPECT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Q, W, scratch.view(), tol), w);
  EXPECT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Q, apart.view(), scratch.view(), tol), w);
  EXPECT_EQ(
      solver::orthonormalize_against<double>(host(), MPI_COMM_WORLD, Q, explicit_passes.view(), scratch.view(), tol),
      w);
  expect_well_conditioned_and_orthogonal(Q, cview(W));
  expect_well_conditioned_and_orthogonal(Q, apart.cview());
  expect_same_span(cview(W), apart.cview());
  expect_same_span(cview(W), explicit_passes.cview());
}

TEST(ConditionAgainst, FusedPassMatchesTheExplicitOne) { check_adjacent_and_apart(1, 0, 1.0); }

// A column that keeps only ~1e-8 of its squared norm after the projection:
// the derived Gram matrix would be mostly rounding there, so the explicit
// pass runs (and, as before, repeats where one pass was not safe).
TEST(ConditionAgainst, NearlyDependentColumnTakesTheExplicitPass) { check_adjacent_and_apart(2, 1, 1e-4); }

// A column exactly inside span(Q) is dropped, the rest kept, packed in front.
TEST(ConditionAgainst, ColumnInsideSpanQIsDropped) {
  auto both = q_then_w(3, 2, 0.0);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  const dense::ConstDenseView<double> Q = solver::column_range(both.cview(), 0, q);
  const dense::DenseView<double> W = solver::column_range(both.view(), q, w);
  const std::int64_t kept = solver::condition_against<double>(host(), MPI_COMM_WORLD, Q, W, scratch.view(), tol);
  EXPECT_EQ(kept, w - 2);
  expect_well_conditioned_and_orthogonal(Q, cview(solver::column_range(W, 0, kept)));
}

// BasisOptions: where the fused pass made W, [Q W]^T W derived on the host
// matches the measured one; for a Q that is only nearly orthonormal (a
// carried [X P] is, to rounding), once Q^T Q is passed in. Where the explicit
// pass ran, nothing is derived.
void expect_derived_gram_matches(double q_scale, bool pass_q_gram) {
  auto both = q_then_w(4, 0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i) both.view()(i, 0) *= q_scale;  // Q^T Q != I unless scale is 1
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  const dense::ConstDenseView<double> Q = solver::column_range(both.cview(), 0, q);
  const dense::DenseView<double> W = solver::column_range(both.view(), q, w);
  const HostMatrix QtQ = solver::gram<double>(host(), MPI_COMM_WORLD, Q);
  solver::BasisOptions basis;
  basis.q_gram = pass_q_gram ? &QtQ : nullptr;
  ASSERT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Q, W, scratch.view(), tol, &basis), w);
  const dense::ConstDenseView<double> QW{Space::host, rows, q + w, both.view().ld, both.view().data};
  const HostMatrix measured = solver::gram<double>(host(), MPI_COMM_WORLD, QW, cview(W));
  ASSERT_EQ(basis.w_gram.rows(), q + w);
  ASSERT_EQ(basis.w_gram.cols(), w);
  for (std::int64_t i = 0; i < q + w; ++i)
    for (std::int64_t j = 0; j < w; ++j) EXPECT_NEAR(basis.w_gram(i, j), measured(i, j), 1e-12) << i << "," << j;
}

TEST(ConditionAgainst, DerivedBasisGramMatchesTheMeasuredOne) { expect_derived_gram_matches(1.0, false); }

TEST(ConditionAgainst, DerivedBasisGramUsesQsGramMatrix) {
  expect_derived_gram_matches(1.0 + 1e-6, true);
  // Assuming Q orthonormal here would be off by ~1e-6 in Q^T W's first row:
  // the check above could not pass without Q^T Q.
}

TEST(ConditionAgainst, NoDerivedGramAfterTheExplicitPass) {
  auto both = q_then_w(2, 1, 1e-4);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  solver::BasisOptions basis;
  basis.w_gram = HostMatrix(3, 3);
  solver::condition_against<double>(host(), MPI_COMM_WORLD, solver::column_range(both.cview(), 0, q),
                                    solver::column_range(both.view(), q, w), scratch.view(), tol, &basis);
  EXPECT_EQ(basis.w_gram.rows(), 0);
}

// BasisOptions::columns (soft locking): the same [Q | W] twice, conditioned
// once with a selection of W's columns and once after compacting them by
// hand (keep_columns), both through condition_against.
struct SelectionRun {
  std::vector<std::int64_t> selected;
  std::int64_t n;
  dense::DenseBlock<double> fused, compacted;
  dense::ConstDenseView<double> Qf, Qc;
  dense::DenseView<double> Wf, Wc;
  solver::BasisOptions options;
  SelectionRun(std::vector<std::int64_t> columns, std::uint64_t seed, std::int64_t inside, double leftover)
      : selected(std::move(columns)),
        n(static_cast<std::int64_t>(selected.size())),
        fused(q_then_w(seed, inside, leftover)),
        compacted(q_then_w(seed, inside, leftover)),
        Qf(solver::column_range(fused.cview(), 0, q)),
        Qc(solver::column_range(compacted.cview(), 0, q)),
        Wf(solver::column_range(fused.view(), q, w)),
        Wc(solver::column_range(compacted.view(), q, w)) {
    options.columns = &selected;
  }
  void condition_both_ways(dense::DenseView<double> scratch) {
    ASSERT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Qf, Wf, scratch, tol, &options), n);
    solver::keep_columns<double>(host(), Wc, selected);
    ASSERT_EQ(
        solver::condition_against<double>(host(), MPI_COMM_WORLD, Qc, solver::column_range(Wc, 0, n), scratch, tol), n);
  }
};

// Selecting columns 1, 3, 4 and 6 of W (more than half: the fused pass picks
// them itself) gives what compacting them first gives, and its derived Gram
// matrix is the measured one; with W apart from Q the fused pass runs too
// (its Gram matrix over the two blocks), and gives the same span.
TEST(ConditionAgainst, SelectedColumnsMatchCompactingFirst) {
  SelectionRun r({1, 3, 4, 6}, 5, 0, 1.0);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  r.condition_both_ways(scratch.view());
  if (HasFatalFailure()) return;
  const std::int64_t n = r.n;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_NEAR(r.Wf(i, j), r.Wc(i, j), 1e-12) << i << "," << j;
  const dense::ConstDenseView<double> QW{Space::host, rows, q + n, r.fused.view().ld, r.fused.view().data};
  const HostMatrix measured = solver::gram<double>(host(), MPI_COMM_WORLD, QW, cview(solver::column_range(r.Wf, 0, n)));
  ASSERT_EQ(r.options.w_gram.rows(), q + n);
  for (std::int64_t i = 0; i < q + n; ++i)
    for (std::int64_t j = 0; j < n; ++j) EXPECT_NEAR(r.options.w_gram(i, j), measured(i, j), 1e-12);

  auto apart_source = q_then_w(5, 0, 1.0);
  auto apart = w_apart(apart_source);
  const dense::ConstDenseView<double> Qa = solver::column_range(apart_source.cview(), 0, q);
  ASSERT_EQ(
      solver::condition_against<double>(host(), MPI_COMM_WORLD, Qa, apart.view(), scratch.view(), tol, &r.options), n);
  EXPECT_EQ(r.options.w_gram.rows(), q + n);  // the fused pass ran
  expect_well_conditioned_and_orthogonal(Qa, cview(solver::column_range(apart.view(), 0, n)));
  expect_same_span(cview(solver::column_range(apart.view(), 0, n)), cview(solver::column_range(r.Wf, 0, n)));
}

// The same where the fused pass must step aside (column 0, selected, nearly
// inside span(Q)): the selected columns are compacted and take the explicit
// passes, reusing the fused pass's Q^T W, and give the span that compacting
// first gives.
TEST(ConditionAgainst, SelectedColumnsWhenTheFusedPassStepsAside) {
  SelectionRun r({0, 2, 5, 6}, 6, 1, 1e-4);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  r.condition_both_ways(scratch.view());
  if (HasFatalFailure()) return;
  EXPECT_EQ(r.options.w_gram.rows(), 0);  // the explicit passes ran
  expect_well_conditioned_and_orthogonal(r.Qf, cview(solver::column_range(r.Wf, 0, r.n)));
  expect_same_span(cview(solver::column_range(r.Wf, 0, r.n)), cview(solver::column_range(r.Wc, 0, r.n)));
}

// BasisOptions::implicit: where the fused pass runs, W is left raw (the
// selected columns 1, 3, 4, 6 moved to the front) and returned as
// coefficients; Q w_from_q + Z w_from_z is the W that the same call forms
// without `implicit`, with the same derived Gram matrix. Where the explicit
// passes run, W is formed and no coefficients come back.
TEST(ConditionAgainst, ImplicitFormIsTheFormedBasis) {
  const std::vector<std::int64_t> selected{1, 3, 4, 6};
  const auto n = static_cast<std::int64_t>(selected.size());
  auto formed = q_then_w(7, 0, 1.0), raw = q_then_w(7, 0, 1.0);
  dense::DenseBlock<double> scratch(Space::host, rows, w);
  solver::BasisOptions plain, implicit;
  plain.columns = implicit.columns = &selected;
  implicit.implicit = true;
  const dense::ConstDenseView<double> Qf = solver::column_range(formed.cview(), 0, q);
  const dense::ConstDenseView<double> Qr = solver::column_range(raw.cview(), 0, q);
  ASSERT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Qf, solver::column_range(formed.view(), q, w),
                                              scratch.view(), tol, &plain),
            n);
  const auto original = q_then_w(7, 0, 1.0);
  ASSERT_EQ(solver::condition_against<double>(host(), MPI_COMM_WORLD, Qr, solver::column_range(raw.view(), q, w),
                                              scratch.view(), tol, &implicit),
            n);
  EXPECT_EQ(plain.w_from_z.rows(), 0);
  ASSERT_EQ(implicit.w_from_q.rows(), q);
  ASSERT_EQ(implicit.w_from_q.cols(), n);
  ASSERT_EQ(implicit.w_from_z.rows(), n);
  ASSERT_EQ(implicit.w_from_z.cols(), n);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      // The raw columns, compacted, untouched otherwise.
      EXPECT_EQ(raw.view()(i, q + j), original.view()(i, q + selected[j]));
      double v = 0;
      for (std::int64_t c = 0; c < q; ++c) v += Qr(i, c) * implicit.w_from_q(c, j);
      for (std::int64_t c = 0; c < n; ++c) v += raw.view()(i, q + c) * implicit.w_from_z(c, j);
      EXPECT_NEAR(v, formed.view()(i, q + j), 1e-12) << i << "," << j;
    }
  ASSERT_EQ(implicit.w_gram.rows(), plain.w_gram.rows());
  for (std::size_t e = 0; e < plain.w_gram.values().size(); ++e)
    EXPECT_EQ(implicit.w_gram.values()[e], plain.w_gram.values()[e]);

  auto dependent = q_then_w(2, 1, 1e-4);
  implicit.columns = nullptr;
  ASSERT_EQ(
      solver::condition_against<double>(host(), MPI_COMM_WORLD, solver::column_range(dependent.cview(), 0, q),
                                        solver::column_range(dependent.view(), q, w), scratch.view(), tol, &implicit),
      w);
  EXPECT_EQ(implicit.w_from_q.rows(), 0);
  EXPECT_EQ(implicit.w_from_z.rows(), 0);
  expect_well_conditioned_and_orthogonal(solver::column_range(dependent.cview(), 0, q),
                                         cview(solver::column_range(dependent.view(), q, w)));
}

}  // namespace
}  // namespace blockeigs
