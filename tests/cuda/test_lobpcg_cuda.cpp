// The device path: LOBPCG with every block in device memory against the same
// problem solved on the host, the device symmetric eigensolver, and the phase
// timer on the device's stream (the block operations:
// test_device_block_ops.cpp). Skipped, visibly, where no GPU is visible. One
// MPI rank.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <complex>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <limits>
#include <numbers>
#include <optional>
#include <utility>
#include <vector>

#include "io/generators/generators.hpp"
#include "io/generators/twisted_laplacian.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/cuda/device_cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/precond/jacobi_preconditioner.hpp"
#include "solver/lobpcg/lobpcg.hpp"
#include "solver/blocks/phase_timer.hpp"
#include "solver/lobpcg/search_block_ops.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "dense/memory.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/device_blocks.hpp"
#include "tests/support/test_matrices.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

using solver::HostMatrix;
using test::random_host;
using test::to_device;

struct Problem {
  CsrRows whole;
  std::vector<double> exact;
};

Problem laplacian_2d(std::int64_t n) {
  io::GeneratorSpec spec;
  spec.kind = io::GeneratorKind::laplacian_2d;
  spec.nx = spec.ny = n;
  spec.stencil = 5;
  return {io::generate_rows(spec, 0, io::generated_rows(spec)), io::laplacian_eigenvalues(spec)};
}

solver::LobpcgResult<double> solve(const Problem& p, dense::Context ctx, const solver::LobpcgOptions& o, bool jacobi,
                                   test::EigenpairCheck* check = nullptr) {
  const solver::RowPartition part = solver::RowPartition::uniform(p.whole.global_rows, 1);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, std::move(ctx), p.whole, part);
  std::unique_ptr<solver::JacobiPreconditioner<double>> M;
  if (jacobi) M = std::make_unique<solver::JacobiPreconditioner<double>>(A);
  auto result = solver::lobpcg<double>(A, o, M.get());
  EXPECT_EQ(result.eigenvectors.space(), A.context().space());
  if (check)
    *check = test::check_eigenpairs(MPI_COMM_WORLD, A.context(), p.whole, part, result.eigenvalues,
                                    result.eigenvectors.cview());
  return result;
}

class DevicePhaseTimer : public test::GpuTest {};

// Phases timed by events: device work is charged to the phase that queued
// it, and host time while the stream is idle to the phase that follows; the
// buckets add up to the elapsed time. Generous bounds: this checks the
// accounting, not the speed.
TEST_F(DevicePhaseTimer, ChargesStreamTimeToEachPhase) {
  const dense::Context dev = dense::Context::cuda(0);
  auto Xd = to_device(dev, random_host(1 << 20, 16, 41, 0));
  double busy = 0, idle = 0, empty = 0;
  const auto start = std::chrono::steady_clock::now();
  solver::PhaseTimer clock(dev);
  for (int pass = 0; pass < 50; ++pass) solver::scale_columns<double>(dev, std::vector<double>(16, 1.0), Xd.view());
  clock.to(busy);
  dev.synchronize();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  clock.to(idle);
  clock.to(empty);
  clock.finish();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(busy, 0.0);
  EXPECT_GE(idle, 0.029);
  EXPECT_LT(empty, 0.005);
  EXPECT_LE(busy + idle + empty, elapsed + 1e-3);
  EXPECT_GE(busy + idle + empty, 0.9 * elapsed - 2e-3);
}

// Queues `marks` (which takes the timer, the context, a device block to work
// on and two buckets), then checks that the buckets add up to the elapsed
// time: no mark lost or charged twice. Returns the buckets.
template <class Marks>
std::pair<double, double> marks_add_up(Marks marks) {
  const dense::Context dev = dense::Context::cuda(0);
  auto Xd = to_device(dev, random_host(1 << 18, 16, 42, 0));
  double first = 0, second = 0;
  dev.synchronize();
  const auto start = std::chrono::steady_clock::now();
  solver::PhaseTimer clock(dev);
  marks(clock, dev, Xd.view(), first, second);
  clock.finish();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(first + second, elapsed + 1e-3);
  EXPECT_GE(first + second, 0.9 * elapsed - 2e-3);
  return {first, second};
}

