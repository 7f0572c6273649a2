// Collective error handling (ARCHITECTURE.md section 4): a step that can fail
// on one rank is agreed on by all ranks before any rank takes another branch.
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <string>

#include "core/checks.hpp"  // BLOCKEIGS_MPI_CHECK, defined there for every layer
#include "core/error.hpp"
#include <type_traits>
#include <utility>

namespace blockeigs::solver {

// Thrown by agree_on_error on every rank: main() can exit cleanly, knowing
// that no rank is left waiting in a collective.
class AgreedError : public Error {
 public:
  AgreedError(const std::string& message, bool input) : Error(message), input_(input) {}
  bool is_input_error() const { return input_; }

 private:
  bool input_;
};

// An input error that every rank detects identically (its test uses data
// every rank holds the same bits of, e.g. a broadcast result): thrown as
// AgreedError directly, with no communication.
template <class... Parts>
[[noreturn]] void fail_input_everywhere(const Parts&... parts) {
  throw AgreedError(blockeigs::detail::concat(parts...), true);
}

// Every rank calls this with the exception its step raised (or null). If any
// rank failed, every rank throws: the error of the lowest failing rank, with
// its message, and whether it was an InputError.
void agree_on_error(MPI_Comm comm, std::exception_ptr local_error);

// Runs `step` on every rank and agrees on its outcome: returns its result on
// every rank, or throws the same error on every rank.
template <class Step>
auto collectively(MPI_Comm comm, Step&& step) -> decltype(step()) {
  using Result = decltype(step());
  std::exception_ptr error;
  if constexpr (std::is_void_v<Result>) {
    try {
      step();
    } catch (...) {
      error = std::current_exception();
    }
    agree_on_error(comm, error);
  } else {
    std::optional<Result> result;  // empty only where agree_on_error throws
    try {
      result.emplace(step());
    } catch (...) {
      error = std::current_exception();
    }
    agree_on_error(comm, error);
    return std::move(*result);
  }
}

// A private duplicate of a communicator, freed with it: a solver's
// point-to-point reductions (reduce_tag) then cannot match messages of the
// caller's.
class PrivateComm {
 public:
  // The duplicate returns MPI errors as codes whatever the caller's handler,
  // so that the checks on its calls can fire.
  explicit PrivateComm(MPI_Comm comm) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_dup(comm, &comm_));
    use_errors_return(comm_);
  }
  PrivateComm(const PrivateComm&) = delete;
  PrivateComm& operator=(const PrivateComm&) = delete;
  ~PrivateComm() { BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_free(&comm_)); }
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace blockeigs::solver
