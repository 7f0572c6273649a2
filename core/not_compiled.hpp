// The one error a backend's stub throws where a build lacks that backend
// (CUDA, NCCL, ...): it names the operation asked for and the backend it
// needs, so that callers and tests can tell it from every other Error and say
// what to rebuild with. Its message: "<operation>: not compiled with <backend>",
// or with the reason the operation was reached, "<operation>: <context>, but
// block-eigs was not compiled with <backend>"; then the CMake option, if any.
#pragma once

#include <string>
#include <utility>

#include "core/error.hpp"

namespace blockeigs {

class NotCompiled : public Error {
 public:
  NotCompiled(std::string operation, std::string backend, const std::string& context = {},
              const std::string& cmake_option = {})
      : Error(operation + ": " + (context.empty() ? "" : context + ", but block-eigs was ") + "not compiled with " +
              backend + (cmake_option.empty() ? "" : " (CMake option " + cmake_option + ")")),
        operation_(std::move(operation)),
        backend_(std::move(backend)) {}

  const std::string& operation() const { return operation_; }
  const std::string& backend() const { return backend_; }

 private:
  std::string operation_, backend_;
};

}  // namespace blockeigs
