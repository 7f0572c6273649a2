// petsc_device.hpp where PETSc has CUDA and our CUDA backend is built:
// PETSc's arrays are asked for with their memory type, so that VECCUDA and
// MATDENSECUDA data reach the device operator in place, and the two streams
// (PETSc's current device context's and the operator's) are ordered by an
// event each way, with no host waits.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <petscdevice.h>
#include <petsclog.h>

#include <complex>

#include "core/cuda_checks.hpp"
#include "core/error.hpp"
#include "solver/petsc/petsc_device.hpp"
#include "solver/petsc/petsc_operator.hpp"

#if !defined(PETSC_HAVE_CUDA)
#error "petsc_device_cuda.cpp needs a PETSc with CUDA (CMake picks petsc_device_host.cpp otherwise)"
#endif

namespace blockeigs::solver {

bool petsc_device_arrays() { return true; }
PetscCopyCounts petsc_copy_counts() { return {petsc_ctog_ct, petsc_gtoc_ct}; }

namespace petsc_device {
namespace {

Space space_of(PetscMemType type) { return PetscMemTypeDevice(type) ? Space::device : Space::host; }

void check(PetscErrorCode code, const char* call) {
  if (code != PETSC_SUCCESS)
    throw LibraryError(detail::concat(call, " failed with PETSc error ", static_cast<int>(code)));
}

// PETSc's current device context, and whether it is a CUDA one.
PetscDeviceContext petsc_context(bool* cuda) {
  PetscDeviceContext dctx = nullptr;
  PetscDeviceType type = PETSC_DEVICE_HOST;
  check(PetscDeviceContextGetCurrentContext(&dctx), "PetscDeviceContextGetCurrentContext");
  check(PetscDeviceContextGetDeviceType(dctx, &type), "PetscDeviceContextGetDeviceType");
  *cuda = type == PETSC_DEVICE_CUDA;
  return dctx;
}

// The CUDA stream of PETSc's current device context (null: the legacy default
// stream, PETSc's default), or false where that context is not a CUDA one.
bool petsc_stream(cudaStream_t* stream) {
  bool cuda = false;
  PetscDeviceContext dctx = petsc_context(&cuda);
  if (!cuda) return false;
  void* handle = nullptr;
  check(PetscDeviceContextGetStreamHandle(dctx, &handle), "PetscDeviceContextGetStreamHandle");
  *stream = handle ? *static_cast<cudaStream_t*>(handle) : nullptr;
  return true;
}

// One event per thread for the ordering, made on first use and kept.
cudaEvent_t ordering_event() {
  thread_local cudaEvent_t event = [] {
    cudaEvent_t e = nullptr;
    BLOCKEIGS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }();
  return event;
}

void order(cudaStream_t first, cudaStream_t then) {
  if (first == then) return;
  cudaEvent_t event = ordering_event();
  BLOCKEIGS_CUDA_CHECK(cudaEventRecord(event, first));
  BLOCKEIGS_CUDA_CHECK(cudaStreamWaitEvent(then, event, 0));
}

// cuBLAS's geam: c (m x n) = 1 * a^T + 0 * c, a plain transpose (no conjugate); with beta 0, c is not read.
[[maybe_unused]] void transpose_with_geam(cublasHandle_t handle, int m, int n, const double* a, int lda, double* c,
                                          int ldc) {
  const double one = 1.0, zero = 0.0;
  BLOCKEIGS_CUBLAS_CHECK(cublasDgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a, lda, &zero, c, ldc, c, ldc));
}
[[maybe_unused]] void transpose_with_geam(cublasHandle_t handle, int m, int n, const std::complex<double>* a, int lda,
                                          std::complex<double>* c, int ldc) {
  const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};
  auto* out = reinterpret_cast<cuDoubleComplex*>(c);
  BLOCKEIGS_CUBLAS_CHECK(cublasZgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one,
                                     reinterpret_cast<const cuDoubleComplex*>(a), lda, &zero, out, ldc, out, ldc));
}

}  // namespace

