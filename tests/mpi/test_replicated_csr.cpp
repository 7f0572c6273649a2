// solver::check_replicated (replicated_csr.hpp) at np 1-4 against the host
// path's checks (io::validate, then check_symmetric on each rank's rows): the
// same message on every rank, or none, for int32 and int64 indices, on an even
// split, on one where the first rank holds every row and on one with an empty
// middle rank: a Laplacian, one row, empty rows, an asymmetric value, a
// one-sided entry, a difference within the tolerance, a stored zero without
// partner, unsorted and repeated columns, columns -1 and n, NaN and infinity,
// and offsets that start late, end short or decrease. host_rows gives each
// rank's rows. Where a GPU is visible, the same with the arrays in device
// memory (the device passes), and the device split of the arrays in place
// against the host split of host_rows, array for array. Complex values: the
// Hermitian passes against the host path's check_hermitian (an imaginary
// diagonal, a real part or an imaginary part off its partner's, a one-sided
// imaginary entry, NaN in an imaginary part), host_complex_rows, and the
// device split of complex arrays.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "dense/memory.hpp"
#include "core/csr_rows.hpp"
#include "solver/base/collective.hpp"
#include "solver/operator/local_blocks.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "solver/operator/row_partition.hpp"
#include "solver/operator/symmetry_check.hpp"
#include "test_contexts.hpp"

namespace blockeigs {
namespace {

using solver::ReplicatedCsr;
using solver::RowPartition;
using Row = std::vector<std::pair<std::int64_t, double>>;

template <class V>
struct WholeOf {
  std::int64_t n = 0;
  std::vector<std::int64_t> offsets{0}, columns;
  std::vector<V> values;

  CsrRowsOf<V> rows() const {
    CsrRowsOf<V> all;
    all.global_rows = all.global_cols = n;
    all.row_offsets = offsets;
    all.col_indices = columns;
    all.values = values;
    return all;
  }
};
using Whole = WholeOf<double>;

Whole whole(std::int64_t n, const std::vector<Row>& rows) {
  Whole w;
  w.n = n;
  for (const Row& row : rows) {
    for (const auto& [c, v] : row) {
      w.columns.push_back(c);
      w.values.push_back(v);
    }
    w.offsets.push_back(static_cast<std::int64_t>(w.columns.size()));
  }
  return w;
}

Whole laplacian(std::int64_t n) {
  std::vector<Row> rows(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) rows[i].push_back({i - 1, -1.0});
    rows[i].push_back({i, 2.0});
    if (i + 1 < n) rows[i].push_back({i + 1, -1.0});
  }
  return whole(n, rows);
}

struct Case {
  std::string name;
  Whole a;
};

std::vector<Case> cases() {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  std::vector<Case> out;
  out.push_back({"laplacian", laplacian(9)});
  out.push_back({"one row", whole(1, {{{0, 3.0}}})});
  out.push_back({"one row nan", whole(1, {{{0, nan}}})});
  out.push_back({"empty rows", whole(6, {{{0, 1.0}, {4, 2.0}}, {}, {{2, 1.0}}, {}, {{0, 2.0}}, {}})});
  Whole asym = laplacian(9);
  asym.values[asym.offsets[6] + 0] = -1.0 + 1e-9;  // A(6, 5) against A(5, 6) = -1
  out.push_back({"asymmetric value", asym});
  out.push_back({"one-sided", whole(5, {{{0, 1.0}}, {{1, 1.0}}, {{2, 1.0}}, {{3, 1.0}}, {{0, 0.5}, {4, 1.0}}})});
  Whole close = laplacian(9);
  close.values[close.offsets[4]] = -1.0 + 1e-13;
  out.push_back({"within tolerance", close});
  out.push_back({"stored zero", whole(4, {{{0, 1.0}, {3, 0.0}}, {{1, 1.0}}, {{2, 1.0}}, {{3, 1.0}}})});
  out.push_back({"unsorted", whole(4, {{{0, 1.0}}, {{1, 1.0}}, {{3, 0.0}, {2, 1.0}}, {{3, 1.0}}})});
  out.push_back({"repeated", whole(4, {{{0, 1.0}}, {{1, 1.0}}, {{3, 1.0}}, {{3, 1.0}, {3, 1.0}}})});
  out.push_back({"column -1", whole(4, {{{0, 1.0}}, {{1, 1.0}}, {{-1, 1.0}, {2, 1.0}}, {{3, 1.0}}})});
  out.push_back({"column n", whole(4, {{{0, 1.0}}, {{1, 1.0}, {4, 1.0}}, {{2, 1.0}}, {{3, 1.0}}})});
  out.push_back({"infinity", whole(4, {{{0, 1.0}}, {{1, 1.0}}, {{2, 1.0}}, {{3, inf}}})});
  Whole late = laplacian(5);
  late.offsets[0] = 1;
  out.push_back({"offsets start late", late});
  Whole short_end = laplacian(5);
  short_end.offsets.back() -= 1;
  out.push_back({"offsets end short", short_end});
  Whole decrease = laplacian(5);
  decrease.offsets[3] = decrease.offsets[4] + 1;
  out.push_back({"offsets decrease", decrease});
  return out;
}

// The twisted ring (periodic, Bloch phase 1.3): a Hermitian matrix with complex links.
WholeOf<std::complex<double>> twisted_ring(std::int64_t n) {
  WholeOf<std::complex<double>> w;
  w.n = n;
  const std::complex<double> link = -std::polar(1.0, 1.3 / static_cast<double>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<std::int64_t, std::complex<double>>> row{
        {i, 2.0}, {(i + 1) % n, link}, {(i + n - 1) % n, std::conj(link)}};
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      w.columns.push_back(c);
      w.values.push_back(v);
    }
    w.offsets.push_back(static_cast<std::int64_t>(w.columns.size()));
  }
  return w;
}

