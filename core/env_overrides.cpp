#include "core/env_overrides.hpp"

#include <cstdlib>

namespace blockeigs::env {
namespace {

std::optional<std::string> value_of(const Lookup& lookup, const char* variable) {
  const char* value = lookup(variable);
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace

std::vector<KeyOverride> read_key_overrides(const Lookup& lookup) {
  std::vector<KeyOverride> keys;
  for (const KeyVariable& k : key_variables) {
    const std::string variable(k.variable);
    const std::optional<std::string> value = value_of(lookup, variable.c_str());
    if (!value || value->empty()) continue;
    const std::string key_value = k.zero_is_false ? (*value == "0" ? "false" : "true") : *value;
    keys.push_back({std::string(k.key) + "=" + key_value, variable + "=" + *value});
  }
  return keys;
}

Environment read_environment(const Lookup& lookup) {
  Environment e;
  e.keys = read_key_overrides(lookup);
  e.omp_num_threads = value_of(lookup, "OMP_NUM_THREADS");
  e.openblas_num_threads = value_of(lookup, "OPENBLAS_NUM_THREADS");
  const std::optional<std::string> sync = value_of(lookup, "BLOCKEIGS_DEBUG_SYNC");
  e.debug_sync = sync && !sync->empty() && *sync != "0";
  e.launcher_rank = value_of(lookup, "OMPI_COMM_WORLD_RANK");
  if (!e.launcher_rank) e.launcher_rank = value_of(lookup, "PMI_RANK");
  e.ompi_world_size = value_of(lookup, "OMPI_COMM_WORLD_SIZE");
  e.ompi_local_size = value_of(lookup, "OMPI_COMM_WORLD_LOCAL_SIZE");
  return e;
}

const Environment& environment() {
  static const Environment read = read_environment([](const char* variable) { return std::getenv(variable); });
  return read;
}

}  // namespace blockeigs::env
