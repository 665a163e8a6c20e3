// Watching and stopping a long computation from another thread (or a signal handler): pass a RunControl
// in ExecutionOptions::control, then read progress() and call cancel() while the computation runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "ecekde/error.hpp"

namespace ecekde {

namespace detail {
struct WorkLedger;
}

/// Thrown by a computation whose RunControl was cancelled. An Error, so code that catches Error still
/// sees it; front ends tell it apart to report an interruption (the CLI exits 130, Python raises
/// KeyboardInterrupt).
class Cancelled : public Error {
 public:
  Cancelled() : Error("interrupted") {}
};

/// Shared by a computation and its watchers. Every sweep checks cancelled() at each tile (16 rows against
/// one block of centres: microseconds of work), and every loop over replicates at each replicate, so a
/// cancellation takes effect within about that time, or at the end of the step in progress between
/// sweeps (a Newton step of a logistic fit, a sort: at most a fraction of a second at n = 10^5); the computation then
/// throws Cancelled and returns nothing.
/// Progress is counted in kernel evaluations: each sweep adds its evaluations as it finishes tiles, and
/// the long entry points plan their work first (a bandwidth search plans its largest possible number of
/// steps and gives back what it did not use), so fraction() rises from 0 to 1 and rarely steps back.
/// Watching costs an atomic add per tile of rows: no measurable time (docs/benchmarks.md, Long runs).
class RunControl {
 public:
  /// Asks the computation to stop. Async-signal-safe: a lock-free atomic store.
  void cancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }

  struct Progress {
    double done = 0;     ///< kernel evaluations finished
    double planned = 0;  ///< evaluations planned so far (>= done)
    /// done / planned, 0 before anything is planned.
    double fraction() const { return planned > 0 ? done / planned : 0.0; }
  };
  Progress progress() const noexcept {
    const double done = done_.load(std::memory_order_relaxed);
    return {done, std::max(done, planned_.load(std::memory_order_relaxed))};
  }

  /// Clears the counters (not the cancellation), for a watcher that reuses one control across stages.
  void restart_progress() noexcept {
    done_.store(0);
    planned_.store(0);
    reserved_.store(0);
  }

 private:
  friend struct detail::WorkLedger;  // the library's side: planning and counting work

  std::atomic<bool> cancelled_{false};
  std::atomic<double> done_{0}, planned_{0}, reserved_{0};
  static_assert(std::atomic<bool>::is_always_lock_free, "cancel() must be async-signal-safe");
};

/// The time left after `elapsed_seconds` at `progress`: elapsed x (1 - f) / f, once the computation has
/// run 3 s (earlier, the input checks before the first sweep dominate the rate); empty before that, and
/// when nothing or everything is done.
std::optional<double> seconds_left(const RunControl::Progress& progress, double elapsed_seconds);

/// "45%, about 12 s left" (the percentage with one decimal below 10%; minutes and hours for long waits):
/// what the CLI and Python progress displays show.
std::string progress_text(const RunControl::Progress& progress, double elapsed_seconds);

}  // namespace ecekde
