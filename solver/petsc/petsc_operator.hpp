// Our distributed SpMM operator as a PETSc Mat, so that PETSc (KSP, PC) and
// SLEPc (EPS) users can run their solver code on it unchanged:
//
//   Mat A = solver::create_petsc_operator(comm, context, rows, partition);
//   KSPSetOperators(ksp, A, A);          // or EPSSetOperators(eps, A, nullptr)
//   (A x = lambda B x: create_petsc_pencil gives A and B, for EPSSetOperators(eps, A, B))
//   ...
//   MatDestroy(&A);
//
// The Mat is a MATSHELL whose context owns a solver::DistributedOperator:
//  - MatMult: one apply with a block of width 1 (MatMultTranspose is the same:
//    the operator is symmetric, which is what this library is for; with a
//    complex PETSc it is Hermitian: MatMultHermitianTranspose is MatMult, and
//    MatMultTranspose conjugates x and the product);
//  - MatGetDiagonal: the operator's diagonal (PCJACOBI works);
//  - MatMatMult(A, B, ...) / MatProduct AB with a MATDENSE (or MATDENSECUDA) B: the whole block
//    goes through ONE SpMM apply instead of one MatMult per column (SLEPc's
//    BV uses it for block methods such as LOBPCG).
// Memory: with a device context, where PETSc has CUDA (petsc_device_arrays()),
// the Mat's vectors are VECCUDA (MatShellSetVecType) and its products take
// PETSc's device arrays in place (VECCUDA Vecs; MATDENSECUDA blocks, as one
// SpMM of the whole block), ordered against PETSc's stream without host
// waits; host Vecs and MATDENSE blocks are still taken, copied to the device
// and back (counted: petsc_operator_stats). Without CUDA in PETSc the Mat's
// vectors are host Vecs, staged likewise. With the CPU backend everything is
// on the host, in place.
// C++ exceptions never cross PETSc: a callback that fails returns
// PETSC_ERR_LIB with the exception's message.
//
// Lifetime: the dense::Context must outlive the Mat; the rows and partition
// are copied. Creation is collective over the communicator and throws
// blockeigs exceptions (agreed on by every rank) on bad input.
#pragma once

#include <petscmat.h>

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/enums.hpp"
#include "core/csr_rows.hpp"
#include "solver/operator/load_matrix.hpp"
#include "solver/operator/row_partition.hpp"
#include "dense/context.hpp"

#if !defined(PETSC_USE_REAL_DOUBLE)
#error "blockeigs_petsc needs a PETSc built with double precision (PetscScalar double or complex double)"
#endif
static_assert(std::is_same_v<PetscScalar, double> || std::is_same_v<PetscScalar, std::complex<double>>,
              "blockeigs_petsc needs PetscScalar == double or std::complex<double>: our kernels read PETSc's arrays "
              "in place");

