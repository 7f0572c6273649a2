// Where a matrix comes from: a config's `matrix:` section (and `matrix_b:`),
// a program's own choice. The reader of that section is io/matrix_section.hpp.
#pragma once

#include <string>

#include "io/generators/generators.hpp"

namespace blockeigs::io {

enum class MatrixSource { generator, hdf5, matrix_market };

// matrix.field: what the values are. auto: as the source holds them (a file's
// field, a generator's kind); real refuses complex values (their imaginary
// parts would be lost); complex takes real values as complex ones.
enum class MatrixField { automatic, real, complex };

struct MatrixConfig {
  MatrixSource source = MatrixSource::generator;
  std::string file;          // hdf5 / matrix_market; a config's relative paths are taken relative to the config file
  std::string group = "/A";  // hdf5
  GeneratorSpec generator;   // generator
  MatrixField field = MatrixField::automatic;
};

// A matrix.generator mapping given as YAML text (mtx2h5 --generate), checked
// as a config's, named `source` in messages (io/matrix_section.cpp).
GeneratorSpec parse_generator(const std::string& yaml_text, const std::string& source);

}  // namespace blockeigs::io
