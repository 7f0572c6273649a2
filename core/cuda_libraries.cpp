#include "core/cuda_libraries.hpp"

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <dlfcn.h>

#include <atomic>
#include <future>
#include <mutex>

#include "core/error.hpp"

// The functions the code calls, by library. A call to one that is not listed
// here fails to link (the libraries are not linked), so the list is complete.
// clang-format off
#define BLOCKEIGS_CUBLAS_FUNCTIONS(X)                                                        \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetPointerMode_v2)    \
  X(cublasDgemm_v2) X(cublasSgemm_v2) X(cublasDgemmStridedBatched) X(cublasSgemmStridedBatched) \
  X(cublasZgemm_v2) X(cublasCgemm_v2) X(cublasZgemmStridedBatched) X(cublasCgemmStridedBatched) \
  X(cublasDgeam) X(cublasGetStatusString)
#define BLOCKEIGS_CUSPARSE_FUNCTIONS(X)                                                      \
  X(cusparseCreate) X(cusparseDestroy) X(cusparseSetStream) X(cusparseCreateCsr)             \
  X(cusparseDestroySpMat) X(cusparseCreateDnMat) X(cusparseDestroyDnMat)                     \
  X(cusparseSpMM_bufferSize) X(cusparseSpMM_preprocess) X(cusparseSpMM) X(cusparseGetErrorString)
#define BLOCKEIGS_CUSOLVER_FUNCTIONS(X)                                                      \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream)                            \
  X(cusolverDnDsyevd_bufferSize) X(cusolverDnDsyevd) X(cusolverDnDpotrf_bufferSize) X(cusolverDnDpotrf)     \
  X(cusolverDnZheevd_bufferSize) X(cusolverDnZheevd) X(cusolverDnZpotrf_bufferSize) X(cusolverDnZpotrf)     \
  X(cusolverDnXtrtri_bufferSize) X(cusolverDnXtrtri)
// clang-format on

#define BLOCKEIGS_STRINGIFY_(x) #x
#define BLOCKEIGS_STRINGIFY(x) BLOCKEIGS_STRINGIFY_(x)

