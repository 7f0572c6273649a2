// Which kernels the host BLAS (OpenBLAS) runs, for the run's header: OpenBLAS
// picks them at load time from the CPU's model, and where a virtual machine
// reports a generic model it falls back to SSE-era kernels on a CPU that has
// AVX2 (seen on the H200 machine's host: "Prescott";
// docs/benchmarks/solvers.md#host-window).
#pragma once

#include <string>

namespace blockeigs::solver {

// OpenBLAS's name for the kernels it runs ("Haswell", "SkylakeX", ...).
std::string host_blas_kernels();

// Whether the CPU this runs on has AVX2 and FMA.
bool cpu_has_avx2_fma();

// Whether `kernels` (an OpenBLAS core name, any case) is one of OpenBLAS's
// kernels for CPUs without AVX2 while the CPU has it: the library then leaves
// most of the CPU's rate unused, and OPENBLAS_CORETYPE=Haswell fixes it.
bool blas_kernels_older_than_cpu(const std::string& kernels, bool cpu_avx2_fma);

}  // namespace blockeigs::solver
