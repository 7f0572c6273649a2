// mtx2h5: converts a Matrix Market file (plain or gzip) into the HDF5 CSR
// layout that block-eigs and block-cg read. Symmetric and Hermitian files are
// expanded to both triangles, so every rank can read its rows without a
// transpose; complex files keep their complex values (h5py's layout). An
// existing output file gets the matrix as one more group; a group already
// there is replaced only with --force. --generate writes one of the
// generators' matrices instead (large test problems as files).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "apps/cli.hpp"
#include "io/matrix_config.hpp"
#include "io/generators/generators.hpp"
#include "io/hdf5_csr.hpp"
#include "io/matrix_market.hpp"
#include "io/path_clash.hpp"

namespace {

using namespace blockeigs;

constexpr const char* usage =
    "usage: mtx2h5 INPUT.mtx[.gz] OUTPUT.h5 [--group /A] [--force]\n"
    "       mtx2h5 --generate SPEC OUTPUT.h5 [--group /A] [--force]\n"
    "       mtx2h5 --help | --version\n"
    "\n"
    "Converts a Matrix Market coordinate file (real, integer, pattern or complex;\n"
    "general, symmetric or hermitian, the last two stored with both triangles)\n"
    "into an HDF5 CSR group with datasets indptr, indices, data (complex values as\n"
    "h5py writes them: a compound of r and i) and a 'shape' attribute. A new OUTPUT.h5 is\n"
    "created; an existing one keeps what it holds and gets the matrix as one more\n"
    "group (several matrices in one file: --group /A, then --group /B).\n"
    "\n"
    "options:\n"
    "  --generate SPEC  writes a generated matrix instead of reading one: SPEC is\n"
    "                   a config's matrix.generator mapping, e.g.\n"
    "                   '{type: laplacian_3d, nx: 256, ny: 256, nz: 256, renumber: {seed: 1}}'\n"
    "  --group NAME     the HDF5 group to write (default /A)\n"
    "  --force          replaces the group if OUTPUT.h5 already holds it (without\n"
    "                   --force that is an error and the file is left as it was)\n"
    "  --help           prints this text\n"
    "  --version        prints the version, commit and build (CUDA, PETSc, HDF5)\n"
    "\n"
    "exit codes:\n"
    "  0  written\n"
    "  1  error: an unreadable input, a group already there, the output the input\n"
    "     itself (or a link to it); nothing written\n"
    "  2  bad command line: an unknown option, a missing or malformed argument\n"
    "\n"
    "The generators and their keys (matrix.generator): docs/config.md\n";

struct Arguments {
  std::string input, output, group = "/A";
  std::string generate;  // a generator spec instead of an input file
  bool force = false;
};

// The reason when the command line is bad, else empty.
std::string parse_arguments(const std::vector<std::string>& argv, Arguments& args) {
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--group") {
      if (i + 1 >= argv.size()) return "--group needs a value";
      args.group = argv[++i];
    } else if (arg.starts_with("--group=")) {
      args.group = arg.substr(8);
    } else if (arg == "--generate") {
      if (i + 1 >= argv.size()) return "--generate needs a value";
      args.generate = argv[++i];
    } else if (arg == "--force") {
      args.force = true;
    } else if (arg.starts_with("-") && arg.size() > 1) {
      return apps::unknown_option(arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (args.group.empty()) return "--group must not be empty";
  if (!args.generate.empty()) {
    if (positional.size() != 1)
      return "with --generate, expected one file name (the output), got " + std::to_string(positional.size());
    args.output = positional[0];
    return {};
  }
  if (positional.size() != 2)
    return "expected two file names (input and output), got " + std::to_string(positional.size());
  args.input = positional[0];
  args.output = positional[1];
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> argv_list(argv + 1, argv + argc);
  if (const apps::InfoRequest request = apps::info_request(argv_list); request != apps::InfoRequest::none)
    return apps::print_info(request, "mtx2h5", usage);
  Arguments args;
  if (const std::string problem = parse_arguments(argv_list, args); !problem.empty())
    return apps::usage_error("mtx2h5", problem);
  try {
    // Refused before the (possibly long) read of the input.
    const io::KeyedPath input{"the input", args.input}, output{"the output", args.output};
    if (const std::string clash = io::read_write_clash({&input, 1}, {&output, 1}); !clash.empty()) {
      std::fprintf(stderr, "mtx2h5: %s\n", clash.c_str());
      return apps::exit_error;
    }
    if (!args.force && io::hdf5_file_holds(args.output, args.group)) {
      std::fprintf(stderr, "mtx2h5: %s already holds %s (--force replaces it; --group NAME writes another)\n",
                   args.output.c_str(), args.group.c_str());
      return apps::exit_error;
    }
    const auto write = [&](const auto& matrix, const char* values) {
      io::write_hdf5_csr(args.output, args.group, matrix,
                         args.force ? io::ExistingFile::replace_group : io::ExistingFile::add);
      std::printf("mtx2h5: %lld x %lld, %lld %snonzeros -> %s (group %s)\n", static_cast<long long>(matrix.global_rows),
                  static_cast<long long>(matrix.global_cols), static_cast<long long>(matrix.nnz()), values,
                  args.output.c_str(), args.group.c_str());
    };
    if (!args.generate.empty()) {
      // Read as a config's matrix.generator, with its checks and messages.
      const io::GeneratorSpec spec = io::parse_generator(args.generate, "--generate");
      if (io::generates_complex(spec))
        write(io::generate_complex_rows(spec, 0, io::generated_rows(spec)), "complex ");
      else
        write(io::generate_rows(spec, 0, io::generated_rows(spec)), "");
    } else if (const auto size = io::read_matrix_market_size(args.input); size && size->complex) {
      write(io::read_complex_matrix_market(args.input).matrix, "complex ");
    } else {
      write(io::read_matrix_market(args.input).matrix, "");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtx2h5: %s\n", e.what());
    return apps::exit_error;
  }
  return apps::exit_ok;
}