struct ComplexCase {
  std::string name;
  WholeOf<std::complex<double>> a;
  bool sound;
};

// The position of (row, col) in w (it must be stored).
template <class V>
std::size_t at(const WholeOf<V>& w, std::int64_t row, std::int64_t col) {
  for (std::int64_t k = w.offsets[row]; k < w.offsets[row + 1]; ++k)
    if (w.columns[k] == col) return static_cast<std::size_t>(k);
  throw std::logic_error("not stored");
}

std::vector<ComplexCase> complex_cases() {
  using C = std::complex<double>;
  std::vector<ComplexCase> out{{"twisted ring", twisted_ring(9), true}};
  auto changed = [&](const std::string& name, std::int64_t row, std::int64_t col, C value, bool sound = false) {
    ComplexCase c{name, twisted_ring(9), sound};
    c.a.values[at(c.a, row, col)] = value;
    out.push_back(c);
  };
  const C link = twisted_ring(9).values[at(twisted_ring(9), 5, 6)];
  changed("imaginary diagonal", 6, 6, C(2.0, 0.25));
  changed("real part", 5, 6, link + C(1e-9, 0));
  changed("imaginary part", 5, 6, std::conj(link));  // A(5, 6) = A(6, 5): Im parts equal, not opposite
  changed("within tolerance", 5, 6, link * (1 + 1e-14), true);
  changed("nan imaginary", 3, 2, C(-1.0, std::numeric_limits<double>::quiet_NaN()));
  WholeOf<C> one_sided;  // Im A(0, 1) = 0.5 with nothing at (1, 0): its partner's Im part is 0
  one_sided.n = 2;
  one_sided.offsets = {0, 2, 3};
  one_sided.columns = {0, 1, 1};
  one_sided.values = {C(1.0), C(0.0, 0.5), C(1.0)};
  out.push_back({"one-sided imaginary", one_sided, false});
  return out;
}

std::vector<RowPartition> partitions(std::int64_t n, int ranks) {
  std::vector<RowPartition> out{RowPartition::uniform(n, ranks)};
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, n);
  first[0] = 0;
  out.emplace_back(first);  // rank 0 holds all
  if (ranks >= 3) {
    std::vector<std::int64_t> gap{0, n / 2, n / 2};  // rank 1 empty
    for (int p = 3; p <= ranks; ++p) gap.push_back(n / 2 + (n - n / 2) * (p - 2) / (ranks - 2));
    out.emplace_back(gap);
  }
  return out;
}

