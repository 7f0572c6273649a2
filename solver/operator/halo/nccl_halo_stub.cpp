// NcclHalo where the build has no NCCL: nccl_compiled() says so, the
// transport's choice then never asks for it (an explicit `nccl` is an
// InputError there), and create() returns null with the reason, as its
// contract says; no exchange exists for the rest to be reached, and each
// throws "not compiled with NCCL" if it is.
#include <string>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/halo/nccl_halo.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const std::string& what) { throw NotCompiled(what, "NCCL", "", "BLOCKEIGS_NCCL"); }
}  // namespace

bool nccl_compiled() { return false; }

template <class T>
std::unique_ptr<NcclHalo<T>> NcclHalo<T>::create(MPI_Comm, const dense::Context&, const HaloPlan&, std::string& why) {
  why = "this build is not compiled with NCCL (CMake option BLOCKEIGS_NCCL)";
  return nullptr;
}

template <class T>
NcclHalo<T>::NcclHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan) {
  not_compiled("NcclHalo");
}

// Nothing to release: the constructor throws, so no communicator, stream or event exists.
template <class T>
NcclHalo<T>::~NcclHalo() = default;

template <class T>
void NcclHalo<T>::start(const typename HaloExchange<T>::Source&) {
  not_compiled("NcclHalo::start");
}

template <class T>
dense::ConstDenseView<T> NcclHalo<T>::end() {
  not_compiled("NcclHalo::end");
}

template <class T>
double NcclHalo<T>::time_after(void*) const {
  not_compiled("NcclHalo::time_after");
}

template class NcclHalo<float>;
template class NcclHalo<double>;

}  // namespace blockeigs::solver