// More marks than the timer settles at once (it settles in batches, and
// waits past its limit of pending marks).
TEST_F(DevicePhaseTimer, SettlesManyMarksInBatches) {
  const auto [even, odd] = marks_add_up(
      [](solver::PhaseTimer& clock, const dense::Context& dev, dense::DenseView<double> X, double& a, double& b) {
        for (int mark = 0; mark < 300; ++mark) {
          solver::scale_columns<double>(dev, std::vector<double>(16, 1.0), X);
          clock.to(mark % 2 == 0 ? a : b);
        }
      });
  EXPECT_GT(even, 0.0);
  EXPECT_GT(odd, 0.0);
}

// Marks settled on request (settle_done) as well as in batches, some done
// and some still queued when asked.
TEST_F(DevicePhaseTimer, SettlesDoneMarksOnRequest) {
  const auto [work, waited] = marks_add_up(
      [](solver::PhaseTimer& clock, const dense::Context& dev, dense::DenseView<double> X, double& busy, double& idle) {
        for (int mark = 0; mark < 100; ++mark) {
          for (int pass = 0; pass < 4; ++pass) solver::scale_columns<double>(dev, std::vector<double>(16, 1.0), X);
          clock.to(busy);
          clock.settle_done();  // usually before the work is done
          if (mark % 10 == 9) {
            dev.synchronize();
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            clock.to(idle);
            clock.settle_done();
          }
        }
      });
  EXPECT_GT(work, 0.0);
  EXPECT_GE(waited, 10 * 0.0019);
}

class DeviceLobpcg : public test::GpuTest {};

// Z in fp32 by default only where it makes LOBPCG's step faster
// (docs/benchmarks/solvers.md#search-precision): on an H100, 12.8 bytes an SM cycle, not on
// an H200, 18.8, where the mixed kernels are slower than the fp64 ones.
TEST_F(DeviceLobpcg, ResidualsInFp32OnlyWhereTheyPay) {
  const dense::Context ctx = dense::Context::cuda(0);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const std::string name = prop.name;
  const double rate = solver::memory_bytes_per_sm_cycle(ctx);
  if (name.find("H100") != std::string::npos) {
    EXPECT_NEAR(rate, 12.8, 1.0) << name;
    EXPECT_TRUE(solver::search_single_pays(ctx)) << name;
  } else if (name.find("H200") != std::string::npos) {
    EXPECT_NEAR(rate, 18.8, 1.5) << name;
    EXPECT_FALSE(solver::search_single_pays(ctx)) << name;
  } else {
    GTEST_SKIP() << name << " (" << rate << " bytes an SM cycle): no measurement to check against";
  }
  EXPECT_FALSE(solver::search_single_pays(dense::Context::host()));
}

// LOBPCG with the same options on the host and on the device (relative
// test, tolerance 1e-6): both converged; the device's eigenvalues within
// 1e-9 of the host's and 1e-8 of the closed form (errors ~ ||r||^2 / gap),
// its residual norms as reported and within the tolerance, its vectors
// orthonormal.
struct HostAndDevice {
  solver::LobpcgResult<double> host, device;
};
HostAndDevice solve_on_both(const Problem& p, const solver::LobpcgOptions& o, bool jacobi) {
  test::EigenpairCheck check;
  HostAndDevice r{solve(p, dense::Context::host(), o, jacobi), solve(p, dense::Context::cuda(0), o, jacobi, &check)};
  EXPECT_TRUE(r.host.all_converged());
  EXPECT_TRUE(r.device.all_converged());
  if (!r.host.all_converged() || !r.device.all_converged()) return r;
  for (int j = 0; j < o.k; ++j) {
    const double exact = o.which == solver::SpectrumEnd::smallest ? p.exact[j] : p.exact[p.exact.size() - 1 - j];
    EXPECT_NEAR(r.device.eigenvalues[j], r.host.eigenvalues[j], 1e-9 * exact);
    EXPECT_NEAR(r.device.eigenvalues[j], exact, 1e-8 * exact);
    EXPECT_NEAR(check.residuals[j], r.device.residual_norms[j], 1e-12 * 8);
    EXPECT_LE(check.residuals[j], o.tolerance * exact * (1 + 1e-6));
  }
  EXPECT_LE(check.orthonormality, 1e-10);
  return r;
}

solver::LobpcgOptions relative_options(int k, solver::SpectrumEnd which = solver::SpectrumEnd::smallest) {
  solver::LobpcgOptions o;
  o.k = k;
  o.which = which;
  o.tolerance = 1e-6;
  o.test = solver::StoppingTest::relative;
  o.max_iterations = 2000;
  return o;
}

