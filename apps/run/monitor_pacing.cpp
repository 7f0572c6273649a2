#include "apps/run/monitor_pacing.hpp"

#include <cstdio>

namespace blockeigs::apps {

bool MonitorPacing::due(int iteration, double elapsed, bool last) {
  if (recent_.empty() || recent_.back().first != iteration)
    recent_.emplace_back(iteration, elapsed);
  else
    recent_.back().second = elapsed;
  while (recent_.size() > static_cast<std::size_t>(window) + 1) recent_.pop_front();
  const bool wanted = first_ || last || iteration % every_ == 0;
  first_ = false;
  if (!wanted || iteration == printed_) return false;
  printed_ = iteration;
  return true;
}

std::string MonitorPacing::timing() const {
  char text[64];
  const double elapsed = recent_.empty() ? 0.0 : recent_.back().second;
  const int steps = recent_.size() < 2 ? 0 : recent_.back().first - recent_.front().first;
  if (steps > 0) {
    const double ms = 1e3 * (recent_.back().second - recent_.front().second) / steps;
    std::snprintf(text, sizeof text,
                  ms < 10    ? "%.2f s, %.2f ms/iter"
                  : ms < 100 ? "%.2f s, %.1f ms/iter"
                             : "%.2f s, %.0f ms/iter",
                  elapsed, ms);
  } else
    std::snprintf(text, sizeof text, "%.2f s", elapsed);
  return text;
}

bool MonitorPacing::flush_due(double elapsed, bool last) {
  if (!last && flushed_ >= 0 && elapsed - flushed_ < flush_seconds) return false;
  flushed_ = elapsed;
  return true;
}

}  // namespace blockeigs::apps
