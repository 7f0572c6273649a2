// libFuzzer target: the YAML config reader on arbitrary text, as both an
// eigensolver and a CG config. Refusals must be InputError (a message naming
// the file and key); any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "config/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)blockeigs::cfg::parse_eigs_config(text, "fuzz.yaml");
  } catch (const blockeigs::InputError&) {
  }
  try {
    (void)blockeigs::cfg::parse_cg_config(text, "fuzz.yaml");
  } catch (const blockeigs::InputError&) {
  }
  return 0;
}
