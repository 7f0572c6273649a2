#include "solver/operator/device_selection.hpp"

#include <cblas.h>
#include <omp.h>
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <array>
#include <cstdlib>
#include <thread>
#include <vector>
#include <optional>
#include <string>

#ifdef BLOCKEIGS_HAVE_CUDA
#include <cuda_runtime.h>

#include "core/cuda_checks.hpp"
#endif

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "core/checks.hpp"
#include "core/env_overrides.hpp"
#include "core/error.hpp"
#include "solver/operator/collective.hpp"
#include "spmm/memory.hpp"

namespace blockeigs::solver {

namespace {

// The ranks of comm that share this node's memory; freed on leaving scope.
class NodeComm {
 public:
  explicit NodeComm(MPI_Comm comm) {
    BLOCKEIGS_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_));
    use_errors_return(node_);
  }
  NodeComm(const NodeComm&) = delete;
  NodeComm& operator=(const NodeComm&) = delete;
  ~NodeComm() { BLOCKEIGS_MPI_CHECK_NOTHROW(MPI_Comm_free(&node_)); }
  int rank() const {
    int rank = 0;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_rank(node_, &rank));
    return rank;
  }
  int size() const {
    int size = 1;
    BLOCKEIGS_MPI_CHECK(MPI_Comm_size(node_, &size));
    return size;
  }
  MPI_Comm get() const { return node_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace

int node_local_rank(MPI_Comm comm) { return NodeComm(comm).rank(); }

int allowed_cpus() {
#ifdef __linux__
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) return CPU_COUNT(&mask);
#endif
  return 0;
}

namespace {

// The CPUs the node's ranks may run on together (the union of their affinity
// masks: the node's cores, or a container's share of them); the hardware's
// count where the masks are unknown. Collective over the node.
int node_cpus(const NodeComm& node) {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
#ifdef __linux__
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int known = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? 1 : 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &known, 1, MPI_INT, MPI_MIN, node.get()));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &mask, sizeof(mask), MPI_BYTE, MPI_BOR, node.get()));
  if (known) cpus = CPU_COUNT(&mask);
#else
  (void)node;
#endif
  return cpus;
}

}  // namespace

int cpu_threads_per_rank(int hardware, int local_ranks, int allowed) {
  int threads = std::max(1, hardware) / std::max(1, local_ranks);
  if (allowed > 0) threads = std::min(threads, allowed);
  return std::max(1, threads);
}

namespace {

// A thread count from the environment: its first entry where positive, else 0 (unset).
int threads_from(const char* value) {
  if (!value) return 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  const bool whole = end != value && (*end == '\0' || *end == ',');
  return whole && n > 0 && n <= 1 << 20 ? static_cast<int>(n) : 0;
}

const char* text_or_null(const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; }

CpuThreads& chosen_threads() {
  static CpuThreads chosen;
  return chosen;
}

}  // namespace

CpuThreads choose_cpu_threads(int cores, int local_ranks, int allowed, const char* omp_num_threads,
                              const char* openblas_num_threads) {
  CpuThreads t;
  t.cores = cores, t.local_ranks = local_ranks, t.allowed = allowed;
  const int share = cpu_threads_per_rank(cores, local_ranks, allowed);
  const int omp = threads_from(omp_num_threads), blas = threads_from(openblas_num_threads);
  t.openmp = omp > 0 ? omp : share;
  t.openmp_source = omp > 0 ? ThreadSource::omp_num_threads : ThreadSource::share;
  t.openblas = blas > 0 ? blas : omp > 0 ? omp : share;
  t.openblas_source = blas > 0  ? ThreadSource::openblas_num_threads
                      : omp > 0 ? ThreadSource::omp_num_threads
                                : ThreadSource::share;
  return t;
}

const CpuThreads& cpu_threads() { return chosen_threads(); }

