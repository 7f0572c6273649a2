// Backend and GPU choice for a rank: rank r uses device (local rank mod
// device count), where the local rank counts the ranks on the same node.
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include "core/enums.hpp"
#include "dense/context.hpp"

namespace blockeigs::solver {

int node_local_rank(MPI_Comm comm);

// Backend::automatic picks CUDA when every rank sees a GPU. Backend::cuda
// without a GPU is an InputError on every rank. Collective.
dense::Context make_context(Backend backend, MPI_Comm comm);

// make_context in two halves, so that a rank can read its matrix while its
// GPU starts: the backend, the device and the cores are chosen at once,
// collectively, as make_context chooses them; the CUDA context and its
// libraries' set-up, a large part of the start-up
// (docs/benchmarks/time-to-solution.md#starting-context), then run on a
// thread of their own until ready() is called.
class StartingContext {
 public:
  StartingContext(Backend backend, MPI_Comm comm);  // collective
  StartingContext(const StartingContext&) = delete;
  StartingContext& operator=(const StartingContext&) = delete;
  ~StartingContext();  // waits for the thread where ready() was not called

  Space space() const { return space_; }
  int device() const { return device_; }  // -1 on the host

  // The context: waits for its thread; an error there is every rank's (the
  // lowest failing rank's message); the device becomes the calling thread's.
  // Collective the first time, the same context after.
  const dense::Context& ready();
  // ready(), the context then moved out.
  dense::Context take();
  // Seconds the context took on its thread (0 on the host).
  double seconds() const { return seconds_; }

 private:
  void join();
  MPI_Comm comm_;
  Space space_ = Space::host;
  int device_ = -1;
  std::thread thread_;
  std::optional<dense::Context> context_;
  std::exception_ptr error_;
  double seconds_ = 0;
  bool agreed_ = false;
};

// The CPUs this process may run on (its affinity mask: one core where
// mpirun bound the rank to a core), or 0 where that is unknown.
int allowed_cpus();

// Local rank `local_rank`'s even slice of the node's CPUs (ascending) among
// `local_ranks`: where there are more ranks than CPUs, one CPU each, shared.
std::vector<int> node_share(const std::vector<int>& node_cpus, int local_rank, int local_ranks);

// OpenMP and OpenBLAS threads for a rank on the CPU backend: the node's
// `hardware` threads shared by its `local_ranks`, and no more than the
// rank's `allowed` CPUs (0: unknown), so that a rank bound to one core does
// not run many threads on it. At least 1.
int cpu_threads_per_rank(int hardware, int local_ranks, int allowed);

// A rank's threads on the CPU backend and what they were chosen from.
enum class ThreadSource { share, omp_num_threads, openblas_num_threads };
struct CpuThreads {
  int openmp = 1, openblas = 1;
  ThreadSource openmp_source = ThreadSource::share, openblas_source = ThreadSource::share;
  // The share's inputs (cpu_threads_per_rank): the CPUs the node's ranks may
  // run on together, their count, this rank's affinity mask (0: unknown).
  int cores = 0, local_ranks = 1, allowed = 0;
  int hardware = 0;      // the node's CPUs (std::thread::hardware_concurrency; make_context sets it)
  int widened_from = 0;  // the CPUs a binding narrower than the rank's share gave it, where widened to the share
};

// The choice as a pure function: a user's OMP_NUM_THREADS and
// OPENBLAS_NUM_THREADS (core/env_overrides.hpp; null: unset; a value that is not a positive
// integer counts as unset; OMP_NUM_THREADS's first entry where it is a
// list) win for what they set, and OpenBLAS follows OMP_NUM_THREADS as it
// does itself; the rest take cpu_threads_per_rank(cores, local_ranks, allowed).
CpuThreads choose_cpu_threads(int cores, int local_ranks, int allowed, const char* omp_num_threads,
                              const char* openblas_num_threads);

// What make_context chose for this rank on the CPU backend, with the
// libraries' own counts read back (default values before make_context).
const CpuThreads& cpu_threads();

// True on every rank when two ranks of one node run on the same GPU (its PCI
// bus id), as when there are more ranks than GPUs; false on the host backend.
// NCCL refuses such a communicator. Collective.
bool ranks_share_a_device(MPI_Comm comm, const dense::Context& context);

// True when device pointers can be handed to MPI directly: `configured`
// where given (execution.halo.cuda_aware_mpi), else Open MPI's
// MPIX_Query_cuda_support.
bool mpi_is_cuda_aware(std::optional<bool> configured = std::nullopt);

}  // namespace blockeigs::solver
