#include "bench/spmm/bench_suite.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>

#include "core/error.hpp"
#include "io/generators/generators.hpp"
#include "io/matrix_market.hpp"

namespace blockeigs::spmm::bench {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finalizer: per-row seeds
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Rows with the given lengths, distinct sorted random columns in [0, cols),
// values in [-1, 1); rows are filled in parallel from per-row seeds, so the
// result does not depend on the thread count.
HostCsr<double> random_rows(const std::vector<std::int64_t>& lengths, std::int64_t cols, std::uint64_t seed) {
  HostCsr<double> a;
  a.rows = static_cast<std::int64_t>(lengths.size());
  a.cols = cols;
  a.row_offsets.assign(lengths.size() + 1, 0);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    total += std::min(lengths[i], cols);
    if (total > std::numeric_limits<std::int32_t>::max()) throw InputError("bench matrix: over 2^31 nonzeros");
    a.row_offsets[i + 1] = static_cast<std::int32_t>(total);
  }
  a.col_indices.resize(static_cast<std::size_t>(total));
  a.values.resize(static_cast<std::size_t>(total));
#pragma omp parallel for schedule(dynamic, 256)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    std::mt19937_64 engine(mix(seed ^ mix(static_cast<std::uint64_t>(i))));
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const std::int64_t begin = a.row_offsets[static_cast<std::size_t>(i)];
    const std::int64_t length = a.row_offsets[static_cast<std::size_t>(i) + 1] - begin;
    std::int32_t* c = a.col_indices.data() + begin;
    if (length * 3 > cols) {  // dense row: keep each column with the right odds
      std::int64_t kept = 0;
      for (std::int64_t j = 0; j < cols && kept < length; ++j)
        if (static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(cols - j)) < length - kept)
          c[kept++] = static_cast<std::int32_t>(j);
    } else {  // sparse row: draw, sort, drop duplicates, draw again
      std::int64_t have = 0;
      while (have < length) {
        for (std::int64_t k = have; k < length; ++k)
          c[k] = static_cast<std::int32_t>(engine() % static_cast<std::uint64_t>(cols));
        std::sort(c, c + length);
        have = std::unique(c, c + length) - c;
      }
    }
    for (std::int64_t k = 0; k < length; ++k) a.values[static_cast<std::size_t>(begin + k)] = uniform(engine);
  }
  return a;
}

HostCsr<double> laplacian(std::int64_t n, int stencil) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::laplacian_3d;
  spec.nx = spec.ny = spec.nz = n;
  spec.stencil = stencil;
  return csr_from_rows(io::generate_rows(spec, 0, io::generated_rows(spec)));
}

std::string human(std::int64_t x) {
  if (x >= (1 << 20) && x % (1 << 20) == 0) return std::to_string(x >> 20) + "M";
  if (x >= (1 << 10) && x % (1 << 10) == 0) return std::to_string(x >> 10) + "k";
  return std::to_string(x);
}

}  // namespace

HostCsr<double> csr_from_rows(const CsrRows& rows) {
  if (rows.nnz() > std::numeric_limits<std::int32_t>::max() ||
      rows.global_cols > std::numeric_limits<std::int32_t>::max())
    throw InputError("bench matrix does not fit int32 indices");
  HostCsr<double> a;
  a.rows = rows.local_rows();
  a.cols = rows.global_cols;
  a.row_offsets.assign(rows.row_offsets.begin(), rows.row_offsets.end());
  a.col_indices.assign(rows.col_indices.begin(), rows.col_indices.end());
  a.values = rows.values;
  return a;
}

HostCsr<double> uniform_random(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  return random_rows(std::vector<std::int64_t>(static_cast<std::size_t>(rows), per_row), cols, seed);
}

HostCsr<double> power_law(std::int64_t rows, double mean, std::int64_t longest, std::uint64_t seed) {
  // Pareto(shape 2, scale s) has mean 2 s; flooring takes off about 1/2.
  const double scale = (mean + 0.5) / 2.0;
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) {
    const double u = (static_cast<double>(mix(seed + static_cast<std::uint64_t>(i)) >> 11) + 0.5) * 0x1.0p-53;
    lengths[static_cast<std::size_t>(i)] =
        std::min<std::int64_t>(longest, static_cast<std::int64_t>(std::floor(scale / std::sqrt(u))));
  }
  for (int h = 0; h < 4 && h < rows; ++h)  // hubs: longest, longest/2, ...
    lengths[static_cast<std::size_t>(mix(seed * 31 + static_cast<std::uint64_t>(h)) %
                                     static_cast<std::uint64_t>(rows))] = longest >> h;
  return random_rows(lengths, rows, seed);
}