namespace blockeigs::cuda_libraries {
namespace {

#define BLOCKEIGS_POINTER(name) decltype(&::name) name = nullptr;
struct Table {
  BLOCKEIGS_CUBLAS_FUNCTIONS(BLOCKEIGS_POINTER)
  BLOCKEIGS_CUSPARSE_FUNCTIONS(BLOCKEIGS_POINTER)
  BLOCKEIGS_CUSOLVER_FUNCTIONS(BLOCKEIGS_POINTER)
};
#undef BLOCKEIGS_POINTER

template <class F>
void resolve(void* library, const std::string& soname, const char* name, F& pointer) {
  pointer = reinterpret_cast<F>(dlsym(library, name));
  if (!pointer) throw LibraryError(detail::concat(soname, " has no function ", name, " (a different CUDA version?)"));
}

std::string soname(const char* stem, const char* major) { return detail::concat("lib", stem, ".so.", major); }

// The libraries opened and their functions resolved; "" or the problem.
std::string open_all(Table& t) {
  try {
    std::string name;
    void* library = nullptr;
    const auto open_library = [&](const char* what, const char* stem, const char* major) {
      name = soname(stem, major);
      library = open_first(what, candidates(name));
    };
#define BLOCKEIGS_RESOLVE(function) resolve(library, name, #function, t.function);
    open_library("cuBLAS", "cublas", BLOCKEIGS_STRINGIFY(CUBLAS_VER_MAJOR));
    BLOCKEIGS_CUBLAS_FUNCTIONS(BLOCKEIGS_RESOLVE)
    open_library("cuSPARSE", "cusparse", BLOCKEIGS_STRINGIFY(CUSPARSE_VER_MAJOR));
    BLOCKEIGS_CUSPARSE_FUNCTIONS(BLOCKEIGS_RESOLVE)
    open_library("cuSOLVER", "cusolver", BLOCKEIGS_STRINGIFY(CUSOLVER_VER_MAJOR));
    BLOCKEIGS_CUSOLVER_FUNCTIONS(BLOCKEIGS_RESOLVE)
#undef BLOCKEIGS_RESOLVE
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

struct State {
  std::once_flag started;
  std::shared_future<std::string> problem;  // "" once every library is open
  Table table;
  std::atomic<const Table*> ready{nullptr};
};

State& state() {
  static State s;
  return s;
}

// The table; opens the libraries on the calling thread where nothing began
// to, and throws where they could not be opened.
const Table& table() {
  State& s = state();
  if (const Table* t = s.ready.load(std::memory_order_acquire)) return *t;
  require();
  return s.table;
}

// The table where the libraries are open, else null (for calls that must not
// throw: status strings and the destruction of what was made through them).
const Table* table_if_open() { return state().ready.load(std::memory_order_acquire); }

// A call that must not throw: `fallback` where the libraries are not open.
template <auto Function, class R, class... Args>
R call_if_open(R fallback, Args... args) {
  const Table* t = table_if_open();
  return t ? (t->*Function)(args...) : fallback;
}

}  // namespace

void start_loading() {
  State& s = state();
  std::call_once(s.started, [&s] {
    s.problem = std::async(std::launch::async, [&s] {
                  std::string problem = open_all(s.table);
                  if (problem.empty()) s.ready.store(&s.table, std::memory_order_release);
                  return problem;
                }).share();
  });
}

void require() {
  start_loading();
  const std::shared_future<std::string> problem = state().problem;  // a copy of its own for this thread
  if (!problem.get().empty()) throw LibraryError(problem.get());
}

bool opened() { return table_if_open() != nullptr; }

std::vector<std::string> candidates(const std::string& soname) {
  return {std::string(BLOCKEIGS_CUDA_LIBRARY_DIR) + "/" + soname, soname};
}

void* open_first(const std::string& library, const std::vector<std::string>& files) {
  std::string tried;
  for (const std::string& file : files) {
    if (void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = dlerror();
    tried += detail::concat(tried.empty() ? "" : "; ", why ? why : file + ": not opened");
  }
  throw LibraryError(detail::concat("cannot open the CUDA library ", library, " (", tried,
                                    "); set LD_LIBRARY_PATH to the CUDA toolkit's lib folder"));
}

}  // namespace blockeigs::cuda_libraries

// The forwarders: the libraries' own signatures (a mismatch with the headers
// does not compile), hidden so that only this build's code calls them.
namespace {
using blockeigs::cuda_libraries::call_if_open;
using blockeigs::cuda_libraries::table;
using blockeigs::cuda_libraries::Table;
}  // namespace

#define BLOCKEIGS_FORWARDER extern "C" __attribute__((visibility("hidden")))

// cuBLAS
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  return table().cublasCreate_v2(handle);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  return call_if_open<&Table::cublasDestroy_v2>(CUBLAS_STATUS_NOT_INITIALIZED, handle);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return table().cublasSetStream_v2(handle, stream);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                                        cublasPointerMode_t mode) {
  return table().cublasSetPointerMode_v2(handle, mode);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                               cublasOperation_t transb, int m, int n, int k,
                                                               const double* alpha, const double* A, int lda,
                                                               const double* B, int ldb, const double* beta, double* C,
                                                               int ldc) {
  return table().cublasDgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                               cublasOperation_t transb, int m, int n, int k,
                                                               const float* alpha, const float* A, int lda,
                                                               const float* B, int ldb, const float* beta, float* C,
                                                               int ldc) {
  return table().cublasSgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasDgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const double* alpha,
    const double* A, int lda, long long int strideA, const double* B, int ldb, long long int strideB,
    const double* beta, double* C, int ldc, long long int strideC, int batchCount) {
  return table().cublasDgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                           beta, C, ldc, strideC, batchCount);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const float* alpha,
    const float* A, int lda, long long int strideA, const float* B, int ldb, long long int strideB, const float* beta,
    float* C, int ldc, long long int strideC, int batchCount) {
  return table().cublasSgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                           beta, C, ldc, strideC, batchCount);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasZgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                               cublasOperation_t transb, int m, int n, int k,
                                                               const cuDoubleComplex* alpha, const cuDoubleComplex* A,
                                                               int lda, const cuDoubleComplex* B, int ldb,
                                                               const cuDoubleComplex* beta, cuDoubleComplex* C,
                                                               int ldc) {
  return table().cublasZgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasCgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                                               cublasOperation_t transb, int m, int n, int k,
                                                               const cuComplex* alpha, const cuComplex* A, int lda,
                                                               const cuComplex* B, int ldb, const cuComplex* beta,
                                                               cuComplex* C, int ldc) {
  return table().cublasCgemm_v2(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI
cublasZgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                          int k, const cuDoubleComplex* alpha, const cuDoubleComplex* A, int lda, long long int strideA,
                          const cuDoubleComplex* B, int ldb, long long int strideB, const cuDoubleComplex* beta,
                          cuDoubleComplex* C, int ldc, long long int strideC, int batchCount) {
  return table().cublasZgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                           beta, C, ldc, strideC, batchCount);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasCgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const cuComplex* alpha, const cuComplex* A, int lda, long long int strideA, const cuComplex* B, int ldb,
    long long int strideB, const cuComplex* beta, cuComplex* C, int ldc, long long int strideC, int batchCount) {
  return table().cublasCgemmStridedBatched(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                                           beta, C, ldc, strideC, batchCount);
}
BLOCKEIGS_FORWARDER cublasStatus_t CUBLASWINAPI cublasDgeam(cublasHandle_t handle, cublasOperation_t transa,
                                                            cublasOperation_t transb, int m, int n, const double* alpha,
                                                            const double* A, int lda, const double* beta,
                                                            const double* B, int ldb, double* C, int ldc) {
  return table().cublasDgeam(handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
BLOCKEIGS_FORWARDER const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  return call_if_open<&Table::cublasGetStatusString>("(cuBLAS is not open: no status text)", status);
}

// cuSPARSE
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseCreate(cusparseHandle_t* handle) {
  return table().cusparseCreate(handle);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseDestroy(cusparseHandle_t handle) {
  return call_if_open<&Table::cusparseDestroy>(CUSPARSE_STATUS_NOT_INITIALIZED, handle);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseSetStream(cusparseHandle_t handle, cudaStream_t stream) {
  return table().cusparseSetStream(handle, stream);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI
cusparseCreateCsr(cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* csrRowOffsets,
                  void* csrColInd, void* csrValues, cusparseIndexType_t csrRowOffsetsType,
                  cusparseIndexType_t csrColIndType, cusparseIndexBase_t idxBase, cudaDataType valueType) {
  return table().cusparseCreateCsr(spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues, csrRowOffsetsType,
                                   csrColIndType, idxBase, valueType);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseDestroySpMat(cusparseConstSpMatDescr_t spMatDescr) {
  return call_if_open<&Table::cusparseDestroySpMat>(CUSPARSE_STATUS_NOT_INITIALIZED, spMatDescr);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseCreateDnMat(cusparseDnMatDescr_t* dnMatDescr, int64_t rows,
                                                                     int64_t cols, int64_t ld, void* values,
                                                                     cudaDataType valueType, cusparseOrder_t order) {
  return table().cusparseCreateDnMat(dnMatDescr, rows, cols, ld, values, valueType, order);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseDestroyDnMat(cusparseConstDnMatDescr_t dnMatDescr) {
  return call_if_open<&Table::cusparseDestroyDnMat>(CUSPARSE_STATUS_NOT_INITIALIZED, dnMatDescr);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseSpMM_bufferSize(
    cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
    cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
    cudaDataType computeType, cusparseSpMMAlg_t alg, size_t* bufferSize) {
  return table().cusparseSpMM_bufferSize(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, bufferSize);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseSpMM_preprocess(
    cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
    cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta, cusparseDnMatDescr_t matC,
    cudaDataType computeType, cusparseSpMMAlg_t alg, void* externalBuffer) {
  return table().cusparseSpMM_preprocess(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
                                         externalBuffer);
}
BLOCKEIGS_FORWARDER cusparseStatus_t CUSPARSEAPI cusparseSpMM(cusparseHandle_t handle, cusparseOperation_t opA,
                                                              cusparseOperation_t opB, const void* alpha,
                                                              cusparseConstSpMatDescr_t matA,
                                                              cusparseConstDnMatDescr_t matB, const void* beta,
                                                              cusparseDnMatDescr_t matC, cudaDataType computeType,
                                                              cusparseSpMMAlg_t alg, void* externalBuffer) {
  return table().cusparseSpMM(handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer);
}
BLOCKEIGS_FORWARDER const char* CUSPARSEAPI cusparseGetErrorString(cusparseStatus_t status) {
  return call_if_open<&Table::cusparseGetErrorString>("(cuSPARSE is not open: no status text)", status);
}

// cuSOLVER
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnCreate(cusolverDnHandle_t* handle) {
  return table().cusolverDnCreate(handle);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnDestroy(cusolverDnHandle_t handle) {
  return call_if_open<&Table::cusolverDnDestroy>(CUSOLVER_STATUS_NOT_INITIALIZED, handle);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
  return table().cusolverDnSetStream(handle, stream);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnDsyevd_bufferSize(cusolverDnHandle_t handle,
                                                                             cusolverEigMode_t jobz,
                                                                             cublasFillMode_t uplo, int n,
                                                                             const double* A, int lda, const double* W,
                                                                             int* lwork) {
  return table().cusolverDnDsyevd_bufferSize(handle, jobz, uplo, n, A, lda, W, lwork);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnDsyevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz,
                                                                  cublasFillMode_t uplo, int n, double* A, int lda,
                                                                  double* W, double* work, int lwork, int* info) {
  return table().cusolverDnDsyevd(handle, jobz, uplo, n, A, lda, W, work, lwork, info);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnDpotrf_bufferSize(cusolverDnHandle_t handle,
                                                                             cublasFillMode_t uplo, int n, double* A,
                                                                             int lda, int* lwork) {
  return table().cusolverDnDpotrf_bufferSize(handle, uplo, n, A, lda, lwork);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnDpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                                                                  int n, double* A, int lda, double* work, int lwork,
                                                                  int* info) {
  return table().cusolverDnDpotrf(handle, uplo, n, A, lda, work, lwork, info);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnZheevd_bufferSize(cusolverDnHandle_t handle,
                                                                             cusolverEigMode_t jobz,
                                                                             cublasFillMode_t uplo, int n,
                                                                             const cuDoubleComplex* A, int lda,
                                                                             const double* W, int* lwork) {
  return table().cusolverDnZheevd_bufferSize(handle, jobz, uplo, n, A, lda, W, lwork);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnZheevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz,
                                                                  cublasFillMode_t uplo, int n, cuDoubleComplex* A,
                                                                  int lda, double* W, cuDoubleComplex* work, int lwork,
                                                                  int* info) {
  return table().cusolverDnZheevd(handle, jobz, uplo, n, A, lda, W, work, lwork, info);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnZpotrf_bufferSize(cusolverDnHandle_t handle,
                                                                             cublasFillMode_t uplo, int n,
                                                                             cuDoubleComplex* A, int lda, int* lwork) {
  return table().cusolverDnZpotrf_bufferSize(handle, uplo, n, A, lda, lwork);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnZpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                                                                  int n, cuDoubleComplex* A, int lda,
                                                                  cuDoubleComplex* work, int lwork, int* info) {
  return table().cusolverDnZpotrf(handle, uplo, n, A, lda, work, lwork, info);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnXtrtri_bufferSize(cusolverDnHandle_t handle,
                                                                             cublasFillMode_t uplo,
                                                                             cublasDiagType_t diag, int64_t n,
                                                                             cudaDataType type, void* A, int64_t lda,
                                                                             size_t* device_bytes, size_t* host_bytes) {
  return table().cusolverDnXtrtri_bufferSize(handle, uplo, diag, n, type, A, lda, device_bytes, host_bytes);
}
BLOCKEIGS_FORWARDER cusolverStatus_t CUSOLVERAPI cusolverDnXtrtri(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                                                                  cublasDiagType_t diag, int64_t n, cudaDataType type,
                                                                  void* A, int64_t lda, void* device_work,
                                                                  size_t device_bytes, void* host_work,
                                                                  size_t host_bytes, int* info) {
  return table().cusolverDnXtrtri(handle, uplo, diag, n, type, A, lda, device_work, device_bytes, host_work, host_bytes,
                                  info);
}