namespace {

// Ranks on one node share its cores (the CPUs their affinity masks allow
// together): each rank's OpenMP and OpenBLAS threads get cores / local
// ranks, so that several ranks do not oversubscribe the
// machine (measured: 2 ranks on 2 cores ran block CG 7x slower with each
// using every core), and no more than the cores the rank may use: Open MPI
// binds each of one or two ranks to a single core by default (48^3 LOBPCG,
// 1 rank bound on a 2-core machine: 17.0-18.6 s with 2 threads, 14.2-14.7 s
// with 1). A user's OMP_NUM_THREADS or OPENBLAS_NUM_THREADS wins.
void share_cores(MPI_Comm comm) {
  const NodeComm node(comm);
  CpuThreads& t = chosen_threads();
  const env::Environment& e = env::environment();
  t = choose_cpu_threads(node_cpus(node), node.size(), allowed_cpus(), text_or_null(e.omp_num_threads),
                         text_or_null(e.openblas_num_threads));
  if (t.openmp_source == ThreadSource::share) omp_set_num_threads(t.openmp);
  if (t.openblas_source == ThreadSource::share) openblas_set_num_threads(t.openblas);
  t.hardware = static_cast<int>(std::thread::hardware_concurrency());
  t.openmp = omp_get_max_threads();
  t.openblas = openblas_get_num_threads();
}

}  // namespace

spmm::Context make_context(Backend backend, MPI_Comm comm) {
  const int devices = spmm::cuda_device_count();
  int fewest = devices;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, comm));
  if (backend == Backend::automatic) backend = fewest > 0 ? Backend::cuda : Backend::cpu;
  if (backend == Backend::cpu) {
    share_cores(comm);
    return spmm::Context::host();
  }
  // On the device backend the host's BLAS and LAPACK only see the small
  // projected problems (Gram solves, Rayleigh-Ritz, SVQB: tens of rows), where
  // OpenBLAS's threads cost more than they save (the 60 x 60 Rayleigh-Ritz of
  // block-eigs' k = 16: 0.45 ms on one thread, 0.60 ms on two).
  if (!env::environment().openblas_num_threads) openblas_set_num_threads(1);
  std::optional<spmm::Context> context = collectively(comm, [&] {
    if (!spmm::cuda_compiled())
      fail_input("execution.backend is cuda, but block-eigs was built without CUDA "
                 "(configure with the `cuda` preset, or set execution.backend: cpu)");
    if (devices == 0)
      fail_input("execution.backend is cuda, but this rank sees no CUDA device "
                 "(set execution.backend: cpu or auto)");
    std::optional<spmm::Context> made(spmm::Context::cuda(node_local_rank(comm) % devices));
    // Library and pool set-up belongs to start-up, not to the first solve.
    made->warm_up();
    return made;
  });
  return std::move(*context);
}

bool ranks_share_a_device(MPI_Comm comm, const spmm::Context& context) {
  int mine = 0;
#ifdef BLOCKEIGS_HAVE_CUDA
  if (context.space() == Space::device) {
    constexpr int id_length = 32;  // "dddd:bb:dd.f" and more
    std::array<char, id_length> id{};
    BLOCKEIGS_CUDA_CHECK(cudaDeviceGetPCIBusId(id.data(), id_length, context.device()));
    const NodeComm node(comm);
    std::vector<char> ids(static_cast<std::size_t>(node.size()) * id_length);
    BLOCKEIGS_MPI_CHECK(MPI_Allgather(id.data(), id_length, MPI_CHAR, ids.data(), id_length, MPI_CHAR, node.get()));
    for (int r = 0; r < node.size(); ++r)
      if (r != node.rank() && std::string(ids.data() + r * id_length) == std::string(id.data())) mine = 1;
  }
#else
  (void)context;
#endif
  int any = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
  return any == 1;
}

bool mpi_is_cuda_aware(std::optional<bool> configured) {
  if (configured) return *configured;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace blockeigs::solver
