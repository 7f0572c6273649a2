#include "core/enums.hpp"

namespace blockeigs {

std::string_view to_string(Space space) { return space == Space::host ? "host" : "device"; }

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::reference: return "reference";
    case Algorithm::row_split: return "row_split";
    case Algorithm::merge_based: return "merge_based";
    case Algorithm::cusparse: return "cusparse";
    case Algorithm::automatic: return "automatic";
  }
  return "?";
}

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
    case Backend::automatic: return "auto";
  }
  return "?";
}

std::string_view to_string(Precision precision) { return precision == Precision::fp32 ? "fp32" : "fp64"; }

std::string_view to_string(SpectrumEnd end) { return end == SpectrumEnd::smallest ? "smallest" : "largest"; }

std::string_view to_string(StoppingTest test) { return test == StoppingTest::backward ? "backward" : "relative"; }

std::string_view to_string(SearchPrecision precision) {
  switch (precision) {
    case SearchPrecision::automatic: return "auto";
    case SearchPrecision::fp64: return "fp64";
    case SearchPrecision::fp32: return "fp32";
  }
  return "?";
}

std::string_view to_string(ChebyshevPrecision precision) {
  switch (precision) {
    case ChebyshevPrecision::automatic: return "auto";
    case ChebyshevPrecision::fp64: return "fp64";
    case ChebyshevPrecision::fp32: return "fp32";
  }
  return "?";
}

std::string_view to_string(PreconditionerKind kind) {
  switch (kind) {
    case PreconditionerKind::none: return "none";
    case PreconditionerKind::jacobi: return "jacobi";
    case PreconditionerKind::chebyshev: return "chebyshev";
    case PreconditionerKind::petsc: return "petsc";
    case PreconditionerKind::automatic: return "auto";
  }
  return "";
}

std::string_view to_string(PartitionMethod method) {
  switch (method) {
    case PartitionMethod::automatic: return "auto";
    case PartitionMethod::contiguous: return "contiguous";
    case PartitionMethod::graph: return "graph";
  }
  return "?";
}

std::string_view to_string(WindowCount count) {
  switch (count) {
    case WindowCount::automatic: return "auto";
    case WindowCount::inertia: return "inertia";
    case WindowCount::density: return "density";
  }
  return "?";
}

std::string_view to_string(LocalOrder order) {
  switch (order) {
    case LocalOrder::automatic: return "auto";
    case LocalOrder::none: return "none";
    case LocalOrder::band: return "band";
  }
  return "?";
}

std::string_view to_string(HaloTransport transport) {
  switch (transport) {
    case HaloTransport::automatic: return "auto";
    case HaloTransport::mpi: return "mpi";
    case HaloTransport::staged_mpi: return "staged";
    case HaloTransport::peer: return "ipc";
    case HaloTransport::nccl: return "nccl";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  for (Algorithm a :
       {Algorithm::reference, Algorithm::row_split, Algorithm::merge_based, Algorithm::cusparse, Algorithm::automatic})
    if (to_string(a) == name) return a;
  if (name == "auto") return Algorithm::automatic;
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (Backend b : {Backend::cpu, Backend::cuda, Backend::automatic})
    if (to_string(b) == name) return b;
  if (name == "automatic") return Backend::automatic;
  return std::nullopt;
}

std::optional<Precision> parse_precision(std::string_view name) {
  if (name == "fp32" || name == "float" || name == "single") return Precision::fp32;
  if (name == "fp64" || name == "double") return Precision::fp64;
  return std::nullopt;
}

}  // namespace blockeigs
