// Block reductions on the host (OpenBLAS, OpenMP), and their dispatch to
// the device halves (block_reductions_cuda.cu) by the views' memory space:
// Gram matrices (also in flight), column norms and LOBPCG's residual block,
// each rank's sum in a fixed order, then combined over ranks by a fixed tree
// (allreduce_sum), so the bits depend on the rank count only.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <utility>

#include "core/checks.hpp"
#include "solver/base/large_messages.hpp"
#include "core/error.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/cuda/block_ops_cuda.hpp"
#include "solver/blocks/block_ops_host_support.hpp"
#include "solver/base/collective.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {
namespace {

using namespace host_support;

// Rows per partial sum: partials are summed in chunk order, so the result
// does not depend on the OpenMP thread count.
constexpr std::int64_t sum_chunk_rows = 1024;

// |x|^2 of a real or complex value, in double.
template <class T>
double squared(T x) {
  if constexpr (is_complex_v<T>)
    return std::norm(std::complex<double>(x));
  else
    return double(x) * double(x);
}

template <class T>
std::vector<small_t<T>> host_gram_local(dense::ConstDenseView<T> X, dense::ConstDenseView<T> Y) {
  std::vector<T> local(static_cast<std::size_t>(X.cols * Y.cols), T(0));
  if (X.rows > 0 && X.cols > 0 && Y.cols > 0)
    gemm_row_major<T>(CblasTrans, CblasNoTrans, X.cols, Y.cols, X.rows, T(1), X.data, X.ld, Y.data, Y.ld, T(0),
                      local.data(), Y.cols);
  return {local.begin(), local.end()};
}

template <class T>
std::vector<small_t<T>> host_gram_self_local(dense::ConstDenseView<T> X) {
  const std::int64_t k = X.cols;
  std::vector<T> local(static_cast<std::size_t>(k * k), T(0));
  if (X.rows == 0 || k == 0) return {local.begin(), local.end()};
  if constexpr (is_complex_v<T>) {  // one triangle by herk, the other its conjugate
    if constexpr (std::is_same_v<T, std::complex<double>>)
      cblas_zherk(CblasRowMajor, CblasUpper, CblasConjTrans, int(k), int(X.rows), 1.0, X.data, int(X.ld), 0.0,
                  local.data(), int(k));
    else
      cblas_cherk(CblasRowMajor, CblasUpper, CblasConjTrans, int(k), int(X.rows), 1.0f, X.data, int(X.ld), 0.0f,
                  local.data(), int(k));
    for (std::int64_t i = 0; i < k; ++i) {
      local[i * k + i] = local[i * k + i].real();
      for (std::int64_t j = 0; j < i; ++j) local[i * k + j] = std::conj(local[j * k + i]);
    }
  } else {
    if constexpr (std::is_same_v<T, double>)
      cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, int(k), int(X.rows), 1.0, X.data, int(X.ld), 0.0, local.data(),
                  int(k));
    else
      cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, int(k), int(X.rows), 1.0f, X.data, int(X.ld), 0.0f,
                  local.data(), int(k));
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = 0; j < i; ++j) local[i * k + j] = local[j * k + i];
  }
  return {local.begin(), local.end()};
}

template <class T>
std::vector<double> host_column_sumsq_local(dense::ConstDenseView<T> X) {
  const std::int64_t k = X.cols;
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  std::vector<double> partial(static_cast<std::size_t>(chunks * k), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    double* out = partial.data() + c * k;
    const std::int64_t end = std::min(X.rows, (c + 1) * sum_chunk_rows);
    for (std::int64_t i = c * sum_chunk_rows; i < end; ++i)
      for (std::int64_t j = 0; j < k; ++j) out[j] += squared(X.data[i * X.ld + j]);
  }
  std::vector<double> sums(static_cast<std::size_t>(k), 0.0);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int64_t j = 0; j < k; ++j) sums[j] += partial[c * k + j];
  return sums;
}

