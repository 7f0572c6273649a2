// The CUDA half of Context and Event, behind plain functions:
// context_cuda.cpp implements them, context_stub.cpp (a build without CUDA)
// throws "not compiled with CUDA" from each. Private to dense/.
#pragma once

#include <memory>

#include "core/backend_lists.hpp"

namespace blockeigs::dense::cuda_context {

// A device context's stream and library handles.
struct Resources;
struct ResourcesDeleter {
  void operator()(Resources* resources) const noexcept;
};
using ResourcesPtr = std::unique_ptr<Resources, ResourcesDeleter>;

// Selects `device` for this thread and makes its stream; throws InputError
// when the device does not exist or CUDA is not compiled in.
ResourcesPtr create(int device);
// Events are cudaEvent_t behind void*; destroying one never throws.
void destroy_event(void* event) noexcept;

// What a device context and its events do, each as OP(signature, name) (core/backend_lists.hpp), name
// the Context or Event member that asks for it: make_current selects the resources' device for the calling
// thread; the library handles are created on first use.
#define BLOCKEIGS_CUDA_CONTEXT_OPERATIONS(OP)                                 \
  OP(void make_current(const Resources& resources), "Context::make_current")  \
  OP(void* stream(const Resources& resources), "Context::stream")             \
  OP(void* cusparse_handle(Resources& resources), "Context::cusparse_handle") \
  OP(void* cublas_handle(Resources& resources), "Context::cublas_handle")     \
  OP(void warm_up(Resources& resources), "Context::warm_up")                  \
  OP(void synchronize(const Resources& resources), "Context::synchronize")    \
  OP(void* create_event(bool timing), "Event")                                \
  OP(void record_event(void* event, void* stream), "Event::record")           \
  OP(void synchronize_event(void* event), "Event::synchronize")               \
  OP(bool event_done(void* event), "Event::done")                             \
  OP(double seconds_between(void* earlier, void* later), "Event::seconds_since")
BLOCKEIGS_CUDA_CONTEXT_OPERATIONS(BLOCKEIGS_BACKEND_DECLARE)

}  // namespace blockeigs::dense::cuda_context
