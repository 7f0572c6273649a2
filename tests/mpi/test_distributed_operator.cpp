// The distributed operator against the single-rank reference product, at
// every rank count the suite runs (1, 2, 3, 4), on the CPU backend.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "core/checks.hpp"
#include "io/generators/generators.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "io/matrix_market.hpp"
#include "operator_check.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/halo/halo_plan.hpp"
#include "solver/operator/load_matrix.hpp"
#include "test_matrices.hpp"
#include "tests/support/csr_test_operator.hpp"

namespace blockeigs {
namespace {

using solver::RowPartition;
using test::check_distributed_apply;

const std::int64_t widths[] = {1, 3, 16, 64};

CsrRows generated(io::GeneratorSpec spec) { return io::generate_rows(spec, 0, io::generated_rows(spec)); }

RowPartition balanced(const CsrRows& whole) { return RowPartition::balanced(whole.row_offsets, test::mpi_size()); }

// The operator of `whole` over MPI_COMM_WORLD, one rank without rows from np 2.
std::unique_ptr<solver::DistributedOperator<double>> operator_with_empty_rank(const dense::Context& context,
                                                                              const CsrRows& whole) {
  const RowPartition partition = test::partition_with_empty_rank(whole.global_rows, test::mpi_size());
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  return std::make_unique<solver::DistributedOperator<double>>(
      MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
}

TEST(DistributedOperator, Laplacians) {
  const auto context = dense::Context::host();
  io::GeneratorSpec one{io::GeneratorKind::laplacian_1d, 37, 1, 1, 3};
  io::GeneratorSpec two{io::GeneratorKind::laplacian_2d, 9, 7, 1, 5};
  io::GeneratorSpec three{io::GeneratorKind::laplacian_3d, 5, 4, 6, 7};
  io::GeneratorSpec three27{io::GeneratorKind::laplacian_3d, 5, 6, 4, 27};
  for (const auto& spec : {one, two, three, three27}) {
    const CsrRows whole = generated(spec);
    for (std::int64_t w : widths)
      check_distributed_apply<double>(context, whole, balanced(whole), w, io::describe(spec));
  }
}

TEST(DistributedOperator, RandomSpdAndPowerLaw) {
  const auto context = dense::Context::host();
  io::GeneratorSpec spd;
  spd.kind = io::GeneratorKind::random_spd;
  spd.n = 301;
  spd.nnz_per_row = 6;
  spd.seed = 3;
  const CsrRows random = generated(spd);
  const CsrRows power = test::power_law_matrix(500, 400, 11);
  for (std::int64_t w : widths) {
    check_distributed_apply<double>(context, random, balanced(random), w, "random SPD");
    check_distributed_apply<double>(context, power, balanced(power), w, "power law");
  }
  check_distributed_apply<float>(context, power, balanced(power), 17, "power law, fp32");
}

// A Hermitian matrix whose entry (i, j) is a real symmetric one's times
// e^{i 0.3 (j - i)}: complex off the diagonal, conjugate across it.
ComplexCsrRows hermitian_from(const CsrRows& real) {
  ComplexCsrRows out{real.global_rows, real.global_cols, real.first_row, real.row_offsets, real.col_indices, {}};
  for (std::int64_t i = 0; i < real.local_rows(); ++i)
    for (std::int64_t p = real.row_offsets[i]; p < real.row_offsets[i + 1]; ++p)
      out.values.push_back(real.values[p] * std::polar(1.0, 0.3 * double(real.col_indices[p] - real.first_row - i)));
  return out;
}

// Complex operators (complex double and complex single): rows of twice the
// reals through every transport's halo, at every rank count and with a rank
// that holds no rows.
TEST(DistributedOperator, ComplexHermitian) {
  const auto context = dense::Context::host();
  io::TwistedLaplacian twisted{5, 4, 6, {0.7, -1.1, 2.3}};
  const ComplexCsrRows bloch = io::twisted_laplacian_rows(twisted, 0, 120);
  const ComplexCsrRows power = hermitian_from(test::power_law_matrix(500, 400, 11));
  const int ranks = test::mpi_size();
  for (std::int64_t w : {1, 3, 16}) {
    test::check_complex_apply<std::complex<double>>(context, bloch, test::partition_with_empty_rank(120, ranks), w,
                                                    "twisted Laplacian, an empty rank");
    test::check_complex_apply<std::complex<double>>(context, power, RowPartition::balanced(power.row_offsets, ranks), w,
                                                    "power law");
  }
  test::check_complex_apply<std::complex<float>>(context, power, RowPartition::balanced(power.row_offsets, ranks), 5,
                                                 "power law, complex single");
}

// A complex double operator's single-precision copy (the mixed filter's): the products of the complex single
// operator of the same rows, through the parent's halo (complex fp32 rows in its fp64 words), at odd and even widths.
TEST(DistributedOperator, ComplexRoundedToSingle) {
  using CF = std::complex<float>;
  const auto context = dense::Context::host();
  const ComplexCsrRows power = hermitian_from(test::power_law_matrix(500, 400, 11));
  const RowPartition partition = test::partition_with_empty_rank(power.global_rows, test::mpi_size());
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  const ComplexCsrRows mine = slice_rows(power, partition.begin(rank), partition.end(rank));
  solver::DistributedOperator<std::complex<double>> parent(MPI_COMM_WORLD, context, mine, partition);
  solver::DistributedOperator<CF> single(MPI_COMM_WORLD, context, mine, partition);
  const std::unique_ptr<solver::LinearOperator<CF>> rounded = parent.rounded_to_single();
  ASSERT_TRUE(rounded);
  const std::int64_t m = partition.rows(rank);
  for (const std::int64_t w : {1, 4, 7}) {
    dense::DenseBlock<CF> X(Space::host, m, w), Y1(Space::host, m, w), Y2(Space::host, m, w);
    for (std::int64_t e = 0; e < m * w; ++e) X.data()[e] = CF(float(e % 13) - 6.0f, float(e % 7) * 0.5f);
    rounded->apply(CF(1), X.cview(), CF(0), Y1.view());
    single.apply(CF(1), X.cview(), CF(0), Y2.view());
    for (std::int64_t e = 0; e < m * w; ++e) ASSERT_EQ(Y1.data()[e], Y2.data()[e]) << "width " << w << ", entry " << e;
  }
}

// X in fp32 (LOBPCG's residual block in its search precision): the halo
// moves fp32 rows (even widths) or the block is widened first (odd ones).
TEST(DistributedOperator, SingleInputMatchesReference) {
  const auto context = dense::Context::host();
  io::GeneratorSpec three{io::GeneratorKind::laplacian_3d, 5, 4, 6, 7};
  const CsrRows cube = generated(three), power = test::power_law_matrix(500, 400, 11);
  for (const CsrRows* whole : {&cube, &power}) {
    const RowPartition partition = balanced(*whole);
    const int rank = test::mpi_rank(MPI_COMM_WORLD);
    solver::DistributedOperator<double> op(MPI_COMM_WORLD, context,
                                           slice_rows(*whole, partition.begin(rank), partition.end(rank)), partition);
    EXPECT_TRUE(op.applies_single());
    for (std::int64_t w : {1, 4, 20, 3, 64, 2})
      test::check_operator_apply_single(op, context, *whole, w, whole == &cube ? "3D Laplacian" : "power law");
  }
}

// The fp32 copy (the Chebyshev polynomial's products in fp32): its own
// values over the parent's index arrays, its fp32 rows through the parent's
// halo; reused across widths that grow, shrink and are odd.
TEST(DistributedOperator, RoundedToSingleMatchesReference) {
  const auto context = dense::Context::host();
  io::GeneratorSpec three{io::GeneratorKind::laplacian_3d, 5, 4, 6, 7};
  const CsrRows cube = generated(three), power = test::power_law_matrix(500, 400, 11);
  for (const CsrRows* whole : {&cube, &power}) {
    const auto made = operator_with_empty_rank(context, *whole);
    solver::DistributedOperator<double>& op = *made;
    test::check_rounded_apply(op, context, *whole, {1, 4, 17, 3, 64, 2}, whole == &cube ? "3D Laplacian" : "power law");
    test::check_operator_apply(op, context, *whole, 5, "fp64 after the fp32 copy's applies");
  }
  // An fp32 operator has no fp32 copy to give.
  const RowPartition partition = balanced(power);
  const int rank = test::mpi_rank(MPI_COMM_WORLD);
  solver::DistributedOperator<float> op32(MPI_COMM_WORLD, context,
                                          slice_rows(power, partition.begin(rank), partition.end(rank)), partition);
  EXPECT_FALSE(op32.rounded_to_single());
}

// Column-major blocks (PETSc's dense Mats): the halo gathered from columns,
// the diagonal block's column-major product, the halo's added into columns;
// with a rank without rows from np 2.
TEST(DistributedOperator, ColumnMajorMatchesReference) {
  const auto context = dense::Context::host();
  io::GeneratorSpec three{io::GeneratorKind::laplacian_3d, 5, 4, 6, 7};
  const CsrRows cube = generated(three), power = test::power_law_matrix(500, 400, 11);
  for (const CsrRows* whole : {&cube, &power}) {
    const auto made = operator_with_empty_rank(context, *whole);
    solver::DistributedOperator<double>& op = *made;
    for (auto [w, pad] : {std::pair{1, 0}, {17, 3}, {16, 0}, {40, 1}, {3, 2}})
      test::check_operator_apply_column_major(op, context, *whole, w, pad,
                                              whole == &cube ? "3D Laplacian" : "power law");
    test::check_operator_apply(op, context, *whole, 5, "row-major after the column-major applies");
  }
  // Refused, naming the call: a block of the wrong rows, a leading dimension below the rows, X and Y overlapping.
  const auto made = operator_with_empty_rank(context, cube);
  const std::int64_t m = made->local_rows();
  std::vector<double> x(static_cast<std::size_t>(2 * (m + 1))), y(x.size());
  using View = dense::ColumnMajorView<double>;
  using ConstView = dense::ColumnMajorView<const double>;
  EXPECT_THROW(made->apply_column_major(1.0, ConstView{Space::host, m + 1, 2, m + 1, x.data()}, 0.0,
                                        View{Space::host, m, 2, m, y.data()}),
               InputError);
  if (m > 1) {
    EXPECT_THROW(made->apply_column_major(1.0, ConstView{Space::host, m, 2, m - 1, x.data()}, 0.0,
                                          View{Space::host, m, 2, m, y.data()}),
                 InputError);
    EXPECT_THROW(made->apply_column_major(1.0, ConstView{Space::host, m, 2, m, x.data()}, 0.0,
                                          View{Space::host, m, 2, m, x.data() + 1}),
                 InputError);
  }
}

TEST(DistributedOperator, RankWithNoRows) {
  // Rank 1 (when there is one) owns nothing; the others split the rows.
  const auto context = dense::Context::host();
  const CsrRows whole = test::power_law_matrix(90, 50, 5);
  const int ranks = test::mpi_size();
  std::vector<std::int64_t> first{0};
  if (ranks == 1) {
    first.push_back(90);
  } else if (ranks == 2) {
    first.insert(first.end(), {90, 90});
  } else {
    first.insert(first.end(), {40, 40});
    for (int p = 3; p <= ranks; ++p) first.push_back(40 + 50 * (p - 2) / (ranks - 2));
  }
  check_distributed_apply<double>(context, whole, RowPartition(first), 3, "rank 1 empty");
  check_distributed_apply<double>(context, whole, RowPartition(first), 16, "rank 1 empty");
}

// set_diagonal_shift: the products of A + shift I, on an empty rank too; shift 0 gives A's products back bit
// for bit; a row without a stored diagonal entry on one rank makes every rank decline.
TEST(DistributedOperator, DiagonalShift) {
  const auto context = dense::Context::host();
  const CsrRows whole = generated({io::GeneratorKind::laplacian_2d, 9, 7, 1, 5});
  const auto op = operator_with_empty_rank(context, whole);
  const std::int64_t m = op->local_rows(), w = 3;
  dense::DenseBlock<double> x(Space::host, m, w), plain(Space::host, m, w), shifted(Space::host, m, w),
      back(Space::host, m, w);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < w; ++j) x.view()(i, j) = std::sin(0.37 * double(op->first_row() + i) + j);
  op->apply(1.0, x.cview(), 0.0, plain.view());
  ASSERT_TRUE(op->set_diagonal_shift(-2.5));
  op->apply(1.0, x.cview(), 0.0, shifted.view());
  ASSERT_TRUE(op->set_diagonal_shift(0.0));
  op->apply(1.0, x.cview(), 0.0, back.view());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < w; ++j) {
      EXPECT_NEAR(shifted.view()(i, j), plain.view()(i, j) - 2.5 * x.view()(i, j), 1e-13) << i << ", " << j;
      EXPECT_EQ(back.view()(i, j), plain.view()(i, j)) << i << ", " << j;
    }
  // The last rank's last row without its diagonal entry: nobody shifts.
  CsrRows holed = whole;
  const std::int64_t last = whole.global_rows - 1;
  for (std::int64_t p = holed.row_offsets[last]; p < holed.row_offsets[last + 1]; ++p)
    if (holed.col_indices[p] == last) {
      holed.col_indices.erase(holed.col_indices.begin() + p);
      holed.values.erase(holed.values.begin() + p);
      holed.row_offsets[last + 1] -= 1;
      break;
    }
  const auto without = operator_with_empty_rank(context, holed);
  EXPECT_FALSE(without->set_diagonal_shift(1.0));
}

TEST(DistributedOperator, NoNeighbours) {
  const auto context = dense::Context::host();
  const RowPartition partition = RowPartition::uniform(60, test::mpi_size());
  const CsrRows whole = test::block_diagonal_matrix(partition.first_rows(), 2);
  solver::DistributedOperator<double> op(
      MPI_COMM_WORLD, context, slice_rows(whole, partition.begin(test::mpi_rank()), partition.end(test::mpi_rank())),
      partition);
  EXPECT_EQ(op.halo_plan().halo_rows(), 0);
  EXPECT_TRUE(op.halo_plan().recv_ranks.empty());
  EXPECT_TRUE(op.halo_plan().send_ranks.empty());
  for (std::int64_t w : widths) check_distributed_apply<double>(context, whole, partition, w, "block diagonal");
}

TEST(DistributedOperator, RealMatrices) {
  if (test::data_dir().empty()) GTEST_SKIP() << "no data folder (../shared/data/matrices)";
  const auto context = dense::Context::host();
  int checked = 0;
  for (const std::string& name : test::data_matrix_names()) {
    const io::MatrixMarketFile file = io::read_matrix_market(test::data_dir() + "/" + name + ".mtx.gz");
    if (file.matrix.global_rows != file.matrix.global_cols || file.matrix.nnz() > 400000) continue;
    check_distributed_apply<double>(context, file.matrix, balanced(file.matrix), checked % 2 ? 3 : 16, name);
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST(DistributedOperator, HaloPlanIsConsistent) {
  // What each rank sends must be exactly what its neighbours expect.
  const CsrRows whole = test::power_law_matrix(200, 120, 9);
  const RowPartition partition = balanced(whole);
  const int rank = test::mpi_rank(), ranks = test::mpi_size();
  const auto context = dense::Context::host();
  solver::DistributedOperator<double> op(MPI_COMM_WORLD, context,
                                         slice_rows(whole, partition.begin(rank), partition.end(rank)), partition);
  std::vector<int> sends(ranks, 0), expected(ranks, 0);
  const auto& plan = op.halo_plan();
  for (std::size_t q = 0; q < plan.send_ranks.size(); ++q)
    sends[plan.send_ranks[q]] = int(plan.send_offsets[q + 1] - plan.send_offsets[q]);
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q) EXPECT_NE(plan.recv_ranks[q], rank);
  std::vector<int> receives(ranks, 0);
  for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q)
    receives[plan.recv_ranks[q]] = int(plan.recv_offsets[q + 1] - plan.recv_offsets[q]);
  BLOCKEIGS_MPI_CHECK(MPI_Alltoall(receives.data(), 1, MPI_INT, expected.data(), 1, MPI_INT, MPI_COMM_WORLD));
  EXPECT_EQ(sends, expected);
  for (std::int32_t r : plan.send_rows) {
    EXPECT_GE(r, 0);
    EXPECT_LT(r, partition.rows(rank));
  }
}

TEST(DistributedOperator, MoreRanksThanRowsIsRejectedEverywhere) {
  const int ranks = test::mpi_size();
  io::MatrixConfig config;
  config.source = io::MatrixSource::generator;
  config.generator = {io::GeneratorKind::laplacian_1d, ranks - 1 > 0 ? ranks - 1 : 1, 1, 1, 3};
  if (ranks == 1) GTEST_SKIP() << "needs two ranks or more";
  try {
    solver::load_distributed_rows(config, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    EXPECT_NE(std::string(e.what()).find("fewer than the " + std::to_string(ranks) + " MPI ranks"), std::string::npos)
        << e.what();
  }
}

TEST(DistributedOperator, MissingFileIsRejectedEverywhere) {
  io::MatrixConfig config;
  config.source = io::MatrixSource::hdf5;
  config.file = "/nonexistent/matrix.h5";
  EXPECT_THROW(solver::load_distributed_rows(config, MPI_COMM_WORLD), solver::AgreedError);
  config.source = io::MatrixSource::matrix_market;
  config.file = "/nonexistent/matrix.mtx";
  EXPECT_THROW(solver::load_distributed_rows(config, MPI_COMM_WORLD), solver::AgreedError);
}

}  // namespace
}  // namespace blockeigs

