// The device halves of the block operations (cuda/block_ops_cuda.hpp) in a
// build without CUDA: each throws, naming the operation, so that a device
// view reaching a block operation in a CPU-only build fails loudly instead
// of doing nothing.
#include <cstdint>
#include <memory>

#include "core/not_compiled.hpp"
#include "core/error.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"

namespace blockeigs::solver::device_ops {
namespace {

[[noreturn]] void not_compiled(const char* operation) {
  throw NotCompiled(operation, "CUDA", "a block in device memory");
}

}  // namespace

template <class T>
std::unique_ptr<LocalGramTransfer> gram_local_start(const dense::Context&, dense::ConstDenseView<T>,
                                                    dense::ConstDenseView<T>) {
  not_compiled("start_gram");
}
template <class T>
std::unique_ptr<LocalGramTransfer> gram_pair_local_start(const dense::Context&, dense::ConstDenseView<T>,
                                                         dense::ConstDenseView<T>, dense::ConstDenseView<T>,
                                                         dense::ConstDenseView<T>) {
  not_compiled("start_gram_pair");
}
template <class T>
void gram_local(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>, small_t<T>*) {
  not_compiled("gram");
}
template <class T>
void gram_self_local(const dense::Context&, dense::ConstDenseView<T>, small_t<T>*) {
  not_compiled("gram");
}
template <class T>
void column_sumsq_local(const dense::Context&, dense::ConstDenseView<T>, double*) {
  not_compiled("column_norms");
}
template <class T>
void eigen_residuals_local(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>, const double*,
                           dense::DenseView<T>, const std::int64_t*, double*) {
  not_compiled("eigen_residuals");
}
template <class Ts>
bool ritz_update_local(const dense::Context&, dense::ConstDenseView<double>, dense::ConstDenseView<Ts>,
                       dense::ConstDenseView<double>, dense::ConstDenseView<double>, const double*, const double*,
                       dense::DenseView<double>, dense::DenseView<double>, dense::DenseView<Ts>, const std::int64_t*,
                       std::int64_t, const double*, const std::int64_t*, std::unique_ptr<LocalGramTransfer>&) {
  not_compiled("ritz_update");
}
bool ritz_update_implied_fits(std::int64_t, std::int64_t, std::int64_t, std::int64_t) {
  not_compiled("ritz_update_prefers_implied_ax");
}
bool gram_pair_single_local_start(const dense::Context&, dense::ConstDenseView<double>, dense::ConstDenseView<float>,
                                  dense::ConstDenseView<float>, dense::ConstDenseView<double>,
                                  std::unique_ptr<LocalGramTransfer>&) {
  not_compiled("start_gram_pair");
}
bool search_single_fits(std::int64_t, std::int64_t, std::int64_t, std::int64_t) {
  not_compiled("search_single_kernels_fit");
}
double memory_bytes_per_sm_cycle(int) { not_compiled("memory_bytes_per_sm_cycle"); }
template <class T>
void block_update(const dense::Context&, T, dense::ConstDenseView<T>, const small_t<T>*, T, dense::DenseView<T>) {
  not_compiled("block_update");
}
template <class T>
bool block_combine(const dense::Context&, T, dense::ConstDenseView<T>, const small_t<T>*, T, dense::ConstDenseView<T>,
                   dense::DenseView<T>) {
  not_compiled("block_combine");
}
template <class T>
bool transform_in_place(const dense::Context&, dense::DenseView<T>, const small_t<T>*, std::int64_t) {
  not_compiled("transform_in_place");
}
template <class T>
bool block_combine_pair(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>, const small_t<T>*,
                        dense::DenseView<T>) {
  not_compiled("block_combine_pair");
}
template <class T>
void axpby(const dense::Context&, T, dense::ConstDenseView<T>, T, dense::DenseView<T>) {
  not_compiled("axpby");
}
template <class T>
void column_axpby(const dense::Context&, const double*, dense::ConstDenseView<T>, T, dense::DenseView<T>) {
  not_compiled("column_axpby");
}
template <class T>
void scale_columns(const dense::Context&, const double*, dense::DenseView<T>) {
  not_compiled("scale_columns");
}
template <class T>
void copy_block(const dense::Context&, dense::ConstDenseView<T>, dense::DenseView<T>) {
  not_compiled("copy_block");
}
template <class From, class To>
void convert_block(const dense::Context&, dense::ConstDenseView<From>, dense::DenseView<To>) {
  not_compiled("convert_block");
}
template <class T>
void select_columns(const dense::Context&, dense::ConstDenseView<T>, const std::int64_t*, dense::DenseView<T>) {
  not_compiled("select_columns");
}
template <class T>
void keep_columns(const dense::Context&, dense::DenseView<T>, const std::int64_t*, std::int64_t) {
  not_compiled("keep_columns");
}
template <class T>
void fill_random(const dense::Context&, dense::DenseView<T>, std::uint64_t, std::int64_t, std::int64_t) {
  not_compiled("fill_random");
}
template <class T>
void fill_random_rows(const dense::Context&, dense::DenseView<T>, std::uint64_t, const std::int64_t*, std::int64_t) {
  not_compiled("fill_random_rows");
}
template <class T>
void apply_diagonal(const dense::Context&, const T*, dense::ConstDenseView<T>, dense::DenseView<T>) {
  not_compiled("apply_diagonal");
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                      \
  template std::unique_ptr<LocalGramTransfer> gram_local_start(const dense::Context&, dense::ConstDenseView<T>,       \
                                                               dense::ConstDenseView<T>);                             \
  template std::unique_ptr<LocalGramTransfer> gram_pair_local_start(                                                  \
      const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>, dense::ConstDenseView<T>,            \
      dense::ConstDenseView<T>);                                                                                      \
  template void gram_local(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>, small_t<T>*);   \
  template void gram_self_local(const dense::Context&, dense::ConstDenseView<T>, small_t<T>*);                        \
  template void column_sumsq_local(const dense::Context&, dense::ConstDenseView<T>, double*);                         \
  template void eigen_residuals_local(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>,      \
                                      const double*, dense::DenseView<T>, const std::int64_t*, double*);              \
  template void block_update(const dense::Context&, T, dense::ConstDenseView<T>, const small_t<T>*, T,                \
                             dense::DenseView<T>);                                                                    \
  template bool block_combine(const dense::Context&, T, dense::ConstDenseView<T>, const small_t<T>*, T,               \
                              dense::ConstDenseView<T>, dense::DenseView<T>);                                         \
  template bool transform_in_place(const dense::Context&, dense::DenseView<T>, const small_t<T>*, std::int64_t);      \
  template bool block_combine_pair(const dense::Context&, dense::ConstDenseView<T>, dense::ConstDenseView<T>,         \
                                   const small_t<T>*, dense::DenseView<T>);                                           \
  template void axpby(const dense::Context&, T, dense::ConstDenseView<T>, T, dense::DenseView<T>);                    \
  template void column_axpby(const dense::Context&, const double*, dense::ConstDenseView<T>, T, dense::DenseView<T>); \
  template void scale_columns(const dense::Context&, const double*, dense::DenseView<T>);                             \
  template void copy_block(const dense::Context&, dense::ConstDenseView<T>, dense::DenseView<T>);                     \
  template void select_columns(const dense::Context&, dense::ConstDenseView<T>, const std::int64_t*,                  \
                               dense::DenseView<T>);                                                                  \
  template void keep_columns(const dense::Context&, dense::DenseView<T>, const std::int64_t*, std::int64_t);          \
  template void fill_random(const dense::Context&, dense::DenseView<T>, std::uint64_t, std::int64_t, std::int64_t);   \
  template void fill_random_rows(const dense::Context&, dense::DenseView<T>, std::uint64_t, const std::int64_t*,      \
                                 std::int64_t);                                                                       \
  template void apply_diagonal(const dense::Context&, const T*, dense::ConstDenseView<T>, dense::DenseView<T>);

BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

#define BLOCKEIGS_RITZ_UPDATE(Ts)                                                                                  \
  template bool ritz_update_local(const dense::Context&, dense::ConstDenseView<double>, dense::ConstDenseView<Ts>, \
                                  dense::ConstDenseView<double>, dense::ConstDenseView<double>, const double*,     \
                                  const double*, dense::DenseView<double>, dense::DenseView<double>,               \
                                  dense::DenseView<Ts>, const std::int64_t*, std::int64_t, const double*,          \
                                  const std::int64_t*, std::unique_ptr<LocalGramTransfer>&);
BLOCKEIGS_RITZ_UPDATE(float)
BLOCKEIGS_RITZ_UPDATE(double)
#undef BLOCKEIGS_RITZ_UPDATE

template void convert_block(const dense::Context&, dense::ConstDenseView<float>, dense::DenseView<double>);
template void convert_block(const dense::Context&, dense::ConstDenseView<double>, dense::DenseView<float>);
template void convert_block(const dense::Context&, dense::ConstDenseView<float>, dense::DenseView<float>);
template void convert_block(const dense::Context&, dense::ConstDenseView<double>, dense::DenseView<double>);

}  // namespace blockeigs::solver::device_ops
