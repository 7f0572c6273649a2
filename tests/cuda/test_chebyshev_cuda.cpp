// The Chebyshev preconditioner's device passes against their host twins
// (chebyshev_steps.hpp: in fp64, in fp32, and fp32 over fp64 input and
// output; with and without the diagonals, with and without writing Q back,
// the last step in place and into a separate block, padded leading
// dimensions), and the whole preconditioner on the device against the host
// on a Laplacian, both ends, with Jacobi, its polynomial in fp64 and fp32.
// One MPI rank; skipped where no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "io/generators/generators.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/operator/distributed_operator.hpp"
#include "solver/precond/chebyshev_preconditioner.hpp"
#include "solver/precond/chebyshev_steps.hpp"
#include "dense/memory.hpp"
#include "tests/support/csr_test_operator.hpp"
#include "tests/support/mpi_environment.hpp"
#include "tests/support/gpu_test.hpp"

namespace blockeigs {
namespace {

template <class V>
using BlockOf = dense::DenseBlock<V>;
using Block = BlockOf<double>;

template <class V = double>
BlockOf<V> random_host(std::int64_t rows, std::int64_t cols, std::uint64_t seed, std::int64_t pad) {
  BlockOf<V> b(Space::host, rows, cols, cols + pad);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < b.ld(); ++j)
      b.data()[i * b.ld() + j] = static_cast<V>(solver::hash_uniform(seed, i, j));
  return b;
}

// The whole rows, padding included.
template <class V>
BlockOf<V> moved(const dense::Context& ctx, const BlockOf<V>& b, Space to) {
  BlockOf<V> out(to, b.rows(), b.cols(), b.ld());
  solver::copy_block<V>(ctx, dense::ConstDenseView<V>{b.space(), b.rows(), b.ld(), b.ld(), b.data()},
                        dense::DenseView<V>{to, b.rows(), b.ld(), b.ld(), out.data()});
  return out;
}

// Element by element, padding included, to a few roundings of V.
template <class V>
void expect_same(const dense::Context& dev, const BlockOf<V>& device, const BlockOf<V>& host) {
  const BlockOf<V> back = moved(dev, device, Space::host);
  const double eps = std::numeric_limits<V>::epsilon();
  for (std::int64_t i = 0; i < host.rows(); ++i)
    for (std::int64_t j = 0; j < host.ld(); ++j) {
      const double a = back.data()[i * back.ld() + j], b = host.data()[i * host.ld() + j];
      ASSERT_NEAR(a, b, 64 * eps * (1 + std::abs(b))) << "(" << i << ", " << j << ")";
    }
}

// start, step and finish on the device against the host: R and the result
// in T, the recurrence in U.
template <class T, class U>
void check_passes() {
  const dense::Context dev = dense::Context::cuda(0), host = dense::Context::host();
  for (std::int64_t rows : {1, 777, 5000})
    for (std::int64_t cols : {1, 7, 16, 33})
      for (bool diagonals : {false, true})
        for (bool write_q : {false, true}) {
          SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + (diagonals ? ", diagonals" : "") +
                       (write_q ? ", Q written" : ""));
          const std::int64_t pad = cols % 3;
          std::vector<U> d(rows), dinv(rows);
          for (std::int64_t i = 0; i < rows; ++i) {
            d[i] = static_cast<U>(1.5 + solver::hash_uniform(9, i, 0));
            dinv[i] = 1 / d[i];
          }
          dense::Buffer<U> d_dev(Space::device, d), dinv_dev(Space::device, dinv);
          const U* dh = diagonals ? d.data() : nullptr;
          const U* ih = diagonals ? dinv.data() : nullptr;
          const U* dd = diagonals ? d_dev.data() : nullptr;
          const U* id = diagonals ? dinv_dev.data() : nullptr;
          BlockOf<T> R = random_host<T>(rows, cols, 1, pad);
          BlockOf<U> Q = random_host<U>(rows, cols, 2, pad), E = random_host<U>(rows, cols, 3, pad),
                     W = random_host<U>(rows, cols, 4, pad);
          BlockOf<T> Rd = moved(dev, R, Space::device);
          BlockOf<U> Qd = moved(dev, Q, Space::device), Ed = moved(dev, E, Space::device),
                     Wd = moved(dev, W, Space::device);
          solver::chebyshev_start<T, U>(host, U(0.3), ih, R.cview(), Q.view(), E.view(), W.view());
          solver::chebyshev_start<T, U>(dev, U(0.3), id, Rd.cview(), Qd.view(), Ed.view(), Wd.view());
          // Fresh Q for the step, so that write_q shows.
          Q = random_host<U>(rows, cols, 5, pad);
          Qd = moved(dev, Q, Space::device);
          solver::chebyshev_step<U>(host, U(0.7), U(0.4), U(-1.3), dh, ih, write_q, Q.view(), E.view(), W.view());
          solver::chebyshev_step<U>(dev, U(0.7), U(0.4), U(-1.3), dd, id, write_q, Qd.view(), Ed.view(), Wd.view());
          // The last step into a block of T (over NaN, which it must not read).
          BlockOf<T> out(Space::host, rows, cols, cols + pad), out_d(Space::device, rows, cols, cols + pad);
          std::fill(out.data(), out.data() + rows * out.ld(), std::numeric_limits<T>::quiet_NaN());
          dense::fill_bytes(out_d.data(), Space::device, 0xff, sizeof(T) * rows * out.ld());
          solver::chebyshev_finish<T, U>(host, U(0.7), U(0.2), U(0.9), dh, ih, Q.cview(), E.cview(), W.cview(),
                                         out.view());
          solver::chebyshev_finish<T, U>(dev, U(0.7), U(0.2), U(0.9), dd, id, Qd.cview(), Ed.cview(), Wd.cview(),
                                         out_d.view());
          dev.synchronize();
          expect_same(dev, Qd, Q);
          expect_same(dev, Ed, E);
          expect_same(dev, Wd, W);
          BlockOf<T> back = moved(dev, out_d, Space::host);
          for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j) {
              const double a = back.data()[i * back.ld() + j], b = out.data()[i * out.ld() + j];
              ASSERT_NEAR(a, b, 64 * std::numeric_limits<U>::epsilon() * (1 + std::abs(b))) << i << ", " << j;
            }
          if constexpr (std::is_same_v<T, U>) {  // in place: the sum's own block
            solver::chebyshev_finish<T, U>(host, U(0.7), U(0.2), U(0.9), dh, ih, Q.cview(), E.cview(), W.cview(),
                                           W.view());
            solver::chebyshev_finish<T, U>(dev, U(0.7), U(0.2), U(0.9), dd, id, Qd.cview(), Ed.cview(), Wd.cview(),
                                           Wd.view());
            dev.synchronize();
            expect_same(dev, Wd, W);
          }
        }
}

