// Context and Event's CUDA half where the build has no CUDA: Context::cuda
// says so, and no device context exists for the rest to be reached; each
// throws "not compiled with CUDA" if it is.
#include <string>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "dense/context_backend.hpp"

namespace blockeigs::dense::cuda_context {
namespace {
[[noreturn]] void not_compiled(const std::string& what) { throw NotCompiled(what, "CUDA"); }
}  // namespace

struct Resources {};

// Nothing to release: create() throws, so no Resources exist.
void ResourcesDeleter::operator()(Resources* resources) const noexcept { delete resources; }

ResourcesPtr create(int) {
  throw InputError(
      "the CUDA backend was requested, but block-eigs was built without CUDA "
      "(configure with the `cuda` preset)");
}

void make_current(const Resources&) { not_compiled("Context::make_current"); }
void* stream(const Resources&) { not_compiled("Context::stream"); }
void* cusparse_handle(Resources&) { not_compiled("Context::cusparse_handle"); }
void* cublas_handle(Resources&) { not_compiled("Context::cublas_handle"); }
void warm_up(Resources&) { not_compiled("Context::warm_up"); }
void synchronize(const Resources&) { not_compiled("Context::synchronize"); }

void* create_event(bool) { not_compiled("Event"); }
// Nothing to destroy: create_event throws, so no event exists.
void destroy_event(void*) noexcept {}
void record_event(void*, void*) { not_compiled("Event::record"); }
void synchronize_event(void*) { not_compiled("Event::synchronize"); }
bool event_done(void*) { not_compiled("Event::done"); }
double seconds_between(void*, void*) { not_compiled("Event::seconds_since"); }

}  // namespace blockeigs::dense::cuda_context
