// A build without CUDA links a stub for every device half (the context and
// the memory, the block operations, the Chebyshev passes, the halo kernels and
// transports, the operator's device split and checks, device selection's
// queries, the device eigensolver): a view that
// says it is in device memory must make them throw NotCompiled ("not compiled
// with CUDA"), naming the operation, never do nothing. The views point at host memory that
// is never read, so that a missing throw fails the test instead of crashing
// it. A build without NCCL links the NCCL halo's stub.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "core/not_compiled.hpp"
#include "dense/context.hpp"
#include "dense/context_backend.hpp"
#include "dense/memory.hpp"
#include "dense/memory_backend.hpp"
#include "solver/blocks/block_ops.hpp"
#include "solver/blocks/cuda/device_cholesky.hpp"
#include "solver/blocks/cuda/device_symmetric_eigen.hpp"
#include "solver/blocks/eigen_solvers.hpp"
#include "solver/lobpcg/lobpcg_detail.hpp"
#include "solver/operator/cuda/device_queries.hpp"
#include "solver/operator/device_selection.hpp"
#include "solver/operator/halo/cuda/halo_pack.hpp"
#include "solver/operator/halo/nccl_halo.hpp"
#include "solver/operator/halo/peer_halo.hpp"
#include "solver/operator/local_blocks.hpp"
#include "solver/operator/replicated_csr.hpp"
#include "solver/operator/symmetry_check_device.hpp"
#include "solver/precond/chebyshev_steps.hpp"
#include "spmm/cuda/device_limits.hpp"
#include "spmm/cuda/device_products.hpp"
#include "spmm/local_spmm.hpp"
#include "tests/support/mpi_environment.hpp"

namespace blockeigs {
namespace {

class BackendStubs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (dense::cuda_compiled()) GTEST_SKIP() << "a CUDA build runs device views on the device";
  }
  // A 4 x 2 block labelled as device memory.
  template <class T>
  dense::DenseView<T> device_view(std::vector<T>& storage) {
    storage.assign(8, T(1));
    return {Space::device, 4, 2, 2, storage.data()};
  }
  const dense::Context context = dense::Context::host();
};

// `call` throws an Error whose message holds `message` and `operation`.
void expect_error(const std::function<void()>& call, const std::string& operation, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << operation << " returned on a device view in a build without CUDA";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(message), std::string::npos) << what;
    EXPECT_NE(what.find(operation), std::string::npos) << what;
  }
}