namespace blockeigs::solver {

// The rows a Mat is made of hold PETSc's scalar: real values for a real PETSc (a symmetric operator), complex
// ones for a complex PETSc (a Hermitian operator, A = A^H; MatMultTranspose is then conj(A) x).
using PetscRows = CsrRowsOf<PetscScalar>;

// A Mat over this rank's `rows` (global column indices, as the HDF5 reader
// and io::generate_rows produce them) distributed by `partition`, which must
// have one range per rank of `comm`. The Mat's local sizes are the
// partition's: rank r owns rows and columns [partition.begin(r), end(r)).
// The Mat numbers rows as `rows` do: after a graph partition or a band order
// of each rank's rows that is the operator's numbering, not the input's (the
// overload on DistributedRows below gives the input's).
Mat create_petsc_operator(MPI_Comm comm, const dense::Context& context, const PetscRows& rows,
                          const RowPartition& partition, Algorithm algorithm = Algorithm::automatic);

// The same from what load_distributed_rows gives, in the input's numbering
// whatever partition and row order the operator took: rank r owns rows and
// columns [rows.numbering.original().begin(r), end(r)) of the file or
// generator, as load_distributed_rows read them. Where the rows were moved
// or reordered, each MatMult, MatMatMult and MatGetDiagonal moves the Vec's
// rows to the operator's ranks and back (two row exchanges a product). Complex
// rows need a complex PETSc and real ones a real PETSc (an InputError otherwise).
Mat create_petsc_operator(MPI_Comm comm, const dense::Context& context, const DistributedRows& rows,
                          Algorithm algorithm = Algorithm::automatic);

// A Mat over the same matrix as an assembled PETSc AIJ matrix (MATMPIAIJ,
// MATSEQAIJ, or any type with MatGetRow), with its row distribution. `aij`
// must be square and symmetric (Hermitian in a complex PETSc), with equal row and column layouts; it is only
// read (the caller still owns and destroys it).
Mat create_petsc_operator_from_aij(Mat aij, const dense::Context& context, Algorithm algorithm = Algorithm::automatic);

// A x = lambda B x for SLEPc (EPSSetOperators(eps, A, B), EPS_GHEP): A and B
// as two such Mats on the same rows. `b` must have a's partition (what
// load_matrix_b gives: B read on A's rows, moved and renumbered as A's), else
// an InputError on every rank. The caller destroys both Mats.
struct PetscPencil {
  Mat A = nullptr;
  Mat B = nullptr;
};
PetscPencil create_petsc_pencil(MPI_Comm comm, const dense::Context& context, const PetscRows& a, const PetscRows& b,
                                const RowPartition& partition, Algorithm algorithm = Algorithm::automatic);
// The same in the input's numbering (as create_petsc_operator on
// DistributedRows), from A's rows and B's as load_matrix_b gives them.
PetscPencil create_petsc_pencil(MPI_Comm comm, const dense::Context& context, const DistributedRows& a,
                                const DistributedRows& b, Algorithm algorithm = Algorithm::automatic);

// How many MatProduct (MatMatMult) applies the Mat has run: one per dense
// block, however wide. Throws when `A` was not made by this adapter.
std::int64_t petsc_operator_block_applies(Mat A);

// What the Mat's products and its PCSHELLs (petsc_shell_pc.hpp) were handed,
// counted on this rank since the Mat was made.
struct PetscOperatorStats {
  std::int64_t products = 0;                // MatMult and MatMultTranspose
  std::int64_t block_applies = 0;           // MatProduct AB, one per dense block
  std::int64_t preconditioner_applies = 0;  // PCApply and PCMatApply of its PCSHELLs
  std::int64_t device_arrays = 0;           // arrays (Vec or dense block) PETSc handed over in device memory
  std::int64_t host_arrays = 0;             // ... in host memory
  std::int64_t copies = 0;                  // arrays the adapter copied between host and device
};
// Throws when `A` was not made by this adapter.
PetscOperatorStats petsc_operator_stats(Mat A);

// Whether this build hands PETSc's device arrays to a device operator in
// place: PETSc has CUDA and our CUDA backend is built.
bool petsc_device_arrays();

// Before PetscInitialize or SlepcInitialize (MPI initialised): where PETSc
// has CUDA and MPI is not CUDA-aware (Open MPI without CUDA support, as on
// the GPU machine), sets PETSc's option -use_gpu_aware_mpi 0, without which
// PETSc aborts at more than one rank; one given on the command line or in
// PETSC_OPTIONS still wins. Returns whether it set the option.
bool set_petsc_gpu_aware_default();

// PETSc's counts of copies of vector data between host and device since it
// started (-log_view's CpuToGpu and GpuToCpu); zeros without device arrays.
struct PetscCopyCounts {
  double to_device = 0;
  double to_host = 0;
};
PetscCopyCounts petsc_copy_counts();

namespace test_hooks {
// Tests only: the next callback on `A` throws blockeigs::Error(message)
// before touching any data, on this rank (call it on every rank).
void fail_next_petsc_callback(Mat A, const std::string& message);
}  // namespace test_hooks

}  // namespace blockeigs::solver
