#include "spmm/plan.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "spmm/local_spmm.hpp"

#include "spmm/cuda/device_limits.hpp"
#include "spmm/heuristic.hpp"

namespace blockeigs::spmm {

bool algorithm_available(Algorithm algorithm, Space space) {
  switch (algorithm) {
    case Algorithm::reference: return space == Space::host;
    case Algorithm::cusparse: return space == Space::device && dense::cuda_compiled();
    case Algorithm::row_split:
    case Algorithm::merge_based: return space == Space::device && dense::cuda_compiled();
    case Algorithm::automatic: return space == Space::host || dense::cuda_compiled();
  }
  return false;
}

template <class T>
struct Plan<T>::Impl {
  const dense::Context* context = nullptr;
  CsrView<T> A;
  Algorithm requested = Algorithm::automatic;
  std::array<Algorithm, max_tabulated_width + 1> choice{};
  // Column slab per width (column_slab), decided with the choice; 0: none.
  std::array<std::int64_t, max_tabulated_width + 1> slab{};
  // For `automatic` on the device: what column_slab needs for wider blocks
  // (0: never slab).
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  std::unique_ptr<LocalSpmm<T>> reference;
  std::unique_ptr<LocalSpmm<T>> cusparse;
  std::unique_ptr<LocalSpmm<T>> row_split;
  std::unique_ptr<LocalSpmm<T>> merge_based;
  // A's row shape (spmm/heuristic.hpp), read once (a device reduction)
  // for the choice of `automatic` and for both of our kernels.
  std::optional<cuda::RowShape> shape;
  const cuda::RowShape* row_shape() {
    if (!shape) shape = cuda::row_shape(A.row_offsets, A.rows, A.cols, A.nnz, A.col_indices);
    return &*shape;
  }

