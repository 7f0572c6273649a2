// The CUDA half of Context and Event, behind plain functions:
// context_cuda.cpp implements them, context_stub.cpp (a build without CUDA)
// throws "not compiled with CUDA" from each. Private to dense/.
#pragma once

#include <memory>

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
// Selects the resources' device for the calling thread.
void make_current(const Resources& resources);
void* stream(const Resources& resources);
// Library handles, created on first use.
void* cusparse_handle(Resources& resources);
void* cublas_handle(Resources& resources);
void warm_up(Resources& resources);
void synchronize(const Resources& resources);

// Events (cudaEvent_t behind void*).
void* create_event(bool timing);
void destroy_event(void* event) noexcept;
void record_event(void* event, void* stream);
void synchronize_event(void* event);
bool event_done(void* event);
double seconds_between(void* earlier, void* later);

}  // namespace blockeigs::dense::cuda_context
