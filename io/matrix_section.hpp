// The matrix section of a config (`matrix:`, `matrix_b:`) read from YAML
// through config_yaml.hpp's checked values; the rest of a config is read by
// config/ into the solvers' own types. Internal to io/ and config/ (it names
// yaml-cpp's types).
#pragma once

#include <string>

#include "io/config_yaml.hpp"
#include "io/matrix_config.hpp"

namespace blockeigs::io {

// A `matrix:` mapping: exactly one of generator, hdf5 {file, group},
// matrix_market {file}.
MatrixConfig read_matrix_section(const yaml::Value& section);

// A matrix.generator mapping, validated.
GeneratorSpec read_generator(const yaml::Value& section);

}  // namespace blockeigs::io
