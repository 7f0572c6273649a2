// The halo exchange's device kernels (halo/cuda/halo_pack.hpp) where the
// build has no CUDA: a host context never reaches them; an error if called.
#include <cstdint>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/operator/halo/cuda/halo_pack.hpp"

namespace blockeigs::solver::cuda {

template <class T>
void pack_rows(const T*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, T*, std::int64_t,
               void*) {
  throw NotCompiled("pack_rows", "CUDA");
}

template <class T>
void scatter_add_rows(const T*, std::int64_t, const std::int32_t*, std::int64_t, T*, std::int64_t, std::int64_t,
                      void*) {
  throw NotCompiled("scatter_add_rows", "CUDA");
}

template void pack_rows(const float*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t,
                        float*, std::int64_t, void*);
template void pack_rows(const double*, std::int64_t, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t,
                        double*, std::int64_t, void*);
template void scatter_add_rows(const float*, std::int64_t, const std::int32_t*, std::int64_t, float*, std::int64_t,
                               std::int64_t, void*);
template void scatter_add_rows(const double*, std::int64_t, const std::int32_t*, std::int64_t, double*, std::int64_t,
                               std::int64_t, void*);

}  // namespace blockeigs::solver::cuda
