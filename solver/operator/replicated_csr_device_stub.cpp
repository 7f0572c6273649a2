// The device passes of replicated_csr.hpp where the build has no CUDA: never
// reached (no array is a device's there), an error if called.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/replicated_csr.hpp"

namespace blockeigs::solver {

CsrProblem find_offsets_problem_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw NotCompiled("find_offsets_problem_on_device", "CUDA");
}
CsrProblem find_entry_problem_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw NotCompiled("find_entry_problem_on_device", "CUDA");
}
CsrProblem find_asymmetry_on_device(const ReplicatedCsr&, const dense::Context&) {
  throw NotCompiled("find_asymmetry_on_device", "CUDA");
}
CsrProblem find_hermitian_problem_on_device(const ReplicatedCsr&, HermitianPart, const dense::Context&) {
  throw NotCompiled("find_hermitian_problem_on_device", "CUDA");
}

}  // namespace blockeigs::solver
