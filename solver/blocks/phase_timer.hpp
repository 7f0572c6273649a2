// Splits a solver's wall time into phases without stopping the device.
//
// On the device each to(bucket) records a timing event on the context's
// stream, and the bucket is charged the stream time between the previous
// mark and this one: the device work queued in the phase plus any time the
// stream sat idle waiting for the host to queue it (the phase's own host
// work). Host work that overlaps earlier device work costs nothing, as it
// costs no wall time. Nothing waits for the stream: marks are settled when
// their events are done, and finish() waits for the rest. On the host
// backend the phases are plain wall-clock intervals.
//
//   PhaseTimer clock(context);
//   A.apply(...);   clock.to(time.spmm);
//   ...
//   clock.finish();  // before reading the buckets
#pragma once

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "dense/context.hpp"

namespace blockeigs::solver {

class PhaseTimer {
 public:
  explicit PhaseTimer(const dense::Context& context);
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer();

  // Charges the phase since the last mark (or construction) to `bucket`,
  // which must outlive the timer's finish().
  void to(double& bucket);
  // Settles the marks whose events are done, without waiting: for a caller
  // whose host is idle while the device works (LOBPCG during its Ritz
  // update), so that to() seldom has a batch to settle later, on the host's
  // path between device phases.
  void settle_done();
  // Waits for the stream and settles every mark.
  void finish();

 private:
  std::unique_ptr<dense::Event> take_event();
  void settle(bool wait);

  const dense::Context& context_;
  bool on_device_;
  double host_mark_ = 0;                // host: wall time of the last mark
  std::unique_ptr<dense::Event> last_;  // device: the last settled mark
  std::deque<std::pair<std::unique_ptr<dense::Event>, double*>> pending_;
  std::vector<std::unique_ptr<dense::Event>> spare_;
};

}  // namespace blockeigs::solver