TEST_F(DeviceLobpcg, SameEigenvaluesAsTheHost) {
  const Problem p = laplacian_2d(30);
  for (const auto which : {solver::SpectrumEnd::smallest, solver::SpectrumEnd::largest}) {
    for (const bool jacobi : {false, true}) {
      SCOPED_TRACE(testing::Message() << (which == solver::SpectrumEnd::smallest ? "smallest" : "largest")
                                      << (jacobi ? ", Jacobi" : ""));
      const auto [on_host, on_device] = solve_on_both(p, relative_options(6, which), jacobi);
      EXPECT_GT(on_device.stats.timings.spmm, 0.0);
      // Rayleigh-Ritz's stream time includes the idle stream while the host solves.
      EXPECT_GT(on_device.stats.timings.small_eigenproblem, 0.0);
      EXPECT_LE(on_device.stats.timings.small_eigenproblem, on_device.stats.timings.rayleigh_ritz);
      // Most steps carried the [X P] blocks, on both backends.
      EXPECT_GT(on_device.stats.carried_steps, on_device.iterations / 2);
      EXPECT_GT(on_host.stats.carried_steps, on_host.iterations / 2);
      EXPECT_GT(on_device.stats.implicit_search_steps, on_device.iterations / 2);
      // A X implied on most steps without a preconditioner, never with one.
      EXPECT_EQ(on_device.stats.implied_ax_steps > on_device.iterations / 2, !jacobi);
      EXPECT_EQ(on_device.stats.implied_ax_steps == 0, jacobi);
      EXPECT_EQ(on_device.stats.z_products_ahead > on_device.iterations / 2, !jacobi);
    }
  }
}

// A x = lambda B x on the device (B [X P] through the one-pass Ritz update
// in place of [X P]), with Jacobi and with a constraint block: the closed
// form, residuals as the test demands, X^T B X = I, X B-orthogonal to Y.
TEST_F(DeviceLobpcg, GeneralizedPencilWithConstraints) {
  const test::Pencil p = test::fem_p1(2, 20);
  const solver::RowPartition partition = solver::RowPartition::uniform(p.A.global_rows, 1);
  const dense::Context ctx = dense::Context::cuda(0);
  test::CsrTestOperator<double> A(MPI_COMM_WORLD, test::SharedContext{ctx}, p.A, partition);
  test::CsrTestOperator<double> B(MPI_COMM_WORLD, test::SharedContext{ctx}, p.B, partition);
  const std::int64_t n = A.local_rows();
  for (const bool jacobi : {false, true}) {
    for (const int m : {0, 1}) {
      SCOPED_TRACE(testing::Message() << (jacobi ? "Jacobi" : "none") << ", " << m << " constraints");
      // The constraint: the first eigenvector, sin(pi x) sin(pi y) on the grid.
      dense::DenseBlock<double> y_host(Space::host, n, 1), Y(Space::device, n, 1);
      for (std::int64_t i = 0; i < n; ++i)
        y_host.view()(i, 0) =
            std::sin(std::numbers::pi * double(i / 20 + 1) / 21) * std::sin(std::numbers::pi * double(i % 20 + 1) / 21);
      solver::copy_block(ctx, y_host.cview(), Y.view());
      std::optional<solver::JacobiPreconditioner<double>> precond;
      if (jacobi) precond.emplace(A);
      solver::LobpcgOptions o = relative_options(6);
      o.tolerance = 1e-9;
      const auto r = solver::lobpcg<double>(A, o, precond ? &*precond : nullptr, std::nullopt, &B,
                                            m > 0 ? std::optional(Y.cview()) : std::nullopt);
      ASSERT_TRUE(r.all_converged());
      for (int j = 0; j < o.k; ++j) {
        EXPECT_NEAR(r.eigenvalues[j], p.exact[j + m], 1e-8 * p.exact[j + m]) << "pair " << j;
        EXPECT_LE(r.relative_residuals[j], o.tolerance) << "pair " << j;
      }
      dense::DenseBlock<double> BX(Space::device, n, o.k);
      B.apply(1.0, r.eigenvectors.cview(), 0.0, BX.view());
      const solver::HostMatrix G = solver::gram<double>(ctx, MPI_COMM_WORLD, r.eigenvectors.cview(), BX.cview());
      for (int i = 0; i < o.k; ++i)
        for (int j = 0; j < o.k; ++j) EXPECT_NEAR(G(i, j), i == j ? 1.0 : 0.0, 1e-10);
      if (m > 0) {
        const solver::HostMatrix C = solver::gram<double>(ctx, MPI_COMM_WORLD, Y.cview(), BX.cview());
        for (int j = 0; j < o.k; ++j) EXPECT_LE(std::abs(C(0, j)), 1e-10);
      }
    }
  }
}

