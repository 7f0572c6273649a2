// cuBLAS, cuSPARSE and cuSOLVER opened at their first use rather than at the
// process's start (CUDA builds only). Opening cuBLAS applies its relocations,
// time and resident memory that `--version`, a run on the CPU backend and the
// start of a GPU run need not pay
// (docs/benchmarks/time-to-solution.md#cuda-libraries). The library calls
// the code makes are defined in cuda_libraries.cpp (hidden from other
// objects) and forward to the libraries' own functions.
#pragma once

#include <string>
#include <vector>

namespace blockeigs::cuda_libraries {

// Begins opening the libraries on a thread of their own and returns at once
// (the device context's start calls it, so that they open beside it).
void start_loading();

// Waits until they are open; LibraryError naming every file tried where one
// of them could not be opened (the same error at each later call).
void require();

// Whether they are open in this process.
bool opened();

// The files tried for a library, in order: the CUDA toolkit's library folder
// at build time, then the bare name (the dynamic loader's search path:
// LD_LIBRARY_PATH, the executable's run path, the system's cache).
std::vector<std::string> candidates(const std::string& soname);

// dlopen of the first of `files` that opens; LibraryError naming `library` and
// each file's dlerror where none does.
void* open_first(const std::string& library, const std::vector<std::string>& files);

}  // namespace blockeigs::cuda_libraries
