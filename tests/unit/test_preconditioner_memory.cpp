// The memory plan's numbers for each preconditioner kind, now that each
// preconditioner states its memory (solver/precond/preconditioner_memory.hpp):
// the same bytes as the apps' plan gave when it derived them itself
// (the expected values below were printed by that derivation).
#include <gtest/gtest.h>

#include <cstdint>

#include "solver/plan/memory_plan.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/precond/preconditioner_memory.hpp"

namespace blockeigs {
namespace {

// A preconditioner as the config names it.
struct Variant {
  const char* name;
  PreconditionerKind kind;
  ChebyshevPrecision precision = ChebyshevPrecision::automatic;
  bool jacobi = true;
};

const Variant variants[] = {
    {"none", PreconditionerKind::none},
    {"jacobi", PreconditionerKind::jacobi},
    {"chebyshev", PreconditionerKind::chebyshev},
    {"chebyshev fp32", PreconditionerKind::chebyshev, ChebyshevPrecision::fp32},
    {"chebyshev fp64", PreconditionerKind::chebyshev, ChebyshevPrecision::fp64},
    {"chebyshev without jacobi", PreconditionerKind::chebyshev, ChebyshevPrecision::automatic, false},
    {"petsc", PreconditionerKind::petsc}};

struct Expected {
  solver::PreconditionerMemory memory;
  std::int64_t buffers_peak, host_peak, device_peak;
};

// Per variant (in order), fp64 then fp32 blocks, LOBPCG (k 8) then block CG
// (16 columns), the host then the device: a 24^3 Laplacian's share at 2 ranks.
const Expected expected[] = {
    // none
    {{0, 0, false}, 8716040, 9517840, 0},  // fp64, LOBPCG: host, then device
    {{0, 0, false}, 9158408, 1444624, 109821704},
    {{0, 0, false}, 6835976, 7637776, 0},  // fp64, block CG: host, then device
    {{0, 0, false}, 6835976, 1444624, 107499272},
    {{0, 0, false}, 4465160, 5266960, 0},  // fp32, LOBPCG: host, then device
    {{0, 0, false}, 4465160, 1230352, 105128456},
    {{0, 0, false}, 3525128, 4326928, 0},  // fp32, block CG: host, then device
    {{0, 0, false}, 3525128, 1230352, 104188424},
    // jacobi
    {{16, 0, false}, 8826632, 9628432, 0},  // fp64, LOBPCG: host, then device
    {{16, 0, false}, 9269000, 1444624, 109932296},
    {{16, 0, false}, 7831304, 8633104, 0},  // fp64, block CG: host, then device
    {{16, 0, false}, 7831304, 1444624, 108494600},
    {{8, 0, false}, 4520456, 5322256, 0},  // fp32, LOBPCG: host, then device
    {{8, 0, false}, 4520456, 1230352, 105183752},
    {{8, 0, false}, 4022792, 4824592, 0},  // fp32, block CG: host, then device
    {{8, 0, false}, 4022792, 1230352, 104686088},
    // chebyshev (auto)
    {{8, 12, true}, 9815048, 10616848, 0},  // fp64, LOBPCG: host, then device
    {{8, 12, true}, 10257416, 1444624, 110920712},
    {{16, 16, false}, 9600776, 10402576, 0},  // fp64, block CG: host, then device
    {{16, 16, false}, 9600776, 1444624, 110264072},
    {{8, 8, false}, 5073416, 5875216, 0},  // fp32, LOBPCG: host, then device
    {{8, 8, false}, 5073416, 1230352, 105736712},
    {{8, 8, false}, 4907528, 5709328, 0},  // fp32, block CG: host, then device
    {{8, 8, false}, 4907528, 1230352, 105570824},
    // chebyshev fp32
    {{8, 12, true}, 9815048, 10616848, 0},  // fp64, LOBPCG: host, then device
    {{8, 12, true}, 10257416, 1444624, 110920712},
    {{8, 12, true}, 9317384, 10119184, 0},  // fp64, block CG: host, then device
    {{8, 12, true}, 9317384, 1444624, 109980680},
    {{8, 8, false}, 5073416, 5875216, 0},  // fp32, LOBPCG: host, then device
    {{8, 8, false}, 5073416, 1230352, 105736712},
    {{8, 8, false}, 4907528, 5709328, 0},  // fp32, block CG: host, then device
    {{8, 8, false}, 4907528, 1230352, 105570824},
    // chebyshev fp64
    {{16, 16, false}, 9932552, 10734352, 0},  // fp64, LOBPCG: host, then device
    {{16, 16, false}, 10374920, 1444624, 111038216},
    {{16, 16, false}, 9600776, 10402576, 0},  // fp64, block CG: host, then device
    {{16, 16, false}, 9600776, 1444624, 110264072},
    {{8, 12, true}, 5564168, 6365968, 0},  // fp32, LOBPCG: host, then device
    {{8, 12, true}, 5564168, 1230352, 106227464},
    {{8, 12, true}, 5564168, 6365968, 0},  // fp32, block CG: host, then device
    {{8, 12, true}, 5564168, 1230352, 106227464},
    // chebyshev, jacobi: false
    {{0, 12, true}, 9759752, 10561552, 0},  // fp64, LOBPCG: host, then device
    {{0, 12, true}, 10202120, 1444624, 110865416},
    {{0, 16, false}, 9490184, 10291984, 0},  // fp64, block CG: host, then device
    {{0, 16, false}, 9490184, 1444624, 110153480},
    {{0, 8, false}, 5018120, 5819920, 0},  // fp32, LOBPCG: host, then device
    {{0, 8, false}, 5018120, 1230352, 105681416},
    {{0, 8, false}, 4852232, 5654032, 0},  // fp32, block CG: host, then device
    {{0, 8, false}, 4852232, 1230352, 105515528},
    // petsc
    {{0, 0, false}, 8716040, 9517840, 0},  // fp64, LOBPCG: host, then device
    {{0, 0, false}, 9158408, 1444624, 109821704},
    {{0, 0, false}, 7720712, 8522512, 0},  // fp64, block CG: host, then device
    {{0, 0, false}, 7720712, 1444624, 108384008},
    {{0, 0, false}, 4465160, 5266960, 0},  // fp32, LOBPCG: host, then device
    {{0, 0, false}, 4465160, 1230352, 105128456},
    {{0, 0, false}, 3967496, 4769296, 0},  // fp32, block CG: host, then device
    {{0, 0, false}, 3967496, 1230352, 104630792},
};

TEST(PreconditionerMemory, ThePlanKeepsItsNumbersForEveryKind) {
  const solver::RankShape share = solver::even_share(13824, 93312, 2);
  const Expected* e = expected;
  for (const Variant& v : variants)
    for (const int value_bytes : {8, 4})
      for (const bool lobpcg : {true, false})
        for (const Space space : {Space::host, Space::device}) {
          SCOPED_TRACE(::testing::Message() << v.name << ", fp" << 8 * value_bytes << ", "
                                            << (lobpcg ? "LOBPCG" : "block CG") << ", " << to_string(space));
          const bool preconditioned = v.kind != PreconditionerKind::none;
          solver::SolverShape s;
          if (lobpcg) {
            s = solver::lobpcg_shape(8, 0, false, preconditioned, value_bytes, space, share.global_rows);
          } else {
            s.kind = solver::SolverShape::Kind::block_cg;
            s.value_bytes = value_bytes;
            s.columns = 16;
            s.preconditioner = preconditioned;
          }
          solver::ChebyshevOptions chebyshev;
          chebyshev.precision = v.precision;
          chebyshev.jacobi = v.jacobi;
          chebyshev.eigensolver = lobpcg;
          s.preconditioner_memory = solver::preconditioner_memory(
              v.kind, value_bytes == 4 ? Precision::fp32 : Precision::fp64, space, chebyshev);
          const solver::MemoryPlan plan = solver::plan_memory(share, {}, s, space);
          EXPECT_EQ(s.preconditioner_memory.vector_bytes, e->memory.vector_bytes);
          EXPECT_EQ(s.preconditioner_memory.block_bytes, e->memory.block_bytes);
          EXPECT_EQ(s.preconditioner_memory.matrix_copy, e->memory.matrix_copy);
          EXPECT_EQ(plan.buffers_peak, e->buffers_peak);
          EXPECT_EQ(plan.host_peak, e->host_peak);
          EXPECT_EQ(plan.device_peak, e->device_peak);
          ++e;
        }
  EXPECT_EQ(e, std::end(expected));
}

// Each class's own statement, which preconditioner_memory returns by kind.
TEST(PreconditionerMemory, TheClassesStateTheirOwn) {
  EXPECT_EQ(solver::JacobiPreconditioner<double>::memory().vector_bytes, 16);
  EXPECT_EQ(solver::JacobiPreconditioner<float>::memory().vector_bytes, 8);
  solver::ChebyshevOptions o;  // auto: fp32 for LOBPCG on fp64 blocks
  const solver::PreconditionerMemory rounded = solver::ChebyshevPreconditioner<double>::memory(o, Space::device);
  EXPECT_EQ(rounded.vector_bytes, 8);
  EXPECT_EQ(rounded.block_bytes, 12);
  EXPECT_TRUE(rounded.matrix_copy);
  o.eigensolver = false;  // auto: the problem's precision for block CG
  const solver::PreconditionerMemory same = solver::ChebyshevPreconditioner<double>::memory(o, Space::device);
  EXPECT_EQ(same.vector_bytes, 16);
  EXPECT_EQ(same.block_bytes, 16);
  EXPECT_FALSE(same.matrix_copy);
  const solver::PreconditionerMemory petsc =
      solver::preconditioner_memory(PreconditionerKind::petsc, Precision::fp64, Space::host, o);
  EXPECT_EQ(petsc.vector_bytes + petsc.block_bytes, 0);
  EXPECT_FALSE(petsc.matrix_copy);
}

}  // namespace
}  // namespace blockeigs