#include "solver/operator/symmetry_check.hpp"

namespace blockeigs {
namespace {

TEST(SymmetryCheck, AcceptsSymmetricAndNamesTheFirstMismatch) {
  const int rank = test::mpi_rank();
  io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, 7, 6, 1, 5};
  CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const auto partition = RowPartition::balanced(whole.row_offsets, test::mpi_size());
  EXPECT_NO_THROW(solver::check_symmetric(MPI_COMM_WORLD, slice_rows(whole, partition.begin(rank), partition.end(rank)),
                                          partition, "laplacian"));
  // Change A(0, 1) only: every rank must report it.
  whole.values[1] = -0.5;
  try {
    solver::check_symmetric(MPI_COMM_WORLD, slice_rows(whole, partition.begin(rank), partition.end(rank)), partition,
                            "edited.mtx");
    ADD_FAILURE() << "no error";
  } catch (const solver::AgreedError& e) {
    EXPECT_TRUE(e.is_input_error());
    const std::string text = e.what();
    EXPECT_NE(text.find("edited.mtx: the matrix is not symmetric"), std::string::npos) << text;
    EXPECT_NE(text.find("A(0, 1) = -0.5"), std::string::npos) << text;
  }
  // An entry without its mirror: the power-law matrix is not symmetric.
  const CsrRows power = test::power_law_matrix(80, 30, 1);
  const auto p2 = RowPartition::balanced(power.row_offsets, test::mpi_size());
  EXPECT_THROW(solver::check_symmetric(MPI_COMM_WORLD, slice_rows(power, p2.begin(rank), p2.end(rank)), p2, "p"),
               solver::AgreedError);
}

}  // namespace
}  // namespace blockeigs
