// block-eigs: the k extreme eigenpairs of a sparse symmetric matrix,
// distributed over MPI ranks (one GPU each, or the CPU backend).
//   mpirun -np 4 block-eigs config.yaml
#include <cstdio>

#include "apps/app_main.hpp"
#include "apps/run/eigs_run.hpp"

namespace {

const char* const usage =
    "usage: mpirun -np N block-eigs CONFIG.yaml [--set KEY=VALUE]... [--dry-run]\n"
    "       block-eigs --help | --version\n"
    "\n"
    "Finds the k smallest (or largest) eigenpairs of a sparse symmetric matrix read\n"
    "from HDF5 or Matrix Market, or generated, distributed by rows over the ranks.\n"
    "configs/ holds examples; configs/demo.yaml needs no input file.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE  overrides one key of the config, e.g. --set eigensolver.k=4\n"
    "                   (repeatable; VALUE is YAML, checked like the file's)\n"
    "  --dry-run        prints the partition (rows, halo) and each rank's memory plan\n"
    "                   (host and device), checks that it fits, and stops: nothing\n"
    "                   is solved or written\n"
    "  --help           prints this text\n"
    "  --version        prints the version, commit and build (CUDA, PETSc, HDF5)\n"
    "\n"
    "exit codes:\n"
    "  0  every pair converged\n"
    "  1  error: bad input, or a run the memory would not hold (refused before it\n"
    "     allocates, with what it needs and how many ranks would do)\n"
    "  2  bad command line: an unknown option, a missing or malformed argument\n"
    "  3  not converged: the iteration limit, stagnation, divergence, or a tolerance\n"
    "     below what fp64 allows (the results are still written, marked)\n"
    "  4  interrupted by SIGTERM, SIGINT, SIGUSR1 or the stop file (the checkpoint\n"
    "     and the results so far written, where the config asks for them)\n"
    "\n"
    "Every config key, with its default and rules: docs/config.md\n";

}  // namespace

int main(int argc, char** argv) {
  return blockeigs::apps::run_mpi_app(argc, argv, {"block-eigs", usage}, blockeigs::apps::run_eigs);
}
