// Which eigensolver a run takes (eigensolver.method): LOBPCG, or
// Chebyshev-filtered subspace iteration for many pairs, and the rule `auto`
// follows, with the reason the summary prints.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace blockeigs::solver {

enum class EigenMethod { automatic, lobpcg, chebyshev_filter };
std::string_view to_string(EigenMethod method);  // "auto", "lobpcg", "chebyshev_filter"

// From this many pairs `auto` takes the filter for a problem it takes (docs/benchmarks/many-eigenpairs.md).
inline constexpr int filter_min_pairs = 64;

struct MethodChoice {
  EigenMethod method = EigenMethod::lobpcg;
  std::string reason;  // "auto: k = 200 >= 64, a standard problem without constraints or a preconditioner"
};

// The method for k pairs of a problem: `requested` unless automatic. The
// filter takes standard problems without constraints or a preconditioner
// (the filter is its acceleration): requested for another, it is an
// InputError naming what it does not take and the alternative. Automatic:
// LOBPCG below filter_min_pairs and wherever the filter does not apply, the
// filter from there; for complex values the filter wherever it applies
// (on the 128^3 Bloch Laplacian, k = 16, it took 1.05 s against complex
// LOBPCG's 1.69 s with its automatic preconditioner: docs/benchmarks/complex.md).
MethodChoice choose_eigen_method(EigenMethod requested, int k, bool generalized, bool constrained, bool preconditioned,
                                 bool complex = false);

}  // namespace blockeigs::solver
