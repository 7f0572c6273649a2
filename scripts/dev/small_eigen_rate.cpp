// Times LAPACK's drivers on the small symmetric eigenproblem LOBPCG solves on
// the host every iteration (n = 60, the lowest 20 pairs wanted), with a
// spectrum like the 128^3 Laplacian's: the wanted end in clusters of exact
// multiplicities (3D Laplacian), the rest spread to 12.
//   g++ -O2 -o small_eigen_rate scripts/dev/small_eigen_rate.cpp \
//       -I/usr/include/x86_64-linux-gnu/openblas-pthread -llapacke -lopenblas
//   OPENBLAS_NUM_THREADS=1 ./small_eigen_rate [n] [wanted]
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 60, want = argc > 2 ? std::atoi(argv[2]) : 20;
  std::mt19937_64 gen(1);
  std::normal_distribution<double> normal;
  std::vector<double> Q(n * n), tau(n);
  for (double& v : Q) v = normal(gen);
  LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, Q.data(), n, tau.data());
  LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, Q.data(), n, tau.data());
  const double unit = 5.93e-4;  // (pi / 129)^2
  const int cluster[] = {3, 6, 6, 6, 9, 9, 9, 11, 11, 11, 12, 14, 14, 14, 14, 14, 14, 17, 17, 17, 18, 18, 18};
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = i < 23 ? cluster[i] * unit : 0.05 + 12.0 * (i - 23) / (n - 23);
  std::vector<double> A(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += Q[i + k * n] * d[k] * Q[j + k * n];
      A[i + j * n] = s;
    }
  std::vector<double> W(n * n), w(n), Z(n * n), e(n), tq(n), work(64 * n * n + 64 * n);
  std::vector<lapack_int> iwork(64 * n), isuppz(2 * n), ifail(n), iblock(n), isplit(n);
  lapack_int m = 0, nsplit = 0;
  auto bench = [&](const char* name, auto f) {
    const int reps = 2000;
    for (int r = 0; r < 50; ++r) f();
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) f();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
    double err = 0;  // lowest `want` eigenvalues against the spectrum built in
    std::vector<double> sorted(d);
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < want; ++i) err = std::max(err, std::abs(w[i] - sorted[i]) / sorted[i]);
    std::printf("%-40s %8.1f us   max rel. error of the %d lowest %.1e\n", name, us, want, err);
  };
  const lapack_int lwork = 1 + 6 * n + 2 * n * n, liwork = 3 + 5 * n;
  bench("dsyevd, all pairs (LOBPCG today)", [&] {
    W = A;
    LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, W.data(), n, w.data(), work.data(), lwork, iwork.data(), liwork);
  });
  bench("dsyev, all pairs", [&] {
    W = A;
    LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'L', n, W.data(), n, w.data(), work.data(), 64 * n);
  });
  bench("dsyevr, lowest `want`", [&] {
    W = A;
    LAPACKE_dsyevr_work(LAPACK_COL_MAJOR, 'V', 'I', 'L', n, W.data(), n, 0, 0, 1, want, 0.0, &m, w.data(), Z.data(), n,
                        isuppz.data(), work.data(), 64 * n, iwork.data(), 64 * n);
  });
  bench("dsyevx, lowest `want`", [&] {
    W = A;
    LAPACKE_dsyevx_work(LAPACK_COL_MAJOR, 'V', 'I', 'L', n, W.data(), n, 0, 0, 1, want, 0.0, &m, w.data(), Z.data(), n,
                        work.data(), 64 * n, iwork.data(), ifail.data());
  });
  bench("dsytrd + dstebz + dstein + dormtr", [&] {
    W = A;
    LAPACKE_dsytrd_work(LAPACK_COL_MAJOR, 'L', n, W.data(), n, work.data(), e.data(), tq.data(), work.data() + n,
                        32 * n);
    std::vector<double> diag(work.begin(), work.begin() + n);
    LAPACKE_dstebz_work('I', 'E', n, 0, 0, 1, want, 0.0, diag.data(), e.data(), &m, &nsplit, w.data(), iblock.data(),
                        isplit.data(), work.data() + 2 * n, iwork.data());
    LAPACKE_dstein_work(LAPACK_COL_MAJOR, n, diag.data(), e.data(), m, w.data(), iblock.data(), isplit.data(), Z.data(),
                        n, work.data() + 2 * n, iwork.data(), ifail.data());
    LAPACKE_dormtr_work(LAPACK_COL_MAJOR, 'L', 'L', 'N', n, m, W.data(), n, tq.data(), Z.data(), n,
                        work.data() + 2 * n, 32 * n);
  });
  bench("dsytrd alone", [&] {
    W = A;
    LAPACKE_dsytrd_work(LAPACK_COL_MAJOR, 'L', n, W.data(), n, work.data(), e.data(), tq.data(), work.data() + n,
                        32 * n);
  });
  return 0;
}
