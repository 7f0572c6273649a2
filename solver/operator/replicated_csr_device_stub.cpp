// The device passes of replicated_csr.hpp where the build has no CUDA: never
// reached (no array is a device's there), an error if called.
#include "core/error.hpp"
#include "solver/operator/replicated_csr.hpp"

namespace blockeigs::solver {

CsrProblem find_offsets_problem_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw Error("find_offsets_problem_on_device: block-eigs was built without CUDA");
}
CsrProblem find_entry_problem_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw Error("find_entry_problem_on_device: block-eigs was built without CUDA");
}
CsrProblem find_asymmetry_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw Error("find_asymmetry_on_device: block-eigs was built without CUDA");
}

}  // namespace blockeigs::solver