// Blocks of 21 to 32 (k = 17 to 25 by default) take the wide Ritz update,
// with A X stored (implied, it measured slower there:
// docs/benchmarks/solvers.md#tried-not-kept): k = 24 (block 30: 90 basis columns, 60 outputs) and k = 25
// (block 32: 96 and 64, the widest shape), against the host and the closed
// form.
TEST_F(DeviceLobpcg, WideBlocks) {
  const Problem p = laplacian_2d(30);
  for (const int k : {24, 25}) {
    SCOPED_TRACE(testing::Message() << "k = " << k);
    const auto [on_host, on_device] = solve_on_both(p, relative_options(k), false);
    EXPECT_EQ(on_device.block_size, k + (k + 3) / 4);
    EXPECT_EQ(on_device.stats.implied_ax_steps, 0);
  }
}

// k = 64 (block 80): the Rayleigh-Ritz problems (240 rows) go to the
// device's eigensolver, whose vectors' signs and cluster bases differ from
// the host's; the eigenpairs must not.
TEST_F(DeviceLobpcg, LargeBlocksSolveTheirRitzProblemsOnTheDevice) {
  const Problem p = laplacian_2d(50);
  solve_on_both(p, relative_options(64), false);
}

class DeviceCholeskyInverse : public test::GpuTest {};

// cuSOLVER's U^-1 against LAPACK's (the host twin) on awkward sizes, including the sizes CholQR sends it (400
// rows and more): the same inverse to rounding over the condition, U^-T G U^-1 = I, the lower part zero; an
// indefinite and a non-finite matrix refused; the buffers kept across sizes.
TEST_F(DeviceCholeskyInverse, MatchesLapackAndRefusesIndefinite) {
  solver::DeviceCholeskyInverse on_device(dense::Context::cuda(0));
  for (const std::int64_t n : {1, 2, 7, 401, 700, 64}) {
    SCOPED_TRACE(testing::Message() << n << " rows");
    // G = R^T R + n I with R random: symmetric positive definite, condition a few.
    solver::HostMatrix G(n, n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = i == j ? double(n) : 0.0;
        for (std::int64_t c = 0; c < n; ++c)
          sum += (solver::hash_uniform(43, c, i) - 0.5) * (solver::hash_uniform(43, c, j) - 0.5);
        G(i, j) = sum;
      }
    solver::HostMatrix host, dev;
    ASSERT_TRUE(solver::lapack_cholesky_inverse(G, host));
    ASSERT_TRUE(on_device(G, dev));
    ASSERT_EQ(dev.rows(), n);
    double scale = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) scale = std::max(scale, std::abs(host(i, j)));
    const double eps = std::numeric_limits<double>::epsilon();
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        ASSERT_NEAR(dev(i, j), host(i, j), 1e3 * eps * scale) << i << ", " << j;
        if (j < i) {
          ASSERT_EQ(dev(i, j), 0.0);
        }
      }
    // U^-T G U^-1 = I, sampled on a few columns (all for small n).
    const std::int64_t step = std::max<std::int64_t>(1, n / 8);
    for (std::int64_t a = 0; a < n; a += step)
      for (std::int64_t b = 0; b < n; b += step) {
        double sum = 0;
        for (std::int64_t i = 0; i <= a; ++i)
          for (std::int64_t j = 0; j <= b; ++j) sum += dev(i, a) * G(i, j) * dev(j, b);
        EXPECT_NEAR(sum, a == b ? 1.0 : 0.0, 1e-12) << a << ", " << b;
      }
  }
  solver::HostMatrix indefinite = solver::HostMatrix::identity(450), out;
  indefinite(300, 300) = -1;
  EXPECT_FALSE(on_device(indefinite, out));
  solver::HostMatrix not_finite = solver::HostMatrix::identity(450);
  not_finite(10, 20) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(on_device(not_finite, out));
  // The chooser: the device's from device_cholesky_min_rows on a device context, LAPACK's below.
  const dense::Context context = dense::Context::cuda(0);
  const solver::CholeskyInverse chosen = solver::cholesky_inverse_solver(context, 2000);
  solver::HostMatrix small;
  EXPECT_TRUE(chosen(solver::HostMatrix::identity(5), small));
  EXPECT_FALSE(chosen(indefinite, out));
}