// `call` throws NotCompiled for CUDA, naming `operation`.
void expect_not_compiled(const std::function<void()>& call, const std::string& operation) {
  try {
    call();
    ADD_FAILURE() << operation << " returned on a device view in a build without CUDA";
  } catch (const NotCompiled& e) {
    EXPECT_EQ(e.backend(), "CUDA") << e.what();
    EXPECT_NE(e.operation().find(operation), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not compiled with CUDA"), std::string::npos) << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << operation << " threw another error than NotCompiled: " << e.what();
  }
}

TEST_F(BackendStubs, ContextAndEventsThrowNotCompiled) {
  expect_error([] { (void)dense::Context::cuda(0); }, "CUDA backend was requested", "built without CUDA");
  // No device context exists without CUDA; the event functions behind one throw all the same.
  namespace backend = dense::cuda_context;
  int token = 0;
  expect_not_compiled([] { (void)backend::create_event(true); }, "Event");
  expect_not_compiled([&] { backend::record_event(&token, nullptr); }, "Event::record");
  expect_not_compiled([&] { backend::synchronize_event(&token); }, "Event::synchronize");
  expect_not_compiled([&] { (void)backend::event_done(&token); }, "Event::done");
  expect_not_compiled([&] { (void)backend::seconds_between(&token, &token); }, "Event::seconds_since");
  // Nor its resources (an incomplete type, which the stubs never read).
  auto& resources = *reinterpret_cast<backend::Resources*>(&token);
  expect_not_compiled([&] { backend::make_current(resources); }, "Context::make_current");
  expect_not_compiled([&] { (void)backend::cublas_handle(resources); }, "Context::cublas_handle");
}

TEST_F(BackendStubs, DeviceMemoryThrows) {
  EXPECT_EQ(dense::cuda_device_count(), 0);
  std::int64_t free = -1, total = -1;
  EXPECT_FALSE(dense::device_memory(&free, &total));
  std::vector<double> host(4, 1.0), other(4, 2.0);
  const std::size_t bytes = host.size() * sizeof(double);
  expect_not_compiled([] { (void)dense::allocate_bytes(Space::device, 8); }, "device memory");
  expect_not_compiled([&] { dense::copy_bytes(other.data(), Space::device, host.data(), Space::host, bytes); },
                      "device memory");
  expect_not_compiled(
      [&] { dense::copy_bytes_async(host.data(), Space::host, other.data(), Space::device, bytes, nullptr); },
      "device memory");
  expect_not_compiled([&] { dense::fill_bytes(other.data(), Space::device, 0xff, bytes); }, "device memory");
  expect_not_compiled([&] { dense::cuda_memory::upload_staged(other.data(), host.data(), bytes, bytes); },
                      "device memory");
  EXPECT_EQ(other, std::vector<double>(4, 2.0));
  expect_not_compiled([] { (void)dense::cuda_memory::allocate_pinned(8); }, "allocate_pinned_bytes");
  // Pinned buffers fall back to plain host memory.
  dense::PinnedBuffer<double> pinned(4);
  EXPECT_NE(pinned.data(), nullptr);
}

TEST_F(BackendStubs, BlockOperationsThrowNotCompiled) {
  std::vector<double> x, y;
  std::vector<float> f;
  const dense::DenseView<double> X = device_view(x), Y = device_view(y);
  const dense::DenseView<float> F = device_view(f);
  const solver::HostMatrix S = solver::HostMatrix::identity(2);
  expect_not_compiled([&] { solver::block_update<double>(context, 1.0, X, S, 0.0, Y); }, "block_update");
  expect_not_compiled([&] { solver::axpby<double>(context, 1.0, X, 0.0, Y); }, "axpby");
  expect_not_compiled([&] { solver::scale_columns<double>(context, {1.0, 2.0}, Y); }, "scale_columns");
  expect_not_compiled([&] { solver::copy_block<double>(context, X, Y); }, "copy_block");
  expect_not_compiled([&] { solver::convert_block<double, float>(context, X, F); }, "convert_block");
  expect_not_compiled([&] { solver::fill_random<double>(context, Y, 7, 0); }, "fill_random");
  expect_not_compiled([&] { solver::keep_columns<double>(context, Y, {1}); }, "keep_columns");
  expect_not_compiled([&] { solver::column_norms<double>(context, MPI_COMM_SELF, X); }, "column_norms");
  expect_not_compiled([&] { solver::gram<double>(context, MPI_COMM_SELF, X); }, "gram");
  // The complex element types' stubs (cuda/block_ops_cuda.hpp's lists expand them all).
  std::vector<std::complex<double>> z;
  std::vector<std::complex<float>> zf;
  const dense::DenseView<std::complex<double>> Z = device_view(z);
  const dense::DenseView<std::complex<float>> ZF = device_view(zf);
  expect_not_compiled([&] { solver::gram<std::complex<double>>(context, MPI_COMM_SELF, Z, Z); }, "gram");
  expect_not_compiled([&] { solver::axpby<std::complex<float>>(context, 1.0f, ZF, 0.0f, ZF); }, "axpby");
}

TEST_F(BackendStubs, ChebyshevPassesThrowNotCompiled) {
  std::vector<double> q, e, w;
  const dense::DenseView<double> Q = device_view(q), E = device_view(e), W = device_view(w);
  const std::vector<double> diag(4, 1.0);
  expect_not_compiled(
      [&] { solver::chebyshev_step<double>(context, 0.5, 1.0, 1.0, diag.data(), diag.data(), true, Q, E, W); },
      "chebyshev_step");
  // The passes that change precision, and those in fp32 (chebyshev_steps_cuda.hpp's lists).
  std::vector<float> qf, ef, wf;
  const dense::DenseView<float> QF = device_view(qf), EF = device_view(ef), WF = device_view(wf);
  const std::vector<float> diagf(4, 1.0f);
  expect_not_compiled([&] { solver::chebyshev_start<double, float>(context, 1.0f, diagf.data(), Q, QF, EF, WF); },
                      "chebyshev_start");
  expect_not_compiled(
      [&] {
        solver::chebyshev_finish<double, float>(context, 0.5f, 1.0f, 1.0f, diagf.data(), diagf.data(), QF, EF, WF, W);
      },
      "chebyshev_finish");
  expect_not_compiled(
      [&] { solver::chebyshev_step<float>(context, 0.5f, 1.0f, 1.0f, diagf.data(), diagf.data(), true, QF, EF, WF); },
      "chebyshev_step");
}

// No device context exists without CUDA: the device halves behind the
// products and the halo exchange are called directly.
TEST_F(BackendStubs, DeviceProductsAndHaloKernelsThrowNotCompiled) {
  const std::vector<std::int32_t> offsets = {0, 1, 2, 3, 4}, columns = {0, 1, 2, 3};
  const std::vector<double> values(4, 1.0);
  const spmm::CsrView<double> A{Space::device, 4, 4, 4, offsets.data(), columns.data(), values.data()};
  std::vector<double> c, bd(8, 1.0);
  std::vector<float> b(8, 1.0f);
  const dense::DenseView<double> C = device_view(c);
  const dense::ConstDenseView<float> B{Space::device, 4, 2, 2, b.data()};
  expect_not_compiled([&] { spmm::cuda::multiply_single_input(context, A, B, C, false); }, "multiply_single_input");
  const dense::ColumnMajorView<const double> Bc{Space::device, 4, 2, 4, bd.data()};
  const dense::ColumnMajorView<double> Cc{Space::device, 4, 2, 4, c.data()};
  expect_not_compiled([&] { spmm::cuda::multiply_column_major(context, A, 1.0, Bc, 0.0, Cc); },
                      "multiply_column_major");
  std::vector<double> out(8, 0.0);
  const std::vector<std::int32_t> rows = {0, 2};
  expect_not_compiled([&] { solver::cuda::pack_rows(c.data(), 2, 1, 2, rows.data(), 2, out.data(), 2, nullptr); },
                      "pack_rows");
  expect_not_compiled([&] { solver::cuda::scatter_add_rows(out.data(), 2, rows.data(), 2, c.data(), 2, 1, nullptr); },
                      "scatter_add_rows");
  EXPECT_EQ(out, std::vector<double>(8, 0.0));
}

// The device kernels a Plan builds, and what its choice reads of the device.
TEST_F(BackendStubs, PlanDeviceKernelsThrowNotCompiled) {
  const std::vector<std::int32_t> offsets = {0, 1, 2, 3, 4}, columns = {0, 1, 2, 3};
  const std::vector<double> values(4, 1.0);
  const spmm::CsrView<double> A{Space::device, 4, 4, 4, offsets.data(), columns.data(), values.data()};
  expect_not_compiled([&] { (void)spmm::make_cusparse_spmm(context, A); }, "make_cusparse_spmm");
  expect_not_compiled([&] { (void)spmm::make_row_split_spmm(context, A); }, "make_row_split_spmm");
  expect_not_compiled([&] { (void)spmm::make_merge_based_spmm(context, A); }, "make_merge_based_spmm");
  expect_not_compiled([&] { (void)spmm::cuda::row_shape(offsets.data(), 4, 4, 4); }, "row_shape");
  expect_not_compiled([] { (void)spmm::cuda::device_limits(0); }, "device_limits");
}

// The distributed operator's device passes: its split, its diagonal's twins, the replicated matrix's checks
// and the symmetry check's lookups.
TEST_F(BackendStubs, OperatorDevicePassesThrowNotCompiled) {
  const solver::ReplicatedCsr replicated{Space::device};
  const CsrRows rows;
  expect_not_compiled([&] { (void)solver::split_local_rows_on_device<float>(context, rows); },
                      "split_local_rows_on_device");
  expect_not_compiled([&] { (void)solver::split_replicated_on_device<std::complex<double>>(context, replicated); },
                      "split_replicated_on_device");
  const std::vector<std::int32_t> offsets = {0, 1, 2, 3, 4}, columns = {0, 1, 2, 3};
  std::vector<std::complex<double>> values(4, 1.0);
  const spmm::CsrView<std::complex<double>> A{Space::device, 4, 4, 4, offsets.data(), columns.data(), values.data()};
  std::vector<std::int64_t> positions(4, 0);
  expect_not_compiled([&] { (void)solver::find_diagonal_positions(context, A, positions.data()); },
                      "find_diagonal_positions");
  expect_not_compiled(
      [&] { solver::cuda::set_shifted_diagonal(context, values.data(), positions.data(), values.data(), {1.0}, 4); },
      "set_shifted_diagonal");
  expect_not_compiled([&] { (void)solver::find_offsets_problem_on_device(replicated, context); },
                      "find_offsets_problem_on_device");
  expect_not_compiled(
      [&] { (void)solver::find_hermitian_problem_on_device(replicated, solver::HermitianPart::real, context); },
      "find_hermitian_problem_on_device");
  EXPECT_FALSE(solver::DeviceSymmetryRows::fits(rows, 0));
  expect_not_compiled([&] { solver::DeviceSymmetryRows lookups(context, rows); }, "DeviceSymmetryRows");
}

// Device selection asks CUDA for a GPU's PCI bus id only on a device
// context; MPI is never handed device pointers without CUDA.
TEST_F(BackendStubs, DeviceQueriesThrowNotCompiled) {
  expect_not_compiled([] { (void)solver::cuda::pci_bus_id(0); }, "pci_bus_id");
  EXPECT_FALSE(solver::cuda::mpi_supports_cuda());
  EXPECT_FALSE(solver::mpi_is_cuda_aware());
  EXPECT_TRUE(solver::mpi_is_cuda_aware(true));
  EXPECT_FALSE(solver::ranks_share_a_device(MPI_COMM_SELF, context));
}

// CUDA IPC needs a device context, which a build without CUDA never has.
TEST_F(BackendStubs, PeerHaloNeverStarts) {
  EXPECT_EQ(solver::PeerHalo<double>::create(MPI_COMM_SELF, context, solver::HaloPlan{}, true), nullptr);
  EXPECT_EQ(solver::PeerHalo<float>::create(MPI_COMM_SELF, context, solver::HaloPlan{}, true), nullptr);
}

// LOBPCG's Rayleigh-Ritz takes the host's eigensolver; the device's says it is not compiled.
TEST_F(BackendStubs, DeviceEigensolverThrowsNotCompiled) {
  EXPECT_FALSE(solver::lobpcg_detail::ritz_eigen_solver(context, 10 * solver::device_eigen_min_rows));
  expect_not_compiled([&] { solver::DeviceSymmetricEigen eigen(context); }, "DeviceSymmetricEigen");
}

// CholQR's factor takes LAPACK on a host context at any size; the device's says it is not compiled.
TEST_F(BackendStubs, DeviceCholeskyThrowsNotCompiled) {
  const solver::CholeskyInverse factor =
      solver::cholesky_inverse_solver(context, 10 * solver::device_cholesky_min_rows);
  solver::HostMatrix inverse;
  EXPECT_TRUE(factor(solver::HostMatrix::identity(3), inverse));
  expect_not_compiled([&] { solver::DeviceCholeskyInverse device(context); }, "DeviceCholeskyInverse");
}

// Without NCCL (a CPU build, or a CUDA build without it) the NCCL halo does
// not start and says why, for the fallback's note.
TEST(NcclStub, NcclHaloSaysItIsNotCompiled) {
  if (solver::nccl_compiled()) GTEST_SKIP() << "this build has NCCL";
  const dense::Context context = dense::Context::host();
  std::string why;
  EXPECT_EQ(solver::NcclHalo<double>::create(MPI_COMM_SELF, context, solver::HaloPlan{}, why), nullptr);
  EXPECT_NE(why.find("not compiled with NCCL"), std::string::npos) << why;
  EXPECT_NE(why.find("BLOCKEIGS_NCCL"), std::string::npos) << why;
}

}  // namespace
}  // namespace blockeigs