// R = AX - X diag(lambda), with R's then X's column sums of squares,
// partial sums per chunk of rows added in chunk order.
template <class T>
std::vector<double> host_eigen_residuals_local(dense::ConstDenseView<T> X, dense::ConstDenseView<T> AX,
                                               const std::vector<double>& lambda, dense::DenseView<T> R,
                                               const std::int64_t* position) {
  const std::int64_t k = X.cols;
  const std::int64_t chunks = (X.rows + sum_chunk_rows - 1) / sum_chunk_rows;
  const std::vector<T> l(lambda.begin(), lambda.end());
  std::vector<double> partial(static_cast<std::size_t>(chunks * 2 * k), 0.0);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    double* out = partial.data() + c * 2 * k;
    const std::int64_t end = std::min(X.rows, (c + 1) * sum_chunk_rows);
    for (std::int64_t i = c * sum_chunk_rows; i < end; ++i)
      for (std::int64_t j = 0; j < k; ++j) {
        const T x = X.data[i * X.ld + j];
        const T r = AX.data[i * AX.ld + j] - l[j] * x;
        R.data[i * R.ld + position[j]] = r;
        out[j] += squared(r);
        out[k + j] += squared(x);
      }
  }
  std::vector<double> sums(static_cast<std::size_t>(2 * k), 0.0);
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int64_t j = 0; j < 2 * k; ++j) sums[j] += partial[c * 2 * k + j];
  return sums;
}

}  // namespace

std::vector<std::int64_t> checked_positions(const std::vector<std::int64_t>& position, std::int64_t k) {
  if (position.empty()) {
    std::vector<std::int64_t> identity(static_cast<std::size_t>(k));
    for (std::int64_t j = 0; j < k; ++j) identity[j] = j;
    return identity;
  }
  std::vector<bool> seen(static_cast<std::size_t>(k));
  BLOCKEIGS_ASSERT(std::int64_t(position.size()) == k);
  for (std::int64_t p : position) {
    BLOCKEIGS_ASSERT(p >= 0 && p < k && !seen[p]);
    seen[p] = true;
  }
  return position;
}

template <class S>
void broadcast(MPI_Comm comm, HostMatrixOf<S>& M) {
  std::int64_t shape[2] = {M.rows(), M.cols()};
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(shape, 2, MPI_INT64_T, 0, comm));
  if (shape[0] != M.rows() || shape[1] != M.cols()) M = HostMatrixOf<S>(shape[0], shape[1]);
  if constexpr (is_complex_v<S>)
    large_bcast(comm, reinterpret_cast<double*>(M.data()), 2 * shape[0] * shape[1], 0);
  else
    large_bcast(comm, M.data(), shape[0] * shape[1], 0);
}
template void broadcast(MPI_Comm, HostMatrix&);
template void broadcast(MPI_Comm, ComplexHostMatrix&);

// A complex sum is the sums of its parts.
void allreduce_sum(MPI_Comm comm, std::complex<double>* values, std::size_t count) {
  allreduce_sum(comm, reinterpret_cast<double*>(values), 2 * count);
}

void allreduce_sum(MPI_Comm comm, double* values, std::size_t count) {
  int rank = 0, size = 1;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  BLOCKEIGS_MPI_CHECK(MPI_Comm_size(comm, &size));
  if (size == 1 || count == 0) return;
  const auto bytes = static_cast<std::int64_t>(count * sizeof(double));
  // Binomial tree towards rank 0: at distance d, rank r (a multiple of 2d)
  // adds rank r + d's partial sum to its own, always as (left + right), so the
  // association depends only on the rank count.
  std::vector<double> incoming(count);
  for (int d = 1; d < size; d *= 2) {
    if (rank % (2 * d) == d) {
      large_send(comm, values, bytes, rank - d, reduce_tag);
      break;
    }
    if (rank % (2 * d) == 0 && rank + d < size) {
      large_recv(comm, incoming.data(), bytes, rank + d, reduce_tag);
      for (std::size_t i = 0; i < count; ++i) values[i] += incoming[i];
    }
  }
  large_bcast(comm, values, static_cast<std::int64_t>(count), 0);
}

template <class S>
struct GramInFlightOf<S>::Transfer {
  std::unique_ptr<device_ops::LocalGramTransfer> device;
};

template <class S>
GramInFlightOf<S>::GramInFlightOf(MPI_Comm comm, HostMatrixOf<S> local, std::unique_ptr<Transfer> transfer)
    : comm_(comm), local_(std::move(local)), transfer_(std::move(transfer)) {}
template <class S>
GramInFlightOf<S>::GramInFlightOf(GramInFlightOf&&) noexcept = default;
template <class S>
GramInFlightOf<S>& GramInFlightOf<S>::operator=(GramInFlightOf&&) noexcept = default;
template <class S>
GramInFlightOf<S>::~GramInFlightOf() = default;