class DeviceSymmetricEigen : public test::GpuTest {};

// cuSOLVER's eigenpairs against symmetric_eigen's, at the sizes LOBPCG sends
// (200 rows and more) and small ones: random matrices, and a matrix with
// three-fold and six-fold clusters like the 3D Laplacian's. The values agree
// to rounding; the vectors are orthonormal eigenvectors, and span the host's
// wherever the values are apart from the rest.
TEST_F(DeviceSymmetricEigen, MatchesTheHostSolver) {
  solver::DeviceSymmetricEigen on_device(dense::Context::cuda(0));
  for (const std::int64_t n : {1, 7, 200, 241, 375, 64}) {  // 64 after 375: the buffers are kept
    for (const bool clustered : {false, true}) {
      SCOPED_TRACE(testing::Message() << n << " rows" << (clustered ? ", clustered" : ""));
      // Q diag(d) Q^T with Q from a symmetric_eigen of a random matrix.
      solver::HostMatrix R(n, n);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j <= i; ++j) R(i, j) = R(j, i) = solver::hash_uniform(41, i, j) - 0.5;
      solver::HostMatrix M = R;
      if (clustered) {
        const solver::SymmetricEigen basis = solver::symmetric_eigen(R, 0, n);
        std::vector<double> d(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) d[i] = 1.0 + double(i / 6) + (i % 6 < 3 ? 0.0 : 0.5);
        for (std::int64_t i = 0; i < n; ++i)
          for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t c = 0; c < n; ++c) sum += basis.vectors(i, c) * d[c] * basis.vectors(j, c);
            M(i, j) = sum;
          }
      }
      const std::int64_t first = n / 5, count = std::max<std::int64_t>(1, n / 3);
      const solver::SymmetricEigen host = solver::symmetric_eigen(M, first, count);
      const solver::SymmetricEigen dev = on_device(M, first, count);
      ASSERT_EQ(dev.values.size(), std::size_t(n));
      ASSERT_EQ(dev.vectors.rows(), n);
      ASSERT_EQ(dev.vectors.cols(), count);
      double scale = 0;
      for (const double v : host.values) scale = std::max(scale, std::abs(v));
      const double eps = std::numeric_limits<double>::epsilon(), tol = 50 * double(n) * eps * scale;
      for (std::int64_t i = 0; i < n; ++i) EXPECT_NEAR(dev.values[i], host.values[i], tol) << i;
      for (std::int64_t c = 0; c < count; ++c) {
        double residual = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          double mv = 0;
          for (std::int64_t j = 0; j < n; ++j) mv += M(i, j) * dev.vectors(j, c);
          residual = std::max(residual, std::abs(mv - dev.values[first + c] * dev.vectors(i, c)));
        }
        EXPECT_LE(residual, tol) << "vector " << c;
        for (std::int64_t c2 = 0; c2 <= c; ++c2) {
          double dot = 0;
          for (std::int64_t i = 0; i < n; ++i) dot += dev.vectors(i, c) * dev.vectors(i, c2);
          EXPECT_NEAR(dot, c == c2 ? 1.0 : 0.0, 50 * double(n) * eps) << c << ", " << c2;
        }
        // Apart from the other values: the same vector up to its sign.
        const double value = host.values[first + c];
        double gap = std::numeric_limits<double>::infinity();
        for (std::int64_t i = 0; i < n; ++i)
          if (i != first + c) gap = std::min(gap, std::abs(host.values[i] - value));
        if (gap < 1e-3 * scale) continue;
        double dot = 0;
        for (std::int64_t i = 0; i < n; ++i) dot += dev.vectors(i, c) * host.vectors(i, c);
        EXPECT_NEAR(std::abs(dot), 1.0, 1e-9) << "vector " << c;
      }
    }
  }
  solver::HostMatrix bad(3, 3);
  bad(2, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(on_device(bad, 0, 1), Error);
}

TEST_F(DeviceLobpcg, SameSeedGivesIdenticalBits) {
  const Problem p = laplacian_2d(16);
  solver::LobpcgOptions o;
  o.k = 4;
  const auto a = solve(p, dense::Context::cuda(0), o, false);
  const auto b = solve(p, dense::Context::cuda(0), o, false);
  ASSERT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(0, std::memcmp(a.eigenvalues.data(), b.eigenvalues.data(), 4 * sizeof(double)));
}

