// mtx2h5: converts a Matrix Market file (plain or gzip) into the HDF5 CSR
// layout that block-eigs and block-cg read. Symmetric files are expanded to
// both triangles, so every rank can read its rows without a transpose.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "io/hdf5_csr.hpp"
#include "io/matrix_market.hpp"

namespace {

constexpr const char* usage =
    "usage: mtx2h5 INPUT.mtx[.gz] OUTPUT.h5 [--group /A]\n"
    "\n"
    "Converts a Matrix Market coordinate file (real, integer or pattern; general or\n"
    "symmetric, which is stored with both triangles) into an HDF5 CSR group with\n"
    "datasets indptr, indices, data and a 'shape' attribute.\n"
    "\n"
    "  --group NAME   HDF5 group to write (default /A)\n"
    "  -h, --help     print this help and exit\n";

struct Arguments {
  std::string input, output, group = "/A";
};

// Returns false on bad usage, with the reason in `problem`.
bool parse_arguments(int argc, char** argv, Arguments& args, std::string& problem, bool& help) {
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      help = true;
      return true;
    }
    if (arg == "--group") {
      if (i + 1 >= argc) {
        problem = "--group needs a value";
        return false;
      }
      args.group = argv[++i];
    } else if (arg.starts_with("--group=")) {
      args.group = std::string(arg.substr(8));
    } else if (arg.starts_with("-") && arg.size() > 1) {
      problem = "unknown option " + std::string(arg);
      return false;
    } else {
      positional.emplace_back(arg);
    }
  }
  if (positional.size() != 2) {
    problem = "expected two file names (input and output), got " +
              std::to_string(positional.size());
    return false;
  }
  if (args.group.empty()) {
    problem = "--group must not be empty";
    return false;
  }
  args.input = positional[0];
  args.output = positional[1];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  std::string problem;
  bool help = false;
  if (!parse_arguments(argc, argv, args, problem, help)) {
    std::fprintf(stderr, "mtx2h5: %s\n%s", problem.c_str(), usage);
    return 2;
  }
  if (help) {
    std::fputs(usage, stdout);
    return 0;
  }
  try {
    const auto file = blockeigs::io::read_matrix_market(args.input);
    const auto& matrix = file.matrix;
    blockeigs::io::write_hdf5_csr(args.output, args.group, matrix);
    std::printf("mtx2h5: %lld x %lld, %lld nonzeros -> %s (group %s)\n",
                static_cast<long long>(matrix.global_rows),
                static_cast<long long>(matrix.global_cols),
                static_cast<long long>(matrix.nnz()), args.output.c_str(), args.group.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtx2h5: %s\n", e.what());
    return 1;
  }
  return 0;
}