template <class S>
HostMatrixOf<S> GramInFlightOf<S>::finish() {
  // The device delivers complex entries as pairs of doubles.
  if (transfer_ && transfer_->device) transfer_->device->wait(reinterpret_cast<double*>(local_.data()));
  transfer_.reset();
  kept_.clear();
  allreduce_sum(comm_, local_.data(), local_.values().size());
  return std::move(local_);
}
template class GramInFlightOf<double>;
template class GramInFlightOf<std::complex<double>>;

template <class T>
GramInFlightFor<T> start_gram(const dense::Context& context, MPI_Comm comm,
                              const std::type_identity_t<SplitColumns<T>>& split_x, dense::ConstDenseView<T> Y) {
  if (split_x.tail.cols > 0) return start_gram_pair<T>(context, comm, split_x, Y, column_range(Y, 0, 0));
  const dense::ConstDenseView<T> X = split_x.head;
  require_same_space("gram", X, Y);
  require_same_rows("gram", X, Y);
  HostMatrixFor<T> local(X.cols, Y.cols);
  auto transfer = std::make_unique<typename GramInFlightFor<T>::Transfer>();
  if (on_device(X.space)) {
    transfer->device = device_ops::gram_local_start(context, X, Y);
  } else {
    local.values() = host_gram_local(X, Y);
  }
  return GramInFlightFor<T>(comm, std::move(local), std::move(transfer));
}

template <class T>
GramInFlightFor<T> start_gram_pair(const dense::Context& context, MPI_Comm comm,
                                   const std::type_identity_t<SplitColumns<T>>& X, dense::ConstDenseView<T> Y1,
                                   dense::ConstDenseView<T> Y2) {
  for (const auto& Y : {Y1, Y2})
    for (const auto& part : {X.head, X.tail}) {
      require_same_space("gram", part, Y);
      require_same_rows("gram", part, Y);
    }
  const std::int64_t k1 = Y1.cols, k2 = Y2.cols;
  HostMatrixFor<T> local(X.cols(), k1 + k2);
  auto transfer = std::make_unique<typename GramInFlightFor<T>::Transfer>();
  if (on_device(X.head.space)) {
    transfer->device = device_ops::gram_pair_local_start(context, X.head, X.tail, Y1, Y2);
  } else {
    std::int64_t row = 0;
    for (const auto& part : {X.head, X.tail}) {
      const std::vector<small_t<T>> first = host_gram_local(part, Y1), second = host_gram_local(part, Y2);
      for (std::int64_t i = 0; i < part.cols; ++i) {
        for (std::int64_t j = 0; j < k1; ++j) local(row + i, j) = first[i * k1 + j];
        for (std::int64_t j = 0; j < k2; ++j) local(row + i, k1 + j) = second[i * k2 + j];
      }
      row += part.cols;
    }
  }
  return GramInFlightFor<T>(comm, std::move(local), std::move(transfer));
}

GramInFlight start_gram_pair(const dense::Context& context, MPI_Comm comm, const SplitColumns<double, float>& X,
                             dense::ConstDenseView<float> Y1, dense::ConstDenseView<double> Y2) {
  for (const auto& part : {X.head, Y2}) {
    require_same_space("gram", part, Y1);
    require_same_rows("gram", part, Y1);
  }
  require_same_space("gram", X.tail, Y1);
  require_same_rows("gram", X.tail, Y1);
  if (on_device(X.head.space)) {
    auto transfer = std::make_unique<GramInFlight::Transfer>();
    if (device_ops::gram_pair_single_local_start(context, X.head, X.tail, Y1, Y2, transfer->device))
      return GramInFlight(comm, HostMatrix(X.cols(), Y1.cols + Y2.cols), std::move(transfer));
  }
  // Otherwise the fp64 products of widened copies; Y1 shares the tail's copy
  // where it is the tail's leading columns (LOBPCG's Z in both).
  auto widened = [&](dense::ConstDenseView<float> src) {
    auto out = std::make_shared<dense::DenseBlock<double>>(src.space, src.rows, src.cols);
    convert_block(context, src, out->view());
    return out;
  };
  const auto tail = widened(X.tail);
  const dense::ConstDenseView<double> tail_view(tail->view());
  const bool shared = Y1.data == X.tail.data && Y1.ld == X.tail.ld && Y1.cols <= X.tail.cols;
  const auto y1 = shared ? nullptr : widened(Y1);
  const dense::ConstDenseView<double> y1_view =
      shared ? column_range(tail_view, 0, Y1.cols) : dense::ConstDenseView<double>(y1->view());
  GramInFlight out = start_gram_pair<double>(context, comm, SplitColumns<double>(X.head, tail_view), y1_view, Y2);
  out.keep_until_finished(tail);
  if (y1) out.keep_until_finished(y1);
  return out;
}