class ChebyshevCuda : public test::GpuTest {};

TEST_F(ChebyshevCuda, PassesMatchTheHost) { check_passes<double, double>(); }

TEST_F(ChebyshevCuda, Fp32PassesMatchTheHost) {
  check_passes<float, float>();
  check_passes<double, float>();  // the fp32 polynomial of an fp64 problem
}

// The whole preconditioner on the device against the host, on operators
// without an fp32 copy (the test operator: fp64 polynomial) and with one (the
// distributed operator: fp64 and fp32 polynomials).
TEST_F(ChebyshevCuda, PreconditionerMatchesTheHost) {
  const io::GeneratorSpec spec{io::GeneratorKind::laplacian_2d, 30, 20, 1, 5};
  const CsrRows whole = io::generate_rows(spec, 0, io::generated_rows(spec));
  const auto partition = solver::RowPartition::uniform(whole.global_rows, 1);
  const dense::Context host = dense::Context::host(), device = dense::Context::cuda(0);
  test::CsrTestOperator<double> Ah(MPI_COMM_WORLD, dense::Context::host(), whole, partition);
  test::CsrTestOperator<double> Ad(MPI_COMM_WORLD, dense::Context::cuda(0), whole, partition);
  solver::DistributedOperator<double> Bh(MPI_COMM_WORLD, host, whole, partition);
  solver::DistributedOperator<double> Bd(MPI_COMM_WORLD, device, whole, partition);
  struct Pair {
    solver::LinearOperator<double>& h;
    solver::LinearOperator<double>& d;
    ChebyshevPrecision precision;
  };
  for (const Pair& pair : {Pair{Ah, Ad, ChebyshevPrecision::automatic}, Pair{Bh, Bd, ChebyshevPrecision::fp64},
                           Pair{Bh, Bd, ChebyshevPrecision::fp32}})
    for (SpectrumEnd end : {SpectrumEnd::smallest, SpectrumEnd::largest})
      for (std::int64_t cols : {12, 1, 7}) {
        solver::ChebyshevOptions o;
        o.degree = 8;
        o.jacobi = true;
        o.end = end;
        o.precision = pair.precision;
        solver::ChebyshevPreconditioner<double> Mh(pair.h, o), Md(pair.d, o);
        const bool single = pair.precision == ChebyshevPrecision::fp32;
        SCOPED_TRACE(std::string(single ? "fp32" : "fp64") + ", " + std::to_string(cols) + " columns");
        EXPECT_EQ(Md.precision(), single ? Precision::fp32 : Precision::fp64);
        EXPECT_NEAR(Mh.interval().b, Md.interval().b, 1e-12 * Mh.interval().b);
        const Block R = random_host(whole.global_rows, cols, 6, 0);
        Block W(Space::host, R.rows(), cols);
        Mh.apply(R.cview(), W.view());
        // On the operator's own context: its stream is the one the preconditioner queues on.
        const dense::Context& on = pair.d.context();
        const Block Rd = moved(on, R, Space::device);
        Block Wd(Space::device, R.rows(), cols);
        Md.apply(Rd.cview(), Wd.view());
        on.synchronize();
        const Block back = moved(on, Wd, Space::host);
        double scale = 0;
        for (std::int64_t i = 0; i < R.rows() * cols; ++i) scale = std::max(scale, std::abs(W.data()[i]));
        // Both sides round in fp32, in different orders: (degree + 1) roundings each.
        const double tolerance = single ? 8 * (o.degree + 1) * std::numeric_limits<float>::epsilon() : 1e-12;
        for (std::int64_t i = 0; i < R.rows() * cols; ++i) ASSERT_NEAR(back.data()[i], W.data()[i], tolerance * scale);
      }
}

}  // namespace
}  // namespace blockeigs