HostCsr<double> dense(std::int64_t rows, std::int64_t cols) {
  if (rows * cols > std::numeric_limits<std::int32_t>::max()) throw InputError("dense bench matrix too large");
  HostCsr<double> a;
  a.rows = rows;
  a.cols = cols;
  a.row_offsets.resize(static_cast<std::size_t>(rows) + 1);
  a.col_indices.resize(static_cast<std::size_t>(rows * cols));
  a.values.resize(static_cast<std::size_t>(rows * cols));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i <= rows; ++i)
    a.row_offsets[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * cols);
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < rows * cols; ++e) {
    a.col_indices[static_cast<std::size_t>(e)] = static_cast<std::int32_t>(e % cols);
    a.values[static_cast<std::size_t>(e)] =
        static_cast<double>(mix(static_cast<std::uint64_t>(e)) >> 11) * 0x1.0p-52 - 1.0;
  }
  return a;
}

HostCsr<double> replicate_block_diagonal(const HostCsr<double>& block, std::int64_t min_nnz) {
  const std::int64_t copies =
      std::max<std::int64_t>(1, (min_nnz + block.nnz() - 1) / std::max<std::int64_t>(1, block.nnz()));
  if (copies * block.nnz() > std::numeric_limits<std::int32_t>::max() ||
      copies * std::max(block.rows, block.cols) > std::numeric_limits<std::int32_t>::max())
    throw InputError("replicated bench matrix does not fit int32 indices");
  HostCsr<double> a;
  a.rows = block.rows * copies;
  a.cols = block.cols * copies;
  a.row_offsets.reserve(static_cast<std::size_t>(a.rows) + 1);
  a.col_indices.reserve(static_cast<std::size_t>(copies * block.nnz()));
  a.values.reserve(a.col_indices.capacity());
  for (std::int64_t c = 0; c < copies; ++c) {
    for (std::int64_t i = 0; i < block.rows; ++i)
      a.row_offsets.push_back(
          static_cast<std::int32_t>(c * block.nnz() + block.row_offsets[static_cast<std::size_t>(i) + 1]));
    for (std::int32_t col : block.col_indices) a.col_indices.push_back(static_cast<std::int32_t>(c * block.cols + col));
    a.values.insert(a.values.end(), block.values.begin(), block.values.end());
  }
  return a;
}

std::vector<MatrixSpec> suite_matrices(const std::string& suite, const std::string& data_dir) {
  std::vector<MatrixSpec> specs;
  std::int64_t replicate_to = 10'000'000;
  if (suite == "full") {
    specs.push_back({"lap7pt_128^3", [] { return laplacian(128, 7); }});
    specs.push_back({"lap27pt_100^3", [] { return laplacian(100, 27); }});
    specs.push_back({"uniform_2M_x4", [] { return uniform_random(2 << 20, 2 << 20, 4, 1); }});
    specs.push_back({"uniform_1M_x32", [] { return uniform_random(1 << 20, 1 << 20, 32, 2); }});
    specs.push_back({"powerlaw_2M_mean8", [] { return power_law(2 << 20, 8.0, 100000, 3); }});
    specs.push_back({"rows16k_x2048", [] { return uniform_random(16 << 10, 16 << 10, 2048, 4); }});
    // Aspect-ratio sweep: dense rows x cols blocks at 16M nonzeros, rows = 2 * 4^i.
    const std::int64_t nnz = std::int64_t(16) << 20;
    for (std::int64_t rows = 2; rows <= nnz / 2; rows *= 4) {
      const std::int64_t cols = nnz / rows;
      specs.push_back({"dense_" + human(rows) + "x" + human(cols), [rows, cols] { return dense(rows, cols); }});
    }
  } else if (suite == "quick") {
    replicate_to = 1'000'000;
    specs.push_back({"lap7pt_64^3", [] { return laplacian(64, 7); }});
    specs.push_back({"uniform_256k_x4", [] { return uniform_random(256 << 10, 256 << 10, 4, 1); }});
    specs.push_back({"powerlaw_256k_mean8", [] { return power_law(256 << 10, 8.0, 20000, 3); }});
    specs.push_back({"dense_32x128k", [] { return dense(32, 128 << 10); }});
    specs.push_back({"dense_256kx16", [] { return dense(256 << 10, 16); }});
  } else {
    throw InputError("--suite must be full or quick, got `" + suite + "`");
  }
  if (!data_dir.empty()) {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(data_dir)) {
      const std::string file = entry.path().filename().string();
      if (file.ends_with(".mtx.gz") || file.ends_with(".mtx")) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    if (suite == "quick" && files.size() > 3) files.resize(3);  // a smoke run
    for (const std::string& path : files) {
      std::string name = std::filesystem::path(path).filename().string();
      name = name.substr(0, name.find(".mtx"));
      specs.push_back({name + "_blockdiag", [path, replicate_to] {
                         return replicate_block_diagonal(csr_from_rows(io::read_matrix_market(path).matrix),
                                                         replicate_to);
                       }});
    }
  }
  return specs;
}

}  // namespace blockeigs::spmm::bench
