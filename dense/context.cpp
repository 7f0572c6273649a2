#include "dense/context.hpp"

#include "dense/context_backend.hpp"

namespace blockeigs::dense {

// A host context holds no resources; a device context its stream and
// handles, which the backend (context_cuda.cpp or its stub) owns.
struct Context::Impl {
  Space space = Space::host;
  int device = -1;
  cuda_context::ResourcesPtr cuda;
};

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

Context Context::host() { return Context(std::make_unique<Impl>()); }

Context Context::cuda(int device) {
  auto impl = std::make_unique<Impl>();
  impl->cuda = cuda_context::create(device);
  impl->space = Space::device;
  impl->device = device;
  return Context(std::move(impl));
}

Space Context::space() const { return impl_->space; }
int Context::device() const { return impl_->device; }

void Context::make_current() const {
  if (impl_->cuda) cuda_context::make_current(*impl_->cuda);
}

void* Context::stream() const { return impl_->cuda ? cuda_context::stream(*impl_->cuda) : nullptr; }

void* Context::cusparse_handle() const { return impl_->cuda ? cuda_context::cusparse_handle(*impl_->cuda) : nullptr; }

void* Context::cublas_handle() const { return impl_->cuda ? cuda_context::cublas_handle(*impl_->cuda) : nullptr; }

void Context::warm_up() const {
  if (impl_->cuda) cuda_context::warm_up(*impl_->cuda);
}

void Context::synchronize() const {
  if (impl_->cuda) cuda_context::synchronize(*impl_->cuda);
}

Event::Event(const Context& context, Timing timing) : context_(context) {
  if (context_.space() == Space::device) event_ = cuda_context::create_event(timing == Timing::on);
}

Event::~Event() {
  if (event_) cuda_context::destroy_event(event_);
}

void Event::record() {
  if (event_) cuda_context::record_event(event_, context_.stream());
}

void Event::synchronize() {
  if (event_) cuda_context::synchronize_event(event_);
}

bool Event::done() const { return !event_ || cuda_context::event_done(event_); }

double Event::seconds_since(const Event& earlier) const {
  if (!event_ || !earlier.event_) return 0.0;
  return cuda_context::seconds_between(earlier.event_, event_);
}

}  // namespace blockeigs::dense