  std::unique_ptr<LocalSpmm<T>>& slot(Algorithm algorithm) {
    switch (algorithm) {
      case Algorithm::reference: return reference;
      case Algorithm::cusparse: return cusparse;
      case Algorithm::row_split: return row_split;
      case Algorithm::merge_based: return merge_based;
      case Algorithm::automatic: break;
    }
    throw Error("spmm::Plan: no kernel for algorithm " + std::string(to_string(algorithm)));
  }
  LocalSpmm<T>& kernel(Algorithm algorithm) {
    auto& k = slot(algorithm);
    if (!k) throw Error("spmm::Plan: kernel " + std::string(to_string(algorithm)) + " was not built");
    return *k;
  }
  // Builds the kernel of every algorithm in the choice table, once.
  void build_kernels() {
    for (Algorithm algorithm : choice) {
      auto& k = slot(algorithm);
      if (k) continue;
      switch (algorithm) {
        case Algorithm::reference: k = make_reference_spmm(A); break;
        case Algorithm::cusparse: k = make_cusparse_spmm(*context, A); break;
        case Algorithm::row_split: k = make_row_split_spmm(*context, A, row_shape()); break;
        case Algorithm::merge_based: k = make_merge_based_spmm(*context, A, row_shape()); break;
        default: throw Error("spmm::Plan: cannot build " + std::string(to_string(algorithm)));
      }
    }
  }
};

template <class T>
Plan<T>::Plan(const dense::Context& context, const CsrView<T>& A, Algorithm algorithm)
    : impl_(std::make_unique<Impl>()) {
  const Space space = context.space();
  if (A.space != space)
    throw Error("spmm::Plan: the matrix is in " + std::string(to_string(A.space)) +
                " memory but the context runs on the " + std::string(to_string(space)));
  if (!algorithm_available(algorithm, space))
    throw InputError("SpMM algorithm `" + std::string(to_string(algorithm)) + "` cannot run on the " +
                     std::string(to_string(space)) +
                     (space == Space::host ? " (the CPU backend has `reference` and `automatic`)" : " in this build"));
  impl_->context = &context;
  impl_->A = A;
  impl_->requested = algorithm;

  // Resolve `automatic` once for every block width: on the host the reference;
  // on the device our row-split or merge-based kernel (spmm/cuda/heuristic).
  impl_->choice.fill(algorithm);
  if (algorithm == Algorithm::automatic) {
    if (space == Space::host) {
      impl_->choice.fill(Algorithm::reference);
    } else {
      constexpr Precision precision = precision_of<T>();
      constexpr int reals = reals_per_value<T>;  // a complex column is two values of a B row
      const cuda::RowShape& shape = *impl_->row_shape();
      const cuda::DeviceLimits limits = cuda::device_limits(context.device());
      const int multiprocessors = limits.multiprocessors;
      impl_->multiprocessors = multiprocessors;
      impl_->l2_bytes = limits.l2_bytes;
      for (std::int64_t n = 0; n <= max_tabulated_width; ++n) {
        const std::int64_t width = std::max<std::int64_t>(n, 1);
        impl_->choice[static_cast<std::size_t>(n)] =
            cuda::choose_algorithm(shape, width, precision, multiprocessors, reals);
        if (const std::int64_t s = cuda::column_slab(shape, width, precision, multiprocessors, impl_->l2_bytes, reals);
            s < width)
          impl_->slab[static_cast<std::size_t>(n)] = s;
      }
    }
  }
  impl_->build_kernels();
}

template <class T>
Plan<T>::Plan(Plan&&) noexcept = default;
template <class T>
Plan<T>& Plan<T>::operator=(Plan&&) noexcept = default;
template <class T>
Plan<T>::~Plan() = default;

template <class T>
Algorithm Plan<T>::algorithm_for(std::int64_t n) const {
  return impl_->choice[static_cast<std::size_t>(std::min(std::max<std::int64_t>(n, 0), max_tabulated_width))];
}

template <class T>
std::int64_t Plan<T>::column_slab(std::int64_t n) const {
  if (n <= max_tabulated_width) {
    const std::int64_t s = impl_->slab[static_cast<std::size_t>(std::max<std::int64_t>(n, 0))];
    return s > 0 ? s : n;
  }
  if (impl_->l2_bytes > 0)  // `automatic` on the device; past the table, by the same rule
    return cuda::column_slab(*impl_->shape, n, precision_of<T>(), impl_->multiprocessors, impl_->l2_bytes,
                             reals_per_value<T>);
  return n;
}

template <class T>
Algorithm Plan<T>::requested_algorithm() const {
  return impl_->requested;
}

template <class T>
const CsrView<T>& Plan<T>::matrix() const {
  return impl_->A;
}

template <class T>
void Plan<T>::multiply(T alpha, dense::ConstDenseView<T> B, T beta, dense::DenseView<T> C) {
  const CsrView<T>& A = impl_->A;
  const Space space = impl_->context->space();
  auto shape = [](std::int64_t r, std::int64_t c) { return std::to_string(r) + " x " + std::to_string(c); };
  if (B.space != space || C.space != space)
    throw Error("spmm::multiply: B and C must be in " + std::string(to_string(space)) + " memory");
  if (B.rows != A.cols || C.rows != A.rows || B.cols != C.cols)
    throw Error("spmm::multiply: shapes do not agree: A is " + shape(A.rows, A.cols) + ", B is " +
                shape(B.rows, B.cols) + ", C is " + shape(C.rows, C.cols));
  if (B.ld < B.cols || C.ld < C.cols)
    throw Error("spmm::multiply: leading dimension smaller than the number of columns");
  if (C.rows == 0 || C.cols == 0) return;
  const std::int64_t slab = column_slab(B.cols);
  if (slab < B.cols) {
    // Slabs of equal width, rounded up to 4 columns so that each starts on
    // the same 16-byte alignment (fp32) or 32-byte sector (fp64) as B and C.
    const std::int64_t slabs = (B.cols + slab - 1) / slab;
    const std::int64_t width = ((B.cols + slabs - 1) / slabs + 3) / 4 * 4;
    for (std::int64_t first = 0; first < B.cols; first += width) {
      const std::int64_t w = std::min(width, B.cols - first);
      impl_->kernel(algorithm_for(w))
          .multiply(alpha, dense::ConstDenseView<T>(space, B.rows, w, B.ld, B.data + first), beta,
                    dense::DenseView<T>{space, C.rows, w, C.ld, C.data + first});
    }
    return;
  }
  impl_->kernel(algorithm_for(B.cols)).multiply(alpha, B, beta, C);
}

#define BLOCKEIGS_INSTANTIATE(T) template class Plan<T>;
BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::spmm
