#include "solver/operator/device_selection.hpp"

#include <cblas.h>
#include <omp.h>
#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>
#include <optional>
#include <string>

#include "core/checks.hpp"
#include "core/env_overrides.hpp"
#include "core/error.hpp"
#include "solver/base/collective.hpp"
#include "dense/memory.hpp"
#include "solver/operator/cuda/device_queries.hpp"

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

// The CPUs the node's ranks may run on together: the union of their own
// affinity masks and their launcher's (the parent process: mpirun, orted or
// slurmstepd, which mpirun and srun do not bind to the ranks' cores), so the
// node's cores or a container's or job's share of them; empty where the
// masks are unknown. Collective over the node.
std::vector<int> node_cpu_list(const NodeComm& node) {
  std::vector<int> cpus;
#ifdef __linux__
  cpu_set_t mask, launcher;
  CPU_ZERO(&mask);
  CPU_ZERO(&launcher);
  int known = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? 1 : 0;
  if (sched_getaffinity(getppid(), sizeof(launcher), &launcher) == 0) CPU_OR(&mask, &mask, &launcher);
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &known, 1, MPI_INT, MPI_MIN, node.get()));
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &mask, sizeof(mask), MPI_BYTE, MPI_BOR, node.get()));
  if (known)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &mask)) cpus.push_back(c);
#else
  (void)node;
#endif
  return cpus;
}

// Runs this thread, and the threads it starts from now on (OpenMP's, on its
// first parallel region), on `cpus`; false where that is refused or unknown.
bool run_on(const std::vector<int>& cpus) {
#ifdef __linux__
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int c : cpus) CPU_SET(c, &mask);
  return !cpus.empty() && sched_setaffinity(0, sizeof(mask), &mask) == 0;
#else
  (void)cpus;
  return false;
#endif
}

}  // namespace

std::vector<int> node_share(const std::vector<int>& node_cpus, int local_rank, int local_ranks) {
  const auto n = static_cast<std::int64_t>(node_cpus.size());
  const std::int64_t ranks = std::max(1, local_ranks), r = std::clamp<std::int64_t>(local_rank, 0, ranks - 1);
  std::int64_t begin = n * r / ranks, end = n * (r + 1) / ranks;
  if (begin == end && n > 0) end = begin + 1;  // more ranks than CPUs: one each, shared
  return {node_cpus.begin() + begin, node_cpus.begin() + end};
}

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

// Ranks on one node share its cores: each rank runs on an even slice of the
// CPUs the node's ranks and their launcher may use (node_share), one OpenMP
// (and on the CPU backend OpenBLAS) thread per CPU, so that ranks neither oversubscribe the
// machine (docs/benchmarks/time-to-solution.md#core-share) nor leave it idle:
// mpirun binds each of one or two ranks to a single
// core by default, and the set-up (symmetry check, moving rows, the split)
// runs on whatever cores a rank has, on either backend. A rank bound more
// narrowly than its slice is widened to it; a user's OMP_NUM_THREADS keeps
// the binding as it is and, with OPENBLAS_NUM_THREADS, sets the counts.
void share_cores(MPI_Comm comm, Backend backend) {
  const NodeComm node(comm);
  CpuThreads& t = chosen_threads();
  const env::Environment& e = env::environment();
  const char* omp_num_threads = text_or_null(e.omp_num_threads);
  const std::vector<int> cpus = node_cpu_list(node);
  const std::vector<int> share = node_share(cpus, node.rank(), node.size());
  const int bound = allowed_cpus();
  const bool widen = !omp_num_threads && bound > 0 && bound < static_cast<int>(share.size());
  const bool widened = widen && run_on(share);
  const int node_cpus =
      cpus.empty() ? static_cast<int>(std::thread::hardware_concurrency()) : static_cast<int>(cpus.size());
  t = choose_cpu_threads(node_cpus, node.size(), allowed_cpus(), omp_num_threads, text_or_null(e.openblas_num_threads));
  t.widened_from = widened ? bound : 0;
  if (t.openmp_source == ThreadSource::share) omp_set_num_threads(t.openmp);
  // On the device backend the host's BLAS and LAPACK only see the small
  // projected problems (Gram solves, Rayleigh-Ritz, SVQB: tens of rows), where
  // OpenBLAS's threads cost more than they save
  // (docs/benchmarks/solvers.md#host-window).
  if (backend != Backend::cpu && !e.openblas_num_threads)
    openblas_set_num_threads(1);
  else if (t.openblas_source == ThreadSource::share)
    openblas_set_num_threads(t.openblas);
  t.hardware = static_cast<int>(std::thread::hardware_concurrency());
  t.openmp = omp_get_max_threads();
  t.openblas = openblas_get_num_threads();
}