PetscErrorCode get_read(Vec v, const PetscScalar** array, Space* space) {
  PetscMemType type = PETSC_MEMTYPE_HOST;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayReadAndMemType(v, array, &type));
  *space = space_of(type);
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode restore_read(Vec v, const PetscScalar** array) { return VecRestoreArrayReadAndMemType(v, array); }
PetscErrorCode get_write(Vec v, PetscScalar** array, Space* space) {
  PetscMemType type = PETSC_MEMTYPE_HOST;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayWriteAndMemType(v, array, &type));
  *space = space_of(type);
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode restore_write(Vec v, PetscScalar** array) { return VecRestoreArrayWriteAndMemType(v, array); }

PetscErrorCode dense_get_read(Mat m, const PetscScalar** array, Space* space) {
  PetscMemType type = PETSC_MEMTYPE_HOST;
  PetscFunctionBeginUser;
  PetscCall(MatDenseGetArrayReadAndMemType(m, array, &type));
  *space = space_of(type);
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode dense_restore_read(Mat m, const PetscScalar** array) {
  return MatDenseRestoreArrayReadAndMemType(m, array);
}
PetscErrorCode dense_get_write(Mat m, PetscScalar** array, Space* space) {
  PetscMemType type = PETSC_MEMTYPE_HOST;
  PetscFunctionBeginUser;
  PetscCall(MatDenseGetArrayWriteAndMemType(m, array, &type));
  *space = space_of(type);
  PetscFunctionReturn(PETSC_SUCCESS);
}
PetscErrorCode dense_restore_write(Mat m, PetscScalar** array) { return MatDenseRestoreArrayWriteAndMemType(m, array); }

void wait_for_petsc(const dense::Context& context) {
  cudaStream_t petsc = nullptr;
  if (context.space() != Space::device || !petsc_stream(&petsc)) return;
  order(petsc, static_cast<cudaStream_t>(context.stream()));
}

void petsc_waits_for(const dense::Context& context) {
  cudaStream_t petsc = nullptr;
  if (context.space() != Space::device || !petsc_stream(&petsc)) return;
  order(static_cast<cudaStream_t>(context.stream()), petsc);
}

PetscErrorCode make_device_resident(Mat A, const dense::Context& context, ProductNumeric numeric) {
  PetscFunctionBeginUser;
  if (context.space() != Space::device) PetscFunctionReturn(PETSC_SUCCESS);
  // PETSc's arrays must be on the operator's device: PETSc picks rank % devices
  // unless told (-device_select), our device selection the node-local rank.
  PetscDeviceContext dctx = nullptr;
  PetscDevice device = nullptr;
  PetscInt id = -1;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDevice(dctx, &device));
  PetscCall(PetscDeviceGetDeviceId(device, &id));
  PetscCheck(id == context.device(), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "block-eigs operator: PETSc's CUDA device is %d, the operator's %d: select the operator's device for "
             "PETSc (-device_select %d)",
             static_cast<int>(id), context.device(), context.device());
  PetscCall(MatShellSetVecType(A, VECCUDA));
  PetscCall(MatShellSetMatProductOperation(A, MATPRODUCT_AB, nullptr, numeric, nullptr, MATDENSECUDA, MATDENSECUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void transpose(const dense::Context& context, std::int64_t rows, std::int64_t cols, const PetscScalar* src,
               std::int64_t ld_src, PetscScalar* dst, std::int64_t ld_dst) {
  if (rows == 0 || cols == 0) return;
  transpose_with_geam(static_cast<cublasHandle_t>(context.cublas_handle()), static_cast<int>(cols),
                      static_cast<int>(rows), src, static_cast<int>(ld_src), dst, static_cast<int>(ld_dst));
}

}  // namespace petsc_device
}  // namespace blockeigs::solver