// Complex Hermitian blocks on the device: the twisted (Bloch) Laplacian's pairs at both ends, with and without
// Jacobi, and a Hermitian pencil (B = I + L' / 4, L' of other phases) with a constraint column: the same
// eigenvalues as on the host (to 1e-9) and the closed form's for A alone, X^H B X = I.
TEST_F(DeviceLobpcg, ComplexPairsAsOnTheHost) {
  using C = std::complex<double>;
  const io::TwistedLaplacian grid{9, 8, 7, {0.7, -1.1, 2.3}}, mass_grid{9, 8, 7, {-0.4, 0.9, 1.7}};
  const std::int64_t n = 9 * 8 * 7;
  ComplexCsrRows a = io::twisted_laplacian_rows(grid, 0, n), b = io::twisted_laplacian_rows(mass_grid, 0, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t q = b.row_offsets[i]; q < b.row_offsets[i + 1]; ++q)
      b.values[q] = 0.25 * b.values[q] + (b.col_indices[q] == i ? 1.0 : 0.0);
  const std::vector<double> exact = io::twisted_laplacian_eigenvalues(grid);
  const solver::RowPartition partition = solver::RowPartition::uniform(n, 1);
  const dense::Context host = dense::Context::host(), device = dense::Context::cuda(0);
  auto solve_on = [&](const dense::Context& ctx, solver::LobpcgOptions o, bool jacobi, bool pencil) {
    solver::DistributedOperator<C> A(MPI_COMM_WORLD, ctx, a, partition), B(MPI_COMM_WORLD, ctx, b, partition);
    std::optional<solver::JacobiPreconditioner<C>> precond;
    if (jacobi) precond.emplace(A);
    std::optional<dense::DenseBlock<C>> y;
    if (pencil) {  // a constraint column: the constant vector
      dense::DenseBlock<C> ones(Space::host, n, 1);
      for (std::int64_t i = 0; i < n; ++i) ones.data()[i] = C(1.0, 0.5);
      y.emplace(ctx.space(), n, 1);
      solver::copy_block(ctx, ones.cview(), y->view());
    }
    auto r = solver::lobpcg<C>(A, o, precond ? &*precond : nullptr, std::nullopt, pencil ? &B : nullptr,
                               pencil ? std::optional(y->cview()) : std::nullopt);
    EXPECT_TRUE(r.all_converged()) << solver::to_string(r.stop);
    if (pencil && ctx.space() == Space::device) {
      dense::DenseBlock<C> BX(Space::device, n, o.k);
      B.apply(C(1), r.eigenvectors.cview(), C(0), BX.view());
      const solver::ComplexHostMatrix G = solver::gram<C>(ctx, MPI_COMM_WORLD, r.eigenvectors.cview(), BX.cview());
      for (int i = 0; i < o.k; ++i)
        for (int j = 0; j < o.k; ++j) EXPECT_LT(std::abs(G(i, j) - (i == j ? 1.0 : 0.0)), 1e-10) << i << ", " << j;
      const solver::ComplexHostMatrix Yb = solver::gram<C>(ctx, MPI_COMM_WORLD, y->cview(), BX.cview());
      for (int j = 0; j < o.k; ++j) EXPECT_LT(std::abs(Yb(0, j)), 1e-9) << j;
    }
    return r.eigenvalues;
  };
  for (const auto which : {solver::SpectrumEnd::smallest, solver::SpectrumEnd::largest})
    for (const bool jacobi : {false, true})
      for (const bool pencil : {false, true}) {
        SCOPED_TRACE(testing::Message() << (which == solver::SpectrumEnd::smallest ? "smallest" : "largest")
                                        << (jacobi ? ", Jacobi" : "") << (pencil ? ", pencil" : ""));
        solver::LobpcgOptions o = relative_options(6, which);
        o.tolerance = 1e-10;
        const std::vector<double> on_host = solve_on(host, o, jacobi, pencil),
                                  on_device = solve_on(device, o, jacobi, pencil);
        for (int j = 0; j < o.k; ++j) {
          EXPECT_NEAR(on_device[j], on_host[j], 1e-9 * std::abs(on_host[j])) << j;
          const double closed = which == solver::SpectrumEnd::smallest ? exact[j] : exact[n - 1 - j];
          if (!pencil) EXPECT_NEAR(on_device[j], closed, 1e-9 * closed) << j;
        }
      }
}

}  // namespace
}  // namespace blockeigs
