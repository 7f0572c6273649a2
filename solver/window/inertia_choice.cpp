#include <string>

#include "core/error.hpp"
#include "solver/window/inertia.hpp"

namespace blockeigs::solver {

CountChoice choose_count(WindowCount requested, std::int64_t global_rows, bool complex) {
  if (complex) return {false, std::string("no inertia count for complex values (") + kNoComplexInertia + ")"};
  std::string missing;
  const bool available = inertia_available(&missing);
  switch (requested) {
    case WindowCount::density: return {false, "eigensolver.count: density"};
    case WindowCount::inertia:
      if (!available)
        fail_input("eigensolver.count: inertia needs PETSc with MUMPS, and ", missing, "; use count: density");
      return {true, "eigensolver.count: inertia"};
    case WindowCount::automatic: break;
  }
  if (!available) return {false, "no inertia count to vouch for it: " + missing};
  if (global_rows > kAutoInertiaRows)
    return {false, "no inertia count under count: auto above " + std::to_string(kAutoInertiaRows) +
                       " rows (a factorization's cost); count: inertia asks for one"};
  return {true, "count: auto, the build has MUMPS"};
}

}  // namespace blockeigs::solver
