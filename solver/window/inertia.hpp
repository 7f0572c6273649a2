// Exact eigenvalue counts by Sylvester's law of inertia: an LDL^T
// factorization of A - sigma I has as many negative pivots as A has
// eigenvalues below sigma. Built by solver/petsc (PETSc with MUMPS) where the
// build has it, by a stub that says it has not otherwise; the window's driver
// takes it through WindowOptions::inertia.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/enums.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/row_partition.hpp"

namespace blockeigs::solver {

struct Inertia {
  std::int64_t negative = 0;  // eigenvalues below sigma
  std::int64_t zero = 0;      // null pivots: eigenvalues at sigma to the factorization's precision
  std::int64_t positive = 0;
  double shift =
      0;  // where it was counted: sigma, or within 1.6e-9 ||A|| of it where sigma's factorization was unstable
};

class InertiaCounter {
 public:
  virtual ~InertiaCounter() = default;
  // The inertia of A - sigma I. Collective over the counter's communicator.
  virtual Inertia at(double sigma) = 0;
  // "MUMPS 5.5.1 (PETSc 3.18.5)": what counted.
  virtual std::string name() const = 0;
  int factorizations = 0;
  double seconds = 0;  // in factorizations, this rank's clock
};

// Whether this build counts by inertia, and if not, why ("PETSc without MUMPS").
bool inertia_available(std::string* why = nullptr);

// eigensolver.count's choice: inertia where asked for (InputError where the
// build cannot), or under auto where the build can and the matrix has at
// most kAutoInertiaRows rows; `why` says which and why (the summary's count line).
inline constexpr std::int64_t kAutoInertiaRows = 100000;
// Complex Hermitian matrices are counted by the density: no inertia counts them (the callers refuse
// count: inertia for them by their own key's name, naming kNoComplexInertia).
struct CountChoice {
  bool inertia = false;
  std::string why;
};
inline constexpr const char* kNoComplexInertia = "MUMPS's LDL^T through PETSc is symmetric, not Hermitian";
CountChoice choose_count(WindowCount requested, std::int64_t global_rows, bool complex = false);

// Takes this rank's `rows` (global column indices, distributed by `partition`)
// once; each `at` factors A - sigma I. Collective over comm. InputError where
// the build cannot (inertia_available()).
std::unique_ptr<InertiaCounter> make_inertia_counter(MPI_Comm comm, const CsrRows& rows, const RowPartition& partition);

}  // namespace blockeigs::solver
