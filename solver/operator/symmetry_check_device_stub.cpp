// The symmetry check's device lookups where the build has no CUDA: never
// chosen (no context there is a device's), an error if called. Written out:
// a class of four members, whose out-of-class definitions the compiler checks
// against the class, and whose stubs differ (fits answers; the rest throw).
#include "core/not_compiled.hpp"
#include "solver/operator/symmetry_check_device.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const char* operation) { throw NotCompiled(operation, "CUDA"); }
}  // namespace

struct DeviceSymmetryRows::Impl {};

bool DeviceSymmetryRows::fits(const CsrRows&, std::int64_t) { return false; }

DeviceSymmetryRows::DeviceSymmetryRows(const dense::Context&, const CsrRows&) { not_compiled("DeviceSymmetryRows"); }

DeviceSymmetryRows::~DeviceSymmetryRows() = default;

DeviceLocalPass DeviceSymmetryRows::local_pass() const { not_compiled("DeviceSymmetryRows::local_pass"); }

template <class Index>
bool DeviceSymmetryRows::received_mismatch(const std::vector<Index>&, const std::vector<Index>&,
                                           const std::vector<double>&) const {
  not_compiled("DeviceSymmetryRows::received_mismatch");
}

template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int32_t>&, const std::vector<std::int32_t>&,
                                                    const std::vector<double>&) const;
template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,
                                                    const std::vector<double>&) const;

}  // namespace blockeigs::solver
