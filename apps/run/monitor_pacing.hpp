// Which monitor lines an app prints (output.monitor_every) and the timing
// they end with: the elapsed time and the mean time of the last iterations.
#pragma once

#include <deque>
#include <string>
#include <utility>

namespace blockeigs::apps {

class MonitorPacing {
 public:
  explicit MonitorPacing(int every) : every_(every < 1 ? 1 : every) {}

  // Called once per report with the solver's iteration and elapsed seconds.
  // True when the line is due: the first report, every every-th iteration
  // and the last, each iteration at most once.
  bool due(int iteration, double elapsed, bool last);

  // "2.41 s, 19.8 ms/iter": ms/iter is the mean over the last
  // `window` iterations reported (only the elapsed time at the first).
  std::string timing() const;

  // After a printed line: true when stdout should be flushed, so that a log
  // file shows progress (at most every `flush_seconds`, and at the last).
  bool flush_due(double elapsed, bool last);

  static constexpr int window = 10;
  static constexpr double flush_seconds = 0.25;

 private:
  int every_;
  std::deque<std::pair<int, double>> recent_;  // (iteration, elapsed), the last window + 1
  int printed_ = -1;                           // the last iteration printed
  bool first_ = true;
  double flushed_ = -1;  // elapsed seconds at the last flush
};

}  // namespace blockeigs::apps
