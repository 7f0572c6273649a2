// block-cg: solves A X = B for a sparse symmetric positive definite matrix
// and a block of right-hand sides, distributed over MPI ranks.
//   mpirun -np 4 block-cg config.yaml
#include "apps/app_main.hpp"
#include "apps/run/cg_run.hpp"

namespace {

const char* const usage =
    "usage: mpirun -np N block-cg CONFIG.yaml [--set KEY=VALUE]... [--dry-run]\n"
    "       block-cg --help | --version\n"
    "\n"
    "Solves A X = B with breakdown-free block conjugate gradients for a sparse\n"
    "symmetric positive definite matrix (HDF5, Matrix Market or generated) and a\n"
    "block of right-hand sides (random, A times a known solution, or HDF5).\n"
    "configs/ holds examples; configs/block-cg-demo.yaml needs no input file.\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE  overrides one key of the config, e.g. --set block_cg.rtol=1e-10\n"
    "                   (repeatable; VALUE is YAML, checked like the file's)\n"
    "  --dry-run        prints the partition (rows, halo) and each rank's memory plan\n"
    "                   (host and device), checks that it fits, and stops: nothing\n"
    "                   is solved or written\n"
    "  --help           prints this text\n"
    "  --version        prints the version, commit and build (CUDA, PETSc, HDF5)\n"
    "\n"
    "exit codes:\n"
    "  0  every column converged\n"
    "  1  error: bad input, or a run the memory would not hold (refused before it\n"
    "     allocates, with what it needs and how many ranks would do)\n"
    "  2  bad command line: an unknown option, a missing or malformed argument\n"
    "  3  not converged: the iteration limit, stagnation, or no search direction\n"
    "     left (the results are still written, marked)\n"
    "  4  interrupted by SIGTERM, SIGINT, SIGUSR1 or the stop file (the checkpoint\n"
    "     and the results so far written, where the config asks for them)\n"
    "\n"
    "Every config key, with its default and rules: docs/config.md\n";

}  // namespace

int main(int argc, char** argv) {
  return blockeigs::apps::run_mpi_app(argc, argv, {"block-cg", usage}, blockeigs::apps::run_cg);
}
