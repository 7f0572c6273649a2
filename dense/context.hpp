// Per-rank execution context: which space the work runs in and, on the
// device, the CUDA device, its stream and the cuSPARSE/cuBLAS handles. Device
// work is queued on the stream; synchronize() waits for it.
#pragma once

#include <memory>

#include "core/enums.hpp"

namespace blockeigs::dense {

class Context {
 public:
  // CPU backend.
  static Context host();
  // CUDA backend on `device` (selects it for this thread). Throws when CUDA
  // is not compiled in or the device does not exist.
  static Context cuda(int device);

  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  Space space() const;
  int device() const;  // -1 on the host

  // Selects the context's device for the calling thread, as cuda() did for
  // the thread that made it (a context made on another thread). No-op on the host.
  void make_current() const;

  // Opaque CUDA handles (cudaStream_t, cusparseHandle_t, cublasHandle_t);
  // null on the host. Created once, on first use for the library handles.
  void* stream() const;
  void* cusparse_handle() const;
  void* cublas_handle() const;

  void synchronize() const;

  // Sets up now what the first dense product and the first stream-ordered
  // allocation would otherwise set up in the middle of a solve: cuBLAS's
  // handle and its first choice of kernels, and the stream-ordered pool
  // (docs/benchmarks/time-to-solution.md#context-warm-up). For solver
  // contexts, so that a solve's time is the solve's.
  // Idempotent; a no-op on the host.
  void warm_up() const;

  struct Impl;

 private:
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A point in a context's stream: record() marks the work queued so far,
// synchronize() waits for that work only (later work keeps running). No-ops
// on the host, where work is done when queued. A timing event can also tell
// how long the stream took between two of them.
class Event {
 public:
  enum class Timing { off, on };
  explicit Event(const Context& context, Timing timing = Timing::off);
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  void record();
  void synchronize();
  // Whether the work before the last record() has finished (true on the host).
  bool done() const;
  // Seconds the stream took from `earlier` to this event; both timing events,
  // both done. 0 on the host.
  double seconds_since(const Event& earlier) const;

 private:
  const Context& context_;
  void* event_ = nullptr;  // cudaEvent_t
};

}  // namespace blockeigs::dense
