// The preconditioner keys of block-eigs and block-cg configs: the scalar
// forms, the mapping {type: chebyshev, degree, lower, jacobi, precision}
// with its defaults and `degree: auto`, and every error naming file, line
// and key.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "config/run_config.hpp"
#include "tests/support/expect_error.hpp"

namespace blockeigs::cfg {
namespace {

using namespace blockeigs::io;

constexpr const char* kSource = "cfg/p.yaml";
constexpr const char* kMatrix = "matrix: {generator: {type: laplacian_1d, nx: 10}}\n";

solver::PreconditionerOptions eigs_preconditioner(const std::string& value) {
  return parse_eigs_config(std::string(kMatrix) + "eigensolver:\n  preconditioner: " + value + "\n", kSource)
      .eigensolver.preconditioner;
}

solver::PreconditionerOptions cg_preconditioner(const std::string& value) {
  return parse_cg_config(std::string(kMatrix) + "block_cg:\n  preconditioner: " + value + "\n", kSource)
      .solver.preconditioner;
}

TEST(ConfigPreconditioner, ScalarForms) {
  EXPECT_EQ(eigs_preconditioner("none").kind, PreconditionerKind::none);
  EXPECT_EQ(eigs_preconditioner("jacobi").kind, PreconditionerKind::jacobi);
  const solver::PreconditionerOptions c = cg_preconditioner("chebyshev");
  EXPECT_EQ(c.kind, PreconditionerKind::chebyshev);
  EXPECT_EQ(c.chebyshev.degree, 0);  // auto
  EXPECT_EQ(c.chebyshev.lower, solver::ChebyshevOptions{}.lower);
  EXPECT_EQ(c.chebyshev.jacobi, solver::ChebyshevOptions{}.jacobi);
  EXPECT_EQ(c.chebyshev.precision, ChebyshevPrecision::automatic);
}

TEST(ConfigPreconditioner, ChebyshevPrecision) {
  EXPECT_EQ(eigs_preconditioner("{type: chebyshev}").chebyshev.precision, ChebyshevPrecision::automatic);
  EXPECT_EQ(eigs_preconditioner("{type: chebyshev, precision: auto}").chebyshev.precision,
            ChebyshevPrecision::automatic);
  EXPECT_EQ(eigs_preconditioner("{type: chebyshev, precision: fp32}").chebyshev.precision, ChebyshevPrecision::fp32);
  EXPECT_EQ(cg_preconditioner("{type: chebyshev, degree: 8, precision: fp64}").chebyshev.precision,
            ChebyshevPrecision::fp64);
  const EigsConfig set =
      parse_eigs_config(std::string(kMatrix) + "eigensolver: {preconditioner: {type: chebyshev}}\n", kSource,
                        std::vector<std::string>{"eigensolver.preconditioner.precision=fp64"});
  EXPECT_EQ(set.eigensolver.preconditioner.chebyshev.precision, ChebyshevPrecision::fp64);
}

TEST(ConfigPreconditioner, ChebyshevMapping) {
  const solver::PreconditionerOptions c =
      eigs_preconditioner("{type: chebyshev, degree: 8, lower: 0.05, jacobi: true}");
  EXPECT_EQ(c.kind, PreconditionerKind::chebyshev);
  EXPECT_EQ(c.chebyshev.degree, 8);
  EXPECT_EQ(c.chebyshev.lower, 0.05);
  EXPECT_TRUE(c.chebyshev.jacobi);
  EXPECT_EQ(cg_preconditioner("{type: chebyshev, degree: auto, jacobi: false}").chebyshev.degree, 0);
  EXPECT_FALSE(cg_preconditioner("{type: chebyshev, jacobi: false}").chebyshev.jacobi);
  EXPECT_EQ(cg_preconditioner("{type: chebyshev, degree: 100}").chebyshev.degree, 100);
  EXPECT_EQ(cg_preconditioner("{type: chebyshev, lower: auto}").chebyshev.lower, 0);
  EXPECT_TRUE(cg_preconditioner("{type: chebyshev}").chebyshev.jacobi);
  EXPECT_EQ(eigs_preconditioner("{type: jacobi}").kind, PreconditionerKind::jacobi);
  EXPECT_EQ(eigs_preconditioner("{type: none}").kind, PreconditionerKind::none);
  const solver::PreconditionerOptions p =
      cg_preconditioner("{type: petsc, options: \"-pc_type gamg -pc_gamg_threshold 0.02\"}");
  EXPECT_EQ(p.kind, PreconditionerKind::petsc);
  EXPECT_EQ(p.petsc_options, "-pc_type gamg -pc_gamg_threshold 0.02");
  // A --set over the file's scalar.
  const EigsConfig set =
      parse_eigs_config(std::string(kMatrix) + "eigensolver: {preconditioner: jacobi}\n", kSource,
                        std::vector<std::string>{"eigensolver.preconditioner={type: chebyshev, degree: 4}"});
  EXPECT_EQ(set.eigensolver.preconditioner.kind, PreconditionerKind::chebyshev);
  EXPECT_EQ(set.eigensolver.preconditioner.chebyshev.degree, 4);
}

struct ErrorCase {
  const char* value;
  std::initializer_list<std::string_view> mentions;
};

TEST(ConfigPreconditioner, ErrorsNameFileLineAndKey) {
  const ErrorCase cases[] = {
      {"{type: chebyshev, degree: 0}",
       {"cfg/p.yaml:3: ", "eigensolver.preconditioner.degree must be at least 1, got 0"}},
      {"{type: chebyshev, degree: 101}", {"cfg/p.yaml:3: ", "preconditioner.degree must be at most 100, got 101"}},
      {"{type: chebyshev, degree: 1000000}", {"preconditioner.degree must be at most 100"}},
      {"{type: chebyshev, degree: eight}", {"preconditioner.degree must be an integer, got 'eight'"}},
      {"{type: chebyshev, degree: 8.5}", {"preconditioner.degree must be an integer"}},
      {"{type: chebyshev, lower: 1}", {"preconditioner.lower must be below 1", "empty or inverted", "got 1"}},
      {"{type: chebyshev, lower: 2.5}", {"preconditioner.lower must be below 1", "got 2.5"}},
      {"{type: chebyshev, lower: 0}", {"preconditioner.lower must be positive", "got 0"}},
      {"{type: chebyshev, lower: -0.1}", {"preconditioner.lower must be positive"}},
      {"{type: chebyshev, lower: small}", {"preconditioner.lower must be a finite number, got 'small'"}},
      {"{type: chebyshev, jacobi: yes}", {"preconditioner.jacobi must be true or false, got 'yes'"}},
      {"{type: chebyshev, precision: single}",
       {"cfg/p.yaml:3: ", "eigensolver.preconditioner.precision must be auto, fp32 or fp64, got 'single'"}},
      {"{type: chebyshev, precision: [fp32]}", {"eigensolver.preconditioner.precision must be"}},
      {"{type: jacobi, precision: fp32}",
       {"unknown key eigensolver.preconditioner.precision (type jacobi takes no other keys)"}},
      {"{type: chebyshev, degre: 8}", {"unknown key eigensolver.preconditioner.degre (did you mean degree?)"}},
      {"{type: jacobi, degree: 8}",
       {"unknown key eigensolver.preconditioner.degree (type jacobi takes no other keys)"}},
      {"{degree: 8}", {"missing required key eigensolver.preconditioner.type"}},
      {"{type: chebychev}",
       {"preconditioner.type must be none, jacobi, chebyshev or petsc, got 'chebychev' (did you "
        "mean chebyshev?)"}},
      {"ilu", {"eigensolver.preconditioner must be auto, none, jacobi, chebyshev or petsc, got 'ilu'"}},
      {"petsc", {"cfg/p.yaml:3: eigensolver.preconditioner petsc needs its PETSc options"}},
      {"{type: petsc}", {"missing required key eigensolver.preconditioner.options"}},
      {"{type: petsc, options: -pc_type gamg, degree: 4}",
       {"unknown key eigensolver.preconditioner.degree (type petsc takes options)"}},
      {"{type: chebyshev, options: -pc_type gamg}", {"unknown key eigensolver.preconditioner.options"}},
      {"[chebyshev]", {"eigensolver.preconditioner must be auto, none, jacobi, chebyshev or a mapping"}},
  };
  for (const ErrorCase& c : cases)
    test::expect_mentions(test::input_error_message([&] { eigs_preconditioner(c.value); }), c.mentions);
  // block_cg's key is read the same way.
  test::expect_mentions(test::input_error_message([&] { cg_preconditioner("{type: chebyshev, degree: 0}"); }),
                        {"cfg/p.yaml:3: block_cg.preconditioner.degree must be at least 1, got 0"});
  // fp32 search blocks take no preconditioner.
  test::expect_mentions(test::input_error_message([&] {
                          parse_eigs_config(std::string(kMatrix) +
                                                "eigensolver: {search_precision: fp32, preconditioner: "
                                                "{type: chebyshev}}\n",
                                            kSource);
                        }),
                        {"eigensolver.search_precision fp32 needs preconditioner: none"});
}

}  // namespace
}  // namespace blockeigs::cfg
