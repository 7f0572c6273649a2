// Typed exceptions shared by every layer. User errors (bad input, bad config)
// and library failures (CUDA, MPI, HDF5, ...) are distinct types so that
// callers and tests can tell them apart.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace blockeigs {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something the user can fix: a file, a config key, a value, a rank count.
class InputError : public Error {
 public:
  using Error::Error;
};

// A call into a library failed: the message names the call, file and line.
class LibraryError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

// Throw InputError with the parts streamed together.
template <class... Parts>
[[noreturn]] void fail_input(const Parts&... parts) {
  throw InputError(detail::concat(parts...));
}

}  // namespace blockeigs

// Internal invariants: checked in debug builds only.
#ifdef NDEBUG
#define BLOCKEIGS_ASSERT(cond) ((void)0)
#else
#define BLOCKEIGS_ASSERT(cond)        \
  ((cond) ? (void)0                   \
          : throw ::blockeigs::Error( \
                ::blockeigs::detail::concat("internal error: ", #cond, " failed at ", __FILE__, ":", __LINE__)))
#endif
