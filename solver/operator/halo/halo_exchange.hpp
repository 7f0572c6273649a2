// The halo exchange of a distributed operator as a begin/end object (PETSc's
// VecScatterBegin/End): one implementation per transport, chosen once when
// the operator is built (solver/operator/halo/halo_transport.hpp).
//
//   halo->reserve(k);                            // buffers for k columns
//   halo->begin(X);                              // pack; post receives, then sends
//   ... work that needs no remote rows ...       // overlaps the messages
//   multiply(halo->end(), ...);                  // wait; the received rows
//   halo->release();                             // after that work was queued
//
// The base holds what every transport shares: the packed send rows (gathered
// by a device kernel on the GPU), the halo block in the context's space, and
// the plan's messages. Buffers grow with the widest block and are kept:
// begin/end allocate nothing.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/enums.hpp"
#include "solver/operator/halo/halo_plan.hpp"
#include "dense/context.hpp"
#include "dense/dense.hpp"
#include "dense/memory.hpp"

namespace blockeigs::solver {

using blockeigs::HaloTransport;  // core/enums.hpp: the config names it too

template <class T>
class HaloExchange {
 public:
  virtual ~HaloExchange();
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;

  virtual HaloTransport transport() const = 0;
  // How halo rows travel, for summaries: "CUDA-aware MPI", ...
  virtual std::string name() const = 0;
  // Why this transport stands in for the one chosen first (NCCL could not
  // start, ...), for summaries; empty when it was the first choice.
  const std::string& fallback_note() const { return fallback_note_; }
  void set_fallback_note(std::string note) { fallback_note_ = std::move(note); }
  // Why this transport was taken (choose_halo_transport's reason).
  const std::string& reason() const { return reason_; }
  void set_reason(std::string reason) { reason_ = std::move(reason); }

  // Room for blocks of up to `cols` columns of T (an fp32 block of the same
  // width takes half). Collective when the buffers grow. False on every rank
  // when this transport cannot use the new buffers (CUDA IPC mapping refused
  // on some rank): the caller then moves to another transport.
  bool reserve(std::int64_t cols);

  // Starts the exchange of the rows of X that neighbours need: packs them and
  // posts the receives and the sends (a transport may post the sends in end(),
  // once the pack queued on the device is done, so that the caller can queue
  // its own work behind the pack first). X is a block of T, or of fp32 where
  // T is double: its rows then travel as words(width) values of T (an odd
  // width padded by one fp32 value). X must stay unchanged until end().
  // Collective with the plan's neighbours; reserve() must have made room.
  template <class U>
  void begin(dense::ConstDenseView<U> X) {
    static_assert(std::is_same_v<U, T> || (std::is_same_v<U, float> && std::is_same_v<T, double>),
                  "a halo moves blocks of the operator's type, or fp32 blocks of an fp64 operator");
    start({X.data, X.ld, X.cols, sizeof(U), words<U>(X.cols)});
  }

  // begin() for a column-major block of T (PETSc's dense blocks: element
  // (i, j) at data[i + j * ld]); the rows travel as in begin().
  void begin_column_major(dense::ColumnMajorView<const T> X) { start({X.data, 1, X.cols, sizeof(T), X.cols, X.ld}); }

  // T values a row of `cols` U values takes on the wire and in the halo block.
  template <class U>
  static std::int64_t words(std::int64_t cols) {
    return (cols * std::int64_t(sizeof(U)) + std::int64_t(sizeof(T)) - 1) / std::int64_t(sizeof(T));
  }

  // Completes the exchange: the halo block, halo_rows() x words T values
  // (rows of fp32 values after an fp32 begin, 2 words apart) in the context's
  // space. Work queued on the context's stream after end() returns sees the block.
  virtual dense::ConstDenseView<T> end() = 0;

  // Called once the work that reads the halo block has been queued: the next
  // exchange may overwrite the block after that work.
  virtual void release() {}

  // The halo block as it stands, `words` T values a row (for timing the
  // multiply without the exchange).
  dense::ConstDenseView<T> halo_block(std::int64_t words) const {
    return {context_.space(), plan_.halo_rows(), words, words, halo_block_.data()};
  }

  // Host clock readings inside the last end(): when this rank's pack was
  // known complete, and when its halo rows had arrived (before any copy into
  // the halo block). While profiling, each reading synchronises the device.
  struct Marks {
    double packed = 0;
    double arrived = 0;
  };
  const Marks& marks() const { return marks_; }
  void set_profiling(bool on) { profiling_ = on; }

 protected:
  // What begin() was given, its element type erased.
  struct Source {
    const void* data;
    std::int64_t ld, cols;        // element (i, j) at data[i * ld + j * col_stride]
    std::size_t element_bytes;    // sizeof(T), or 4 for fp32 rows
    std::int64_t words;           // T values a row on the wire
    std::int64_t col_stride = 1;  // 1: row-major; else column-major (ld 1)
  };

  HaloExchange(MPI_Comm comm, const dense::Context& context, const HaloPlan& plan);

  // The transport's begin(): post receives, pack(), post or queue the sends.
  virtual void start(const Source& X) = 0;
  // reserve() is growing the buffers to `cols` columns; `send_buffer` is the
  // new send buffer, the old one still allocated. False: not usable.
  virtual bool on_reserve(std::int64_t cols, const T* send_buffer) {
    (void)cols;
    (void)send_buffer;
    return true;
  }

  // Gathers X's send rows into the send buffer (queued on the device), then
  // records the point wait_for_pack() waits for.
  void pack(const Source& X);
  // Queues the gather alone, for a transport that queues a copy of the packed
  // rows before record_packed().
  void queue_pack(const Source& X);
  void record_packed();
  // Blocks until the packed rows (and what was queued before record_packed)
  // are ready; returns at once when this rank sends nothing.
  void wait_for_pack();
  // The plan's messages of `words` T values a row, into or out of buffers
  // laid out like the halo block and the send buffer; appended to requests.
  void post_receives(T* into, std::int64_t words, std::vector<MPI_Request>& requests) const;
  void post_sends(const T* from, std::int64_t words, std::vector<MPI_Request>& requests) const;
  double now() const;

  MPI_Comm comm_;
  const dense::Context& context_;
  const HaloPlan& plan_;
  std::int64_t capacity_ = 0;              // columns the buffers hold
  dense::Buffer<std::int32_t> send_rows_;  // plan_.send_rows in the context's space
  dense::Buffer<T> send_buffer_;           // packed rows, context space
  dense::Buffer<T> halo_block_;            // received rows, context space
  std::unique_ptr<dense::Event> packed_;   // marks the packed rows ready to send
  Marks marks_;
  bool profiling_ = false;
  std::string fallback_note_;
  std::string reason_;
};

}  // namespace blockeigs::solver