// The message of `step` (agreed), empty where it passes.
template <class Step>
std::string message_of(Step&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

// The host path: io::validate (the whole matrix: its first problem is the lowest rank's), then
// check_symmetric (check_hermitian for complex values).
template <class V>
std::string host_path_message(MPI_Comm comm, const WholeOf<V>& w, const RowPartition& partition) {
  const CsrRowsOf<V> all = w.rows();
  return message_of([&] {
    solver::collectively(comm, [&] { validate(all, "A"); });
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const CsrRowsOf<V> mine = slice_rows(all, partition.begin(rank), partition.end(rank));
    if constexpr (std::is_same_v<V, double>)
      solver::check_symmetric(comm, mine, partition, "A");
    else
      solver::check_hermitian(comm, mine, partition, "A");
  });
}

// The arrays of `w` in `space` with int32 or int64 indices.
template <class V>
struct ArraysOf {
  dense::Buffer<std::int64_t> offsets64, columns64;
  dense::Buffer<std::int32_t> offsets32, columns32;
  dense::Buffer<V> values;

  ArraysOf(const WholeOf<V>& w, Space space, bool wide) : values(space, w.values) {
    if (wide) {
      offsets64 = dense::Buffer<std::int64_t>(space, w.offsets);
      columns64 = dense::Buffer<std::int64_t>(space, w.columns);
    } else {
      offsets32 = dense::Buffer<std::int32_t>(space, std::vector<std::int32_t>(w.offsets.begin(), w.offsets.end()));
      columns32 = dense::Buffer<std::int32_t>(space, std::vector<std::int32_t>(w.columns.begin(), w.columns.end()));
    }
  }
  ReplicatedCsr view(const WholeOf<V>& w, Space space, bool wide, const RowPartition& partition, int rank) const {
    ReplicatedCsr a;
    a.space = space;
    a.device = space == Space::device ? 0 : -1;
    a.n = w.n;
    a.nnz = static_cast<std::int64_t>(w.columns.size());
    a.offsets = wide ? static_cast<const void*>(offsets64.data()) : offsets32.data();
    a.columns = wide ? static_cast<const void*>(columns64.data()) : columns32.data();
    a.wide = wide;
    a.values = reinterpret_cast<const double*>(values.data());
    a.complex = !std::is_same_v<V, double>;
    a.begin = partition.begin(rank);
    a.end = partition.end(rank);
    return a;
  }
};

using Arrays = ArraysOf<double>;

template <class U>
std::vector<U> to_host(const U* data, std::int64_t count, Space space) {
  std::vector<U> out(static_cast<std::size_t>(count));
  if (count > 0) dense::copy_bytes(out.data(), Space::host, data, space, out.size() * sizeof(U));
  return out;
}

template <class T>
void expect_same_blocks(const spmm::CsrMatrix<T>& host, const spmm::CsrMatrix<T>& device, const std::string& what) {
  const auto h = host.view(), d = device.view();
  ASSERT_EQ(h.rows, d.rows) << what;
  ASSERT_EQ(h.cols, d.cols) << what;
  ASSERT_EQ(h.nnz, d.nnz) << what;
  EXPECT_EQ(to_host(h.row_offsets, h.rows + 1, h.space), to_host(d.row_offsets, d.rows + 1, d.space)) << what;
  EXPECT_EQ(to_host(h.col_indices, h.nnz, h.space), to_host(d.col_indices, d.nnz, d.space)) << what;
  EXPECT_EQ(to_host(h.values, h.nnz, h.space), to_host(d.values, d.nnz, d.space)) << what;
}

class ReplicatedCsrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  }
  int rank_ = 0, ranks_ = 1;
  test::TestContexts contexts_;
};

TEST_F(ReplicatedCsrTest, SameMessagesAsTheHostPath) {
  for (const Case& c : cases())
    for (const RowPartition& partition : partitions(c.a.n, ranks_)) {
      const std::string expected = host_path_message(MPI_COMM_WORLD, c.a, partition);
      const bool sound = c.name == "laplacian" || c.name == "one row" || c.name == "empty rows" ||
                         c.name == "within tolerance" || c.name == "stored zero";
      EXPECT_EQ(expected.empty(), sound) << c.name << ": " << expected;
      for (const dense::Context* context : contexts_.all())
        for (const bool wide : {false, true}) {
          const Space space = context->space();
          const Arrays arrays(c.a, space, wide);
          const ReplicatedCsr a = arrays.view(c.a, space, wide, partition, rank_);
          const std::string got = message_of([&] { solver::check_replicated(MPI_COMM_WORLD, a, context, "A"); });
          EXPECT_EQ(got, expected) << c.name << ", " << (space == Space::device ? "device" : "host") << ", "
                                   << (wide ? "int64" : "int32") << ", rows [" << a.begin << ", " << a.end << ")";
        }
    }
}

TEST_F(ReplicatedCsrTest, HostRowsAreTheRanksRows) {
  const Whole w = cases()[3].a;  // empty rows
  for (const RowPartition& partition : partitions(w.n, ranks_))
    for (const bool wide : {false, true}) {
      const Arrays arrays(w, Space::host, wide);
      const CsrRows rows = solver::host_rows(arrays.view(w, Space::host, wide, partition, rank_));
      CsrRows all;
      all.global_rows = all.global_cols = w.n;
      all.row_offsets = w.offsets;
      all.col_indices = w.columns;
      all.values = w.values;
      const CsrRows expected = slice_rows(all, partition.begin(rank_), partition.end(rank_));
      EXPECT_EQ(rows.first_row, expected.first_row);
      EXPECT_EQ(rows.row_offsets, expected.row_offsets);
      EXPECT_EQ(rows.col_indices, expected.col_indices);
      EXPECT_EQ(rows.values, expected.values);
    }
}

