#include "solver/chfsi/eigen_method.hpp"

#include "core/error.hpp"

namespace blockeigs::solver {

std::string_view to_string(EigenMethod method) {
  switch (method) {
    case EigenMethod::automatic: return "auto";
    case EigenMethod::lobpcg: return "lobpcg";
    case EigenMethod::chebyshev_filter: return "chebyshev_filter";
  }
  return "?";
}

MethodChoice choose_eigen_method(EigenMethod requested, int k, bool generalized, bool constrained, bool preconditioned,
                                 bool complex) {
  const char* refusal = generalized      ? "A x = lambda B x (matrix_b)"
                        : constrained    ? "constraints (eigensolver.constraints)"
                        : preconditioned ? "a preconditioner (the filter is its own acceleration)"
                                         : nullptr;
  if (requested == EigenMethod::chebyshev_filter) {
    if (refusal)
      fail_input(
          "eigensolver.method chebyshev_filter takes standard problems without constraints or a "
          "preconditioner, not ",
          refusal, ": use method lobpcg (or auto)");
    return {EigenMethod::chebyshev_filter, "chosen"};
  }
  if (requested == EigenMethod::lobpcg) return {EigenMethod::lobpcg, "chosen"};
  if (refusal) return {EigenMethod::lobpcg, detail::concat("auto: the filter does not take ", refusal)};
  if (complex)
    return {EigenMethod::chebyshev_filter,
            "auto: complex values, a standard problem without constraints or a preconditioner (the filter is "
            "faster there at any k)"};
  if (k < filter_min_pairs) return {EigenMethod::lobpcg, detail::concat("auto: k = ", k, " < ", filter_min_pairs)};
  return {EigenMethod::chebyshev_filter,
          detail::concat("auto: k = ", k, " >= ", filter_min_pairs,
                         ", a standard problem without constraints or a preconditioner")};
}

}  // namespace blockeigs::solver
