// The device halves of the Chebyshev passes (cuda/chebyshev_steps_cuda.hpp) in
// a build without CUDA: each throws, so that a device view in a CPU-only build
// fails loudly.
#include "core/not_compiled.hpp"
#include "solver/precond/cuda/chebyshev_steps_cuda.hpp"

namespace blockeigs::solver::device_ops {
namespace {

[[noreturn]] void not_compiled(const char* pass) { throw NotCompiled(pass, "CUDA", "a block in device memory"); }

}  // namespace

#define BLOCKEIGS_STUBS(T, U) BLOCKEIGS_CHEBYSHEV_ENDS(T, U, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_CHEBYSHEV_PAIRS(BLOCKEIGS_STUBS)
#undef BLOCKEIGS_STUBS
BLOCKEIGS_CHEBYSHEV_STEPS(float, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_CHEBYSHEV_STEPS(double, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)

}  // namespace blockeigs::solver::device_ops
