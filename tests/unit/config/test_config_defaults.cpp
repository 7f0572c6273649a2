// docs/config.md's defaults against the option structs that hold them: each
// default is stated once, in the struct the solver (or the run) takes, and the
// key tables of docs/config.md must say the same.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "config/run_config.hpp"

namespace blockeigs::cfg {
namespace {

// The first table after the heading that starts with `heading`: key -> its default cell, backquotes removed.
std::map<std::string, std::string> defaults_under(const std::string& heading) {
  std::ifstream in(std::filesystem::path(BLOCKEIGS_SOURCE_DIR) / "docs" / "config.md");
  std::string line;
  bool found = false;
  std::map<std::string, std::string> table;
  while (std::getline(in, line)) {
    if (!found) {
      found = line.rfind(heading, 0) == 0;
      continue;
    }
    if (line.rfind("| `", 0) != 0) {
      if (!table.empty()) break;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(cell);
    const auto bare = [](std::string text) {
      std::string out;
      for (char c : text)
        if (c != '`' && c != ' ') out += c;
      return out;
    };
    if (cells.size() >= 3) table[bare(cells[0])] = bare(cells[2]);
  }
  EXPECT_TRUE(found) << "no heading " << heading << " in docs/config.md";
  return table;
}

::testing::AssertionResult same_number(const std::map<std::string, std::string>& table, const std::string& key,
                                       double value) {
  const auto it = table.find(key);
  if (it == table.end()) return ::testing::AssertionFailure() << key << " is not in the table";
  char* end = nullptr;
  const double documented = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0')
    return ::testing::AssertionFailure() << key << ": the documented default '" << it->second << "' is no number";
  if (documented != value)
    return ::testing::AssertionFailure() << key << ": docs say " << it->second << ", the struct " << value;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_word(const std::map<std::string, std::string>& table, const std::string& key,
                                     std::string_view value) {
  const auto it = table.find(key);
  if (it == table.end()) return ::testing::AssertionFailure() << key << " is not in the table";
  if (it->second != value)
    return ::testing::AssertionFailure() << key << ": docs say " << it->second << ", the struct " << value;
  return ::testing::AssertionSuccess();
}

TEST(ConfigDefaults, EigensolverTableIsLobpcgOptions) {
  const auto table = defaults_under("### `eigensolver`");
  const solver::LobpcgOptions o;
  EXPECT_TRUE(same_number(table, "k", o.k));
  EXPECT_TRUE(same_number(table, "block_size", o.block_size));
  EXPECT_TRUE(same_word(table, "which", to_string(o.which)));
  EXPECT_TRUE(same_number(table, "tolerance", o.tolerance));
  EXPECT_TRUE(same_word(table, "convergence_test", to_string(o.test)));
  EXPECT_TRUE(same_number(table, "max_iterations", o.max_iterations));
  EXPECT_TRUE(same_number(table, "stagnation_window", o.stagnation_window));
  const solver::WindowOptions w;  // a window's keys
  EXPECT_TRUE(same_number(table, "slices", w.slices));
  EXPECT_TRUE(same_number(table, "dos_vectors", w.dos_vectors));
  EXPECT_TRUE(same_number(table, "dos_degree", w.dos_degree));
  EXPECT_TRUE(same_number(table, "window_degree", w.filter_degree));
  EXPECT_TRUE(same_word(table, "interval", "none"));
  EXPECT_TRUE(same_word(table, "count", to_string(EigensolverSettings{}.count)));
  EXPECT_TRUE(same_word(table, "search_precision", to_string(o.search_precision)));
  EXPECT_TRUE(same_number(table, "seed", static_cast<double>(o.seed)));
  EXPECT_TRUE(same_word(table, "preconditioner", to_string(EigensolverSettings{}.preconditioner.kind)));
}

TEST(ConfigDefaults, BlockCgTableIsBlockCgOptions) {
  const auto table = defaults_under("### `block_cg`");
  const solver::BlockCgOptions o;
  EXPECT_TRUE(same_number(table, "rtol", o.rtol));
  EXPECT_TRUE(same_number(table, "atol", o.atol));
  EXPECT_TRUE(same_number(table, "max_iterations", o.max_iterations));
  EXPECT_TRUE(same_number(table, "stagnation_window", o.stagnation_window));
  EXPECT_TRUE(same_number(table, "seed", static_cast<double>(BlockCgSettings{}.seed)));
  EXPECT_TRUE(same_word(table, "preconditioner", to_string(BlockCgSettings{}.preconditioner.kind)));
}

TEST(ConfigDefaults, PreconditionerTableIsChebyshevOptions) {
  const auto table = defaults_under("#### `preconditioner`");
  const solver::ChebyshevOptions o;
  // 0 is `auto` for the degree and the interval's lower end.
  EXPECT_TRUE(same_word(table, "degree", o.degree == 0 ? "auto" : std::to_string(o.degree)));
  EXPECT_TRUE(same_word(table, "lower", o.lower == 0 ? "auto" : std::to_string(o.lower)));
  EXPECT_TRUE(same_word(table, "jacobi", o.jacobi ? "true" : "false"));
  EXPECT_TRUE(same_word(table, "precision", to_string(o.precision)));
}

TEST(ConfigDefaults, ExecutionTablesAreTheirStructs) {
  const auto execution = defaults_under("### `execution`");
  const ExecutionConfig e;
  EXPECT_TRUE(same_word(execution, "backend", to_string(e.backend)));
  EXPECT_TRUE(same_word(execution, "spmm_algorithm", to_string(e.spmm_algorithm)));
  EXPECT_TRUE(same_word(execution, "spmm_precision", to_string(e.spmm_precision)));
  EXPECT_TRUE(same_word(execution, "partition", to_string(e.partition)));
  EXPECT_TRUE(same_word(execution, "local_order", to_string(e.local_order)));
  EXPECT_TRUE(same_number(execution, "mpi_chunk_bytes", static_cast<double>(e.mpi_chunk_bytes)));
  const auto halo = defaults_under("#### `execution.halo`");
  const solver::HaloOptions h;
  EXPECT_TRUE(same_word(halo, "transport", to_string(h.transport)));
  EXPECT_TRUE(same_word(halo, "peer", h.peer ? "true" : "false"));
  EXPECT_TRUE(same_word(halo, "cuda_aware_mpi", h.cuda_aware_mpi ? (*h.cuda_aware_mpi ? "true" : "false") : "auto"));
  EXPECT_TRUE(same_number(halo, "piece_bytes", static_cast<double>(h.piece_bytes)));
}

}  // namespace
}  // namespace blockeigs::cfg
