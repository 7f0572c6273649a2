// PeerHalo where the build has no CUDA: no context is a GPU, so create()
// returns null, as it does for any host context; no exchange exists for the
// rest to be reached, and each throws "not compiled with CUDA" if it is.
#include <string>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/halo/peer_halo.hpp"

namespace blockeigs::solver {
namespace {
[[noreturn]] void not_compiled(const std::string& what) { throw NotCompiled(what, "CUDA"); }
}  // namespace

template <class T>
std::unique_ptr<PeerHalo<T>> PeerHalo<T>::create(MPI_Comm, const dense::Context&, const HaloPlan&, bool) {
  return nullptr;
}

template <class T>
PeerHalo<T>::PeerHalo(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan)
    : HaloExchange<T>(comm, context, plan) {
  not_compiled("PeerHalo");
}

// Nothing to release: the constructor throws, so nothing was mapped or made.
template <class T>
PeerHalo<T>::~PeerHalo() = default;

template <class T>
bool PeerHalo<T>::on_reserve(std::int64_t, const T*) {
  not_compiled("PeerHalo::reserve");
}

template <class T>
void PeerHalo<T>::start(const typename HaloExchange<T>::Source&) {
  not_compiled("PeerHalo::start");
}

template <class T>
dense::ConstDenseView<T> PeerHalo<T>::end() {
  not_compiled("PeerHalo::end");
}

template <class T>
void PeerHalo<T>::release() {
  not_compiled("PeerHalo::release");
}

template class PeerHalo<float>;
template class PeerHalo<double>;

}  // namespace blockeigs::solver
