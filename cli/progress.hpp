// A progress display for long commands: one line per stage on stderr, with the time since the start and
// the stage's own duration:
//   [   0.0 s] ECE^KDE canonical: estimate, bootstrap, test ... 2.31 s
#pragma once

#include <chrono>
#include <functional>
#include <string_view>

namespace ecekde::cli {

class Progress {
 public:
  /// Shows stages when `enabled`; otherwise stage() only runs the work.
  explicit Progress(bool enabled);

  /// Runs `work` as one stage. If it throws, the line ends with "failed" and the exception propagates
  /// (so the error message that follows starts on a line of its own).
  void stage(std::string_view label, const std::function<void()>& work);

  /// Whether stderr is a terminal (the default for showing progress).
  static bool stderr_is_terminal();

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ecekde::cli