TEST_F(ReplicatedCsrTest, DeviceSplitInPlaceIsTheHostSplit) {
  const std::vector<const dense::Context*> all = contexts_.all();
  if (all.size() < 2) GTEST_SKIP() << "no CUDA device visible: the device split is not tested here";
  const dense::Context& device = *all[1];
  for (const Case& c : cases()) {
    if (!host_path_message(MPI_COMM_WORLD, c.a, RowPartition::uniform(c.a.n, ranks_)).empty()) continue;
    for (const RowPartition& partition : partitions(c.a.n, ranks_))
      for (const bool wide : {false, true}) {
        const Arrays on_host(c.a, Space::host, wide), on_device(c.a, Space::device, wide);
        const auto host =
            solver::split_local_rows<double>(solver::host_rows(on_host.view(c.a, Space::host, wide, partition, rank_)));
        const auto dev = solver::split_replicated_on_device<double>(
            device, on_device.view(c.a, Space::device, wide, partition, rank_));
        const std::string what = c.name + (wide ? ", int64" : ", int32");
        expect_same_blocks(host.diagonal, dev.diagonal, what + ": diagonal block");
        expect_same_blocks(host.off_diagonal, dev.off_diagonal, what + ": off-diagonal block");
        EXPECT_EQ(host.halo_columns, dev.halo_columns) << what;
        EXPECT_EQ(host.off_diagonal_rows.to_host(), dev.off_diagonal_rows.to_host()) << what;
        EXPECT_EQ(host.diagonal_entries.to_host(), dev.diagonal_entries.to_host()) << what;
      }
  }
}

TEST_F(ReplicatedCsrTest, ComplexValuesGetTheHermitianCheck) {
  for (const ComplexCase& c : complex_cases())
    for (const RowPartition& partition : partitions(c.a.n, ranks_)) {
      const std::string expected = host_path_message(MPI_COMM_WORLD, c.a, partition);
      EXPECT_EQ(expected.empty(), c.sound) << c.name << ": " << expected;
      for (const dense::Context* context : contexts_.all())
        for (const bool wide : {false, true}) {
          const Space space = context->space();
          const ArraysOf<std::complex<double>> arrays(c.a, space, wide);
          const ReplicatedCsr a = arrays.view(c.a, space, wide, partition, rank_);
          const std::string got = message_of([&] { solver::check_replicated(MPI_COMM_WORLD, a, context, "A"); });
          EXPECT_EQ(got, expected) << c.name << ", " << (space == Space::device ? "device" : "host") << ", "
                                   << (wide ? "int64" : "int32") << ", rows [" << a.begin << ", " << a.end << ")";
        }
      if (c.sound) {
        const ArraysOf<std::complex<double>> arrays(c.a, Space::host, true);
        const ComplexCsrRows mine = solver::host_complex_rows(arrays.view(c.a, Space::host, true, partition, rank_));
        const ComplexCsrRows expected_rows = slice_rows(c.a.rows(), partition.begin(rank_), partition.end(rank_));
        EXPECT_EQ(mine.row_offsets, expected_rows.row_offsets);
        EXPECT_EQ(mine.col_indices, expected_rows.col_indices);
        EXPECT_EQ(mine.values, expected_rows.values);
      }
    }
}

TEST_F(ReplicatedCsrTest, ComplexDeviceSplitInPlaceIsTheHostSplit) {
  const std::vector<const dense::Context*> all = contexts_.all();
  if (all.size() < 2) GTEST_SKIP() << "no CUDA device visible: the device split is not tested here";
  using C = std::complex<double>;
  const WholeOf<C> w = twisted_ring(11);
  for (const RowPartition& partition : partitions(w.n, ranks_))
    for (const bool wide : {false, true}) {
      const ArraysOf<C> on_host(w, Space::host, wide), on_device(w, Space::device, wide);
      const auto host =
          solver::split_local_rows<C>(solver::host_complex_rows(on_host.view(w, Space::host, wide, partition, rank_)));
      const auto dev =
          solver::split_replicated_on_device<C>(*all[1], on_device.view(w, Space::device, wide, partition, rank_));
      const std::string what = std::string("twisted ring") + (wide ? ", int64" : ", int32");
      expect_same_blocks(host.diagonal, dev.diagonal, what + ": diagonal block");
      expect_same_blocks(host.off_diagonal, dev.off_diagonal, what + ": off-diagonal block");
      EXPECT_EQ(host.halo_columns, dev.halo_columns) << what;
      EXPECT_EQ(host.off_diagonal_rows.to_host(), dev.off_diagonal_rows.to_host()) << what;
      EXPECT_EQ(host.diagonal_entries.to_host(), dev.diagonal_entries.to_host()) << what;
    }
}

}  // namespace
}  // namespace blockeigs
