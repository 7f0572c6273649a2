// Vocabulary shared by the config (io/), the kernels (spmm/) and the solvers.
// Kept here so that io/ can name an algorithm without including spmm/.
#pragma once

#include <optional>
#include <string_view>

namespace blockeigs {

// Where memory lives. Every API that takes data says which space.
enum class Space { host, device };

// Local SpMM algorithms. Dispatch is always on this enum, never on strings.
enum class Algorithm { reference, row_split, merge_based, cusparse, automatic };

// Which machine runs the solver; automatic picks CUDA when a GPU is present.
enum class Backend { cpu, cuda, automatic };

enum class Precision { fp32, fp64 };

// The precision of an element type: float is fp32, double fp64.
template <class T>
constexpr Precision precision_of() {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "fp32 or fp64 elements only");
  return sizeof(T) == 4 ? Precision::fp32 : Precision::fp64;
}

std::string_view to_string(Space space);
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(Backend backend);
std::string_view to_string(Precision precision);

std::optional<Algorithm> parse_algorithm(std::string_view name);
std::optional<Backend> parse_backend(std::string_view name);
std::optional<Precision> parse_precision(std::string_view name);

}  // namespace blockeigs
