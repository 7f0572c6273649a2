// The contexts a device test compares on: the host's, and device 0's where a
// GPU is visible (in CI there is none, and the host's alone run).
#pragma once

#include <memory>
#include <vector>

#include "dense/context.hpp"
#include "dense/memory.hpp"

namespace blockeigs::test {

class TestContexts {
 public:
  TestContexts() {
    if (dense::cuda_device_count() > 0) device_ = std::make_unique<dense::Context>(dense::Context::cuda(0));
  }
  // The host first, then the device where there is one.
  std::vector<const dense::Context*> all() const {
    std::vector<const dense::Context*> contexts{&host_};
    if (device_) contexts.push_back(device_.get());
    return contexts;
  }
  const dense::Context& host() const { return host_; }

 private:
  dense::Context host_ = dense::Context::host();
  std::unique_ptr<dense::Context> device_;  // held in place: a context in use is not moved
};

}  // namespace blockeigs::test