template <class T>
HostMatrixFor<T> gram(const dense::Context& context, MPI_Comm comm, const std::type_identity_t<SplitColumns<T>>& X,
                      dense::ConstDenseView<T> Y) {
  return start_gram<T>(context, comm, X, Y).finish();
}

template <class T>
HostMatrixFor<T> gram(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X) {
  HostMatrixFor<T> G(X.cols, X.cols);
  if (on_device(X.space)) {
    device_ops::gram_self_local(context, X, G.data());
  } else {
    G.values() = host_gram_self_local(X);
  }
  allreduce_sum(comm, G.data(), G.values().size());
  return G;
}

template <class T>
std::vector<double> column_norms(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X) {
  std::vector<double> sums(static_cast<std::size_t>(X.cols), 0.0);
  if (on_device(X.space)) {
    device_ops::column_sumsq_local(context, X, sums.data());
  } else {
    sums = host_column_sumsq_local(X);
  }
  allreduce_sum(comm, sums.data(), sums.size());
  for (double& s : sums) s = std::sqrt(s);
  return sums;
}

template <class T>
ResidualNorms eigen_residuals(const dense::Context& context, MPI_Comm comm, dense::ConstDenseView<T> X,
                              dense::ConstDenseView<T> AX, const std::vector<double>& lambda, dense::DenseView<T> R,
                              const std::vector<std::int64_t>& r_position) {
  require_same_space("eigen_residuals", X, AX);
  require_same_space("eigen_residuals", X, R);
  require_same_rows("eigen_residuals", X, AX);
  require_same_rows("eigen_residuals", X, R);
  BLOCKEIGS_ASSERT(X.cols == AX.cols && X.cols == R.cols && std::int64_t(lambda.size()) == X.cols);
  const std::int64_t k = X.cols;
  const std::vector<std::int64_t> position = checked_positions(r_position, k);
  std::vector<double> sums(static_cast<std::size_t>(2 * k), 0.0);
  if (on_device(X.space)) {
    device_ops::eigen_residuals_local(context, X, AX, lambda.data(), R, position.data(), sums.data());
  } else {
    sums = host_eigen_residuals_local(X, AX, lambda, R, position.data());
  }
  return residual_norms_from_sums(comm, std::move(sums), k);
}

ResidualNorms residual_norms_from_sums(MPI_Comm comm, std::vector<double> sums, std::int64_t k) {
  allreduce_sum(comm, sums.data(), sums.size());
  ResidualNorms norms;
  for (std::int64_t j = 0; j < k; ++j) {
    norms.residual.push_back(std::sqrt(sums[j]));
    norms.x.push_back(std::sqrt(sums[k + j]));
  }
  return norms;
}

#define BLOCKEIGS_INSTANTIATE(T)                                                                                      \
  template GramInFlightFor<T> start_gram(const dense::Context&, MPI_Comm,                                             \
                                         const std::type_identity_t<SplitColumns<T>>&, dense::ConstDenseView<T>);     \
  template GramInFlightFor<T> start_gram_pair(const dense::Context&, MPI_Comm,                                        \
                                              const std::type_identity_t<SplitColumns<T>>&, dense::ConstDenseView<T>, \
                                              dense::ConstDenseView<T>);                                              \
  template HostMatrixFor<T> gram(const dense::Context&, MPI_Comm, const std::type_identity_t<SplitColumns<T>>&,       \
                                 dense::ConstDenseView<T>);                                                           \
  template HostMatrixFor<T> gram(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>);                          \
  template std::vector<double> column_norms(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>);               \
  template ResidualNorms eigen_residuals(const dense::Context&, MPI_Comm, dense::ConstDenseView<T>,                   \
                                         dense::ConstDenseView<T>, const std::vector<double>&, dense::DenseView<T>,   \
                                         const std::vector<std::int64_t>&);

BLOCKEIGS_FOR_EACH_SCALAR(BLOCKEIGS_INSTANTIATE)
#undef BLOCKEIGS_INSTANTIATE

}  // namespace blockeigs::solver
