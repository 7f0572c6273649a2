#include "solver/blocks/eigen_solvers.hpp"

#include <lapacke.h>

#include <complex>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "solver/blocks/cuda/device_cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"

namespace blockeigs::solver {

SymmetricEigen lapack_symmetric_eigen(const HostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  SymmetricEigen out;
  out.vectors = HostMatrix(n, count);
  if (n == 0) return out;
  std::vector<double> a(static_cast<std::size_t>(n * n));
  full_symmetric_copy(M, a.data());  // from the lower triangle; throws on a non-finite entry
  out.values.resize(static_cast<std::size_t>(n));
  const lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', static_cast<lapack_int>(n), a.data(),
                                         static_cast<lapack_int>(n), out.values.data());
  if (info != 0)
    throw Error(
        detail::concat("symmetric eigenproblem (", n, " x ", n, "): LAPACK dsyevd did not converge (info ", info, ")"));
  for (std::int64_t c = 0; c < count; ++c)
    for (std::int64_t i = 0; i < n; ++i) out.vectors(i, c) = a[static_cast<std::size_t>((first + c) * n + i)];
  return out;
}

HermitianEigen lapack_hermitian_eigen(const ComplexHostMatrix& M, std::int64_t first, std::int64_t count) {
  const std::int64_t n = M.rows();
  BLOCKEIGS_ASSERT(M.cols() == n && first >= 0 && count >= 0 && first + count <= n);
  HermitianEigen out;
  out.vectors = ComplexHostMatrix(n, count);
  if (n == 0) return out;
  std::vector<std::complex<double>> a(static_cast<std::size_t>(n * n));
  full_hermitian_copy(M, a.data());  // column-major, from the lower triangle; throws on a non-finite entry
  out.values.resize(static_cast<std::size_t>(n));
  const lapack_int info =
      LAPACKE_zheevd(LAPACK_COL_MAJOR, 'V', 'L', static_cast<lapack_int>(n),
                     reinterpret_cast<lapack_complex_double*>(a.data()), static_cast<lapack_int>(n), out.values.data());
  if (info != 0)
    throw Error(
        detail::concat("Hermitian eigenproblem (", n, " x ", n, "): LAPACK zheevd did not converge (info ", info, ")"));
  for (std::int64_t c = 0; c < count; ++c)
    for (std::int64_t i = 0; i < n; ++i) out.vectors(i, c) = a[static_cast<std::size_t>((first + c) * n + i)];
  return out;
}

// The device from device_eigen_min_rows; below it LAPACK for Hermitian problems, and for real ones LAPACK from
// lapack_eigen_min_rows, our own below.
template <class S>
EigenSolverOf<S> projected_eigen_solver(const dense::Context& context, std::int64_t rows) {
  std::shared_ptr<DeviceSymmetricEigen> device;
  if (context.space() == Space::device && rows >= device_eigen_min_rows)
    device = std::make_shared<DeviceSymmetricEigen>(context);
  return [device](const HostMatrixOf<S>& M, std::int64_t first, std::int64_t count) {
    if (device && M.rows() >= device_eigen_min_rows) return (*device)(M, first, count);
    if constexpr (is_complex_v<S>)
      return lapack_hermitian_eigen(M, first, count);
    else
      return M.rows() >= lapack_eigen_min_rows ? lapack_symmetric_eigen(M, first, count)
                                               : symmetric_eigen(M, first, count);
  };
}
template SymmetricEigenSolver projected_eigen_solver<double>(const dense::Context&, std::int64_t);
template HermitianEigenSolver projected_eigen_solver<std::complex<double>>(const dense::Context&, std::int64_t);

bool lapack_cholesky_inverse(const HostMatrix& G, HostMatrix& inverse) {
  const std::int64_t n = G.rows();
  BLOCKEIGS_ASSERT(G.cols() == n);
  inverse = G;
  if (n == 0) return true;
  const auto ni = static_cast<lapack_int>(n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', ni, inverse.data(), ni) != 0) return false;
  if (LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'U', 'N', ni, inverse.data(), ni) != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) inverse(i, j) = 0.0;
  return true;
}

bool lapack_cholesky_inverse(const ComplexHostMatrix& G, ComplexHostMatrix& inverse) {
  const std::int64_t n = G.rows();
  BLOCKEIGS_ASSERT(G.cols() == n);
  inverse = G;
  if (n == 0) return true;
  const auto ni = static_cast<lapack_int>(n);
  auto* a = reinterpret_cast<lapack_complex_double*>(inverse.data());
  if (LAPACKE_zpotrf(LAPACK_ROW_MAJOR, 'U', ni, a, ni) != 0) return false;
  if (LAPACKE_ztrtri(LAPACK_ROW_MAJOR, 'U', 'N', ni, a, ni) != 0) return false;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) inverse(i, j) = 0.0;
  return true;
}

template <class S>
CholeskyInverseOf<S> cholesky_inverse_solver(const dense::Context& context, std::int64_t rows) {
  std::shared_ptr<DeviceCholeskyInverse> device;
  if (context.space() == Space::device && rows >= device_cholesky_min_rows)
    device = std::make_shared<DeviceCholeskyInverse>(context);
  return [device](const HostMatrixOf<S>& G, HostMatrixOf<S>& inverse) {
    if (device && G.rows() >= device_cholesky_min_rows) return (*device)(G, inverse);
    return lapack_cholesky_inverse(G, inverse);
  };
}
template CholeskyInverse cholesky_inverse_solver<double>(const dense::Context&, std::int64_t);
template CholeskyInverseOf<std::complex<double>> cholesky_inverse_solver<std::complex<double>>(const dense::Context&,
                                                                                               std::int64_t);

}  // namespace blockeigs::solver
