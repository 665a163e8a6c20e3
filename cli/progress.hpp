// A progress display for long commands on stderr: one line per stage with the time since the start and
// the stage's duration, and while a stage runs, the fraction done and the time left as the library's
// RunControl reports them:
//   [   0.0 s] ECE^KDE canonical ... 45%, about 12 s left       (a terminal: the line is redrawn)
//   [   0.0 s] ECE^KDE canonical ... 2.31 s                      (when the stage is done)
// Off a terminal (a log file) the line is written once the stage ends, with a line of its own every
// 10 s while a long stage runs.
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "ecekde/run_control.hpp"

namespace ecekde::cli {

class Progress {
 public:
  /// Shows stages when `enabled`; otherwise stage() only runs the work. `control` is the one the work's
  /// computations report to.
  Progress(bool enabled, RunControl& control);

  /// Runs `work` as one stage. If it throws, the line ends with "failed" (or "interrupted") and the
  /// exception propagates (so the error message that follows starts on a line of its own).
  void stage(std::string_view label, const std::function<void()>& work);

  /// Whether stderr is a terminal (the default for showing progress).
  static bool stderr_is_terminal();

 private:
  bool enabled_, terminal_;
  RunControl& control_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ecekde::cli
