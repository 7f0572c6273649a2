// The symmetry check's device lookups where the build has no CUDA: never
// chosen (no context there is a device's), an error if called.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/symmetry_check_device.hpp"

namespace blockeigs::solver {

struct DeviceSymmetryRows::Impl {};

bool DeviceSymmetryRows::fits(const CsrRows&, std::int64_t) { return false; }

DeviceSymmetryRows::DeviceSymmetryRows(const dense::Context&, const CsrRows&) {
  throw NotCompiled("DeviceSymmetryRows", "CUDA");
}

DeviceSymmetryRows::~DeviceSymmetryRows() = default;

DeviceLocalPass DeviceSymmetryRows::local_pass() const { return {}; }

template <class Index>
bool DeviceSymmetryRows::received_mismatch(const std::vector<Index>&, const std::vector<Index>&,
                                           const std::vector<double>&) const {
  return false;
}

template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int32_t>&, const std::vector<std::int32_t>&,
                                                    const std::vector<double>&) const;
template bool DeviceSymmetryRows::received_mismatch(const std::vector<std::int64_t>&, const std::vector<std::int64_t>&,
                                                    const std::vector<double>&) const;

}  // namespace blockeigs::solver
