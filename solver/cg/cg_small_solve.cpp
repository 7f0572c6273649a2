#include "solver/cg/cg_small_solve.hpp"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "core/checks.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "solver/base/large_messages.hpp"

namespace blockeigs::solver::cg_detail {
namespace {

// Rank 0's values on every rank (a complex value travels as its two doubles).
void broadcast_values(MPI_Comm comm, std::vector<double>& v) {
  large_bcast(comm, v.data(), static_cast<std::int64_t>(v.size()), 0);
}
void broadcast_values(MPI_Comm comm, std::vector<std::complex<double>>& v) {
  large_bcast(comm, reinterpret_cast<double*>(v.data()), 2 * static_cast<std::int64_t>(v.size()), 0);
}

// Thrown on every rank from an info every rank received.
[[noreturn]] void fail_lapack_everywhere(int info, const char* routine) {
  throw AgreedError(::blockeigs::detail::concat("block CG: LAPACK error in ", routine, ": info ", info, ", ",
                                                ::blockeigs::detail::lapack_info_meaning(routine, info)),
                    false);
}

// LAPACK's Cholesky factorisation (lower) and solve, real or complex (Hermitian: A = L L^H).
int potrf(int r, double* a) { return LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', r, a, r); }
int potrf(int r, std::complex<double>* a) {
  return LAPACKE_zpotrf(LAPACK_ROW_MAJOR, 'L', r, reinterpret_cast<lapack_complex_double*>(a), r);
}
int potrs(int r, int a, const double* f, double* b) { return LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', r, a, f, r, b, a); }
int potrs(int r, int a, const std::complex<double>* f, std::complex<double>* b) {
  return LAPACKE_zpotrs(LAPACK_ROW_MAJOR, 'L', r, a, reinterpret_cast<const lapack_complex_double*>(f), r,
                        reinterpret_cast<lapack_complex_double*>(b), a);
}
template <class S>
const char* potrf_name() {
  return std::is_same_v<S, double> ? "LAPACKE_dpotrf" : "LAPACKE_zpotrf";
}
template <class S>
const char* potrs_name() {
  return std::is_same_v<S, double> ? "LAPACKE_dpotrs" : "LAPACKE_zpotrs";
}

}  // namespace

template <class S>
SmallSolve<S> factor_delta(MPI_Comm comm, const HostMatrixOf<S>& delta) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SmallSolve<S> out;
  out.factor = delta;
  double status[2] = {0, 0};  // potrf's info (1 when a diagonal entry rules it out), the smallest diagonal entry
  if (rank == 0) {
    const std::int64_t r = delta.rows();
    double smallest = INFINITY;
    for (std::int64_t i = 0; i < r; ++i) smallest = std::min(smallest, std::real(delta(i, i)));
    int info = smallest > 0 ? potrf(static_cast<int>(r), out.factor.data()) : 1;
    status[0] = info;
    status[1] = smallest;
  }
  BLOCKEIGS_MPI_CHECK(MPI_Bcast(status, 2, MPI_DOUBLE, 0, comm));
  const int info = static_cast<int>(status[0]);
  // info > 0: a leading minor is not positive definite, which the caller reports.
  if (info < 0) fail_lapack_everywhere(info, potrf_name<S>());
  out.positive_definite = info == 0;
  out.smallest_diagonal = status[1];
  if (out.positive_definite) broadcast_values(comm, out.factor.values());
  return out;
}

template <class S>
HostMatrixOf<S> solve_delta(MPI_Comm comm, const SmallSolve<S>& delta, HostMatrixOf<S> rhs, double sign) {
  int rank = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const auto r = static_cast<int>(rhs.rows()), a = static_cast<int>(rhs.cols());
  int info = 0;
  if (rank == 0 && r > 0 && a > 0) {
    info = potrs(r, a, delta.factor.data(), rhs.data());
    if (sign != 1)
      for (S& v : rhs.values()) v *= sign;
  }
  // potrs's info rides at the end of the broadcast.
  std::vector<S>& values = rhs.values();
  values.push_back(S(info));
  broadcast_values(comm, values);
  info = static_cast<int>(std::real(values.back()));
  values.pop_back();
  if (info != 0) fail_lapack_everywhere(info, potrs_name<S>());
  return rhs;
}

template SmallSolve<double> factor_delta(MPI_Comm, const HostMatrix&);
template SmallSolve<std::complex<double>> factor_delta(MPI_Comm, const ComplexHostMatrix&);
template HostMatrix solve_delta(MPI_Comm, const SmallSolve<double>&, HostMatrix, double);
template ComplexHostMatrix solve_delta(MPI_Comm, const SmallSolve<std::complex<double>>&, ComplexHostMatrix, double);

}  // namespace blockeigs::solver::cg_detail
