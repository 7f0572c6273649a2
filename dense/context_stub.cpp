// Context and Event's CUDA half where the build has no CUDA: Context::cuda
// says so, and no device context exists for the rest to be reached; each
// throws "not compiled with CUDA" if it is.
#include <string>

#include "core/error.hpp"
#include "core/not_compiled.hpp"
#include "dense/context_backend.hpp"

namespace blockeigs::dense::cuda_context {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

struct Resources {};

// Nothing to release: create() throws, so no Resources exist.
void ResourcesDeleter::operator()(Resources* resources) const noexcept { delete resources; }

// A request the user can change (execution.backend, a device array), so an InputError, as for a device
// that does not exist.
ResourcesPtr create(int) {
  throw InputError(
      "the CUDA backend was requested, but block-eigs was built without CUDA "
      "(configure with the `cuda` preset)");
}

// Nothing to destroy: create_event throws, so no event exists.
void destroy_event(void*) noexcept {}

BLOCKEIGS_CUDA_CONTEXT_OPERATIONS(BLOCKEIGS_BACKEND_STUB)

}  // namespace blockeigs::dense::cuda_context
