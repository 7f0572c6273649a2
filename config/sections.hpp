// The readers of a config's sections into the solvers' and the runs' types,
// one per section, shared by the YAML files (run_config.cpp) and Python's
// keywords (keywords.cpp). Internal to config/ (they name io's YAML values).
#pragma once

#include "config/run_config.hpp"
#include "io/config_yaml.hpp"

namespace blockeigs::cfg {

// eigensolver.preconditioner and block_cg.preconditioner: a name (none,
// jacobi, chebyshev) or a mapping {type: chebyshev, degree: 8, lower: 0.05,
// jacobi: true, precision: fp32} or {type: petsc, options: "-pc_type gamg"}.
// `eigensolver`: auto is one of the names (chosen by the end the eigensolver wants).
solver::PreconditionerOptions read_preconditioner(const io::yaml::Value& v, bool eigensolver);
EigensolverSettings read_eigensolver(const io::yaml::Value& section);
BlockCgSettings read_block_cg(const io::yaml::Value& section);
solver::HaloOptions read_halo(const io::yaml::Value& section);
ExecutionConfig read_execution(const io::yaml::Value& section);
OutputConfig read_output(const io::yaml::Value& section);

}  // namespace blockeigs::cfg
