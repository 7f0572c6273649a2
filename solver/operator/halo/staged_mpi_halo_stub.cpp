// StagedMpiHalo's device half where the build has no CUDA: a host context
// never reaches it; an error if called.
#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/halo/staged_mpi_halo.hpp"

namespace blockeigs::solver {

template <class T>
void StagedMpiHalo<T>::create_copy_streams() {
  throw NotCompiled("StagedMpiHalo", "CUDA");
}

// Nothing to release: create_copy_streams throws, so nothing was made.
template <class T>
void StagedMpiHalo<T>::release_copy_streams() noexcept {}

template <class T>
void StagedMpiHalo<T>::wait_for_copies_in() {
  throw NotCompiled("StagedMpiHalo::wait_for_copies_in", "CUDA");
}

template <class T>
void StagedMpiHalo<T>::start_on_device() {
  throw NotCompiled("StagedMpiHalo::start_on_device", "CUDA");
}

template <class T>
void StagedMpiHalo<T>::pipeline_on_device() {
  throw NotCompiled("StagedMpiHalo::pipeline_on_device", "CUDA");
}

#define BLOCKEIGS_STAGED_DEVICE_HALF(T)                            \
  template void StagedMpiHalo<T>::create_copy_streams();           \
  template void StagedMpiHalo<T>::release_copy_streams() noexcept; \
  template void StagedMpiHalo<T>::wait_for_copies_in();            \
  template void StagedMpiHalo<T>::start_on_device();               \
  template void StagedMpiHalo<T>::pipeline_on_device();
BLOCKEIGS_STAGED_DEVICE_HALF(float)
BLOCKEIGS_STAGED_DEVICE_HALF(double)
#undef BLOCKEIGS_STAGED_DEVICE_HALF

}  // namespace blockeigs::solver
