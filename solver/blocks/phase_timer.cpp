#include "solver/blocks/phase_timer.hpp"

#include <mpi.h>

namespace blockeigs::solver {

namespace {
// Marks left unsettled before to() waits for the oldest: bounds the events
// held when a caller queues many phases without reading anything back.
constexpr std::size_t max_pending = 64;
// Marks are settled in batches: a query at every mark would cost the host a
// driver call on its path between device phases (~1-3 us each, several a
// LOBPCG iteration).
constexpr std::size_t settle_batch = 16;
}  // namespace

PhaseTimer::PhaseTimer(const dense::Context& context)
    : context_(context), on_device_(context.space() == Space::device) {
  if (on_device_) {
    last_ = take_event();
    last_->record();
  } else {
    host_mark_ = MPI_Wtime();
  }
}

PhaseTimer::~PhaseTimer() = default;

std::unique_ptr<dense::Event> PhaseTimer::take_event() {
  if (spare_.empty()) return std::make_unique<dense::Event>(context_, dense::Event::Timing::on);
  std::unique_ptr<dense::Event> event = std::move(spare_.back());
  spare_.pop_back();
  return event;
}

void PhaseTimer::to(double& bucket) {
  if (!on_device_) {
    const double now = MPI_Wtime();
    bucket += now - host_mark_;
    host_mark_ = now;
    return;
  }
  std::unique_ptr<dense::Event> event = take_event();
  event->record();
  pending_.emplace_back(std::move(event), &bucket);
  if (pending_.size() >= settle_batch) settle(pending_.size() > max_pending);
}

void PhaseTimer::settle(bool wait) {
  while (!pending_.empty()) {
    auto& [event, bucket] = pending_.front();
    if (wait)
      event->synchronize();
    else if (!event->done())
      return;
    *bucket += event->seconds_since(*last_);
    spare_.push_back(std::move(last_));
    last_ = std::move(event);
    pending_.pop_front();
    wait = false;
  }
}

void PhaseTimer::settle_done() {
  if (on_device_) settle(false);
}

void PhaseTimer::finish() {
  while (!pending_.empty()) settle(true);
}

}  // namespace blockeigs::solver
