// The device halves of the block operations (cuda/block_ops_cuda.hpp) in a
// build without CUDA: each throws, naming the operation, so that a device
// view reaching a block operation in a CPU-only build fails loudly instead
// of doing nothing.
#include <cstdint>
#include <memory>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"

namespace blockeigs::solver::device_ops {
namespace {

[[noreturn]] void not_compiled(const char* operation) {
  throw NotCompiled(operation, "CUDA", "a block in device memory");
}

}  // namespace

// Every operation of cuda/block_ops_cuda.hpp's lists, each a specialisation (an overload for those of no element
// type) that throws naming it.
#define BLOCKEIGS_STUBS(T)                                              \
  BLOCKEIGS_DEVICE_REDUCTIONS(T, BLOCKEIGS_BACKEND_STUB_SPECIALISATION) \
  BLOCKEIGS_DEVICE_UPDATES(T, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_STUBS)
BLOCKEIGS_DEVICE_RITZ_UPDATES(float, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_DEVICE_RITZ_UPDATES(double, BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_DEVICE_CONVERSIONS(BLOCKEIGS_BACKEND_STUB_SPECIALISATION)
BLOCKEIGS_DEVICE_UNTYPED(BLOCKEIGS_BACKEND_STUB)
#undef BLOCKEIGS_STUBS

}  // namespace blockeigs::solver::device_ops
