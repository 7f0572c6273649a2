#include "core/checks.hpp"
#include "distributed_fixtures.hpp"

#include <hdf5.h>

#include <algorithm>
#include <fstream>
#include <cmath>
#include <random>

namespace blockeigs::test {

int mpi_rank(MPI_Comm comm) {
  int r = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &r));
  return r;
}

int mpi_size(MPI_Comm comm) {
  int s = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &s));
  return s;
}

static double hash_unit(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull ^ (static_cast<std::uint64_t>(i) * 0xbf58476d1ce4e5b9ull) ^
                    (static_cast<std::uint64_t>(j) * 0x94d049bb133111ebull + 0x632be59bd9b4e019ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-52 - 1.0;
}

CsrRows power_law_matrix(std::int64_t n, std::int64_t max_row, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::int64_t> column(0, n - 1);
  CsrRows m;
  m.global_rows = m.global_cols = n;
  m.row_offsets.assign(1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    // Pareto-like lengths: P(L > x) ~ 1/x, capped at max_row; row 0 is the longest.
    const auto length =
        i == 0 ? max_row : std::min<std::int64_t>(max_row, std::int64_t(1.0 / std::max(unit(engine), 1e-9)));
    std::vector<std::int64_t> cols;
    for (std::int64_t k = 0; k < length; ++k) cols.push_back(column(engine));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (std::int64_t c : cols) {
      m.col_indices.push_back(c);
      m.values.push_back(unit(engine) * 2 - 1);
    }
    m.row_offsets.push_back(m.nnz());
  }
  return m;
}

CsrRows block_diagonal_matrix(const std::vector<std::int64_t>& first_rows, std::uint64_t seed) {
  CsrRows m;
  m.global_rows = m.global_cols = first_rows.back();
  m.row_offsets.assign(1, 0);
  for (std::size_t b = 0; b + 1 < first_rows.size(); ++b)
    for (std::int64_t i = first_rows[b]; i < first_rows[b + 1]; ++i) {
      for (std::int64_t j = first_rows[b]; j < first_rows[b + 1]; ++j)
        if (j == i || hash_unit(seed, i, j) > 0.5) {
          m.col_indices.push_back(j);
          m.values.push_back(j == i ? 4.0 : hash_unit(seed + 1, i, j));
        }
      m.row_offsets.push_back(m.nnz());
    }
  return m;
}

std::vector<double> hashed_block(std::int64_t first_row, std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out[i * cols + j] = hash_unit(seed, first_row + i, j);
  return out;
}

void reference_rows(const CsrRows& whole, const std::vector<double>& x_all, std::int64_t cols, std::int64_t begin,
                    std::int64_t end, std::vector<double>& y, std::vector<double>& scale, double eps) {
  y.assign(static_cast<std::size_t>((end - begin) * cols), 0.0);
  scale.assign(static_cast<std::size_t>(end - begin), 0.0);
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t length = whole.row_offsets[i + 1] - whole.row_offsets[i];
    double abs_sum = 0;
    for (std::int64_t k = whole.row_offsets[i]; k < whole.row_offsets[i + 1]; ++k) {
      const double a = whole.values[k];
      const std::int64_t c = whole.col_indices[k];
      double row_max = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        y[(i - begin) * cols + j] += a * x_all[c * cols + j];
        row_max = std::max(row_max, std::abs(x_all[c * cols + j]));
      }
      abs_sum += std::abs(a) * row_max;
    }
    // gamma(L) with a safety factor 2, plus one rounding of the output.
    const double L = double(length + 1);
    scale[i - begin] = 2.0 * (L * eps / (1.0 - L * eps)) * abs_sum + eps;
  }
}

std::vector<double> read_dataset(const std::string& file, const char* dataset) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  std::vector<double> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

std::filesystem::path shared_folder(const std::string& tag) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("blockeigs_" + tag + "_np" + std::to_string(mpi_size()));
  if (mpi_rank() == 0) std::filesystem::create_directories(dir);
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  return dir;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  if (mpi_rank() == 0) std::ofstream(path) << text;
  BLOCKEIGS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

}  // namespace blockeigs::test