// The backend's choice, collectively (make_context's and StartingContext's
// first half): the cores shared out, and the device this rank's context goes
// on, -1 on the host.
int choose_device(Backend backend, MPI_Comm comm) {
  const int devices = dense::cuda_device_count();
  int fewest = devices;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&devices, &fewest, 1, MPI_INT, MPI_MIN, comm));
  if (backend == Backend::automatic) backend = fewest > 0 ? Backend::cuda : Backend::cpu;
  share_cores(comm, backend);
  if (backend == Backend::cpu) return -1;
  collectively(comm, [&] {
    if (!dense::cuda_compiled())
      fail_input(
          "execution.backend is cuda, but block-eigs was built without CUDA "
          "(configure with the `cuda` preset, or set execution.backend: cpu)");
    if (devices == 0)
      fail_input(
          "execution.backend is cuda, but this rank sees no CUDA device "
          "(set execution.backend: cpu or auto)");
  });
  return node_local_rank(comm) % devices;
}

// The second half: the device's context, its libraries and pool set up now,
// as start-up rather than in the first solve.
dense::Context warm_context(int device) {
  dense::Context context = dense::Context::cuda(device);
  context.warm_up();
  return context;
}

}  // namespace

StartingContext::StartingContext(Backend backend, MPI_Comm comm) : comm_(comm), device_(choose_device(backend, comm)) {
  if (device_ < 0) {
    context_.emplace(dense::Context::host());
    return;
  }
  space_ = Space::device;
  thread_ = std::thread([this] {
    const auto start = std::chrono::steady_clock::now();
    try {
      context_.emplace(warm_context(device_));
    } catch (...) {
      error_ = std::current_exception();
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
}

void StartingContext::join() {
  if (thread_.joinable()) thread_.join();
}

StartingContext::~StartingContext() { join(); }

const dense::Context& StartingContext::ready() {
  join();
  if (!agreed_) {
    agree_on_error(comm_, error_);
    agreed_ = true;
  }
  context_->make_current();
  return *context_;
}

dense::Context StartingContext::take() {
  ready();
  return std::move(*context_);
}

dense::Context make_context(Backend backend, MPI_Comm comm) {
  const int device = choose_device(backend, comm);
  if (device < 0) return dense::Context::host();
  return collectively(comm, [&] { return warm_context(device); });
}

bool ranks_share_a_device(MPI_Comm comm, const dense::Context& context) {
  int mine = 0;
  if (context.space() == Space::device) {
    constexpr int id_length = 32;  // "dddd:bb:dd.f" and more
    std::array<char, id_length> id{};
    cuda::pci_bus_id(context.device()).copy(id.data(), id_length - 1);
    const NodeComm node(comm);
    std::vector<char> ids(static_cast<std::size_t>(node.size()) * id_length);
    BLOCKEIGS_MPI_CHECK(MPI_Allgather(id.data(), id_length, MPI_CHAR, ids.data(), id_length, MPI_CHAR, node.get()));
    for (int r = 0; r < node.size(); ++r)
      if (r != node.rank() && std::string(ids.data() + r * id_length) == std::string(id.data())) mine = 1;
  }
  int any = 0;
  BLOCKEIGS_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm));
  return any == 1;
}

bool mpi_is_cuda_aware(std::optional<bool> configured) { return configured ? *configured : cuda::mpi_supports_cuda(); }

}  // namespace blockeigs::solver
