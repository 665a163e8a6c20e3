// Long computations from Python: interruptible by Ctrl-C, with optional progress.
//
// The computation runs on a worker thread without the GIL while the calling thread waits in slices of
// 100 ms; between slices it takes the GIL to run Python's signal handlers (PyErr_CheckSignals: Ctrl-C
// raises KeyboardInterrupt there) and to report progress. When either raises, the computation is
// cancelled through its RunControl (it stops within a tile of work), joined, and the Python exception
// propagates: nothing half-computed is returned.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <pybind11/pybind11.h>

#include "ecekde/run_control.hpp"

namespace ecekde::python {

namespace py = pybind11;

/// The `progress` keyword of the long functions: None (a bar on stderr when the session is interactive
/// and the call has run 2 s), False (nothing), True (the bar from the start, in any session; a call too
/// short for an update draws it once as it ends), or a callable progress(fraction, seconds_left) with
/// seconds_left None until it can be estimated.
class ProgressReporter {
 public:
  ProgressReporter(py::object progress, std::string name);
  /// Reports the state (the GIL held); a Python exception from a callback propagates.
  void update(const RunControl::Progress& progress, double elapsed);
  /// Draws the bar's last state and ends its line with `outcome` ("done", "failed", "interrupted"); a
  /// callback hears of a completed call as fraction 1 (the GIL held).
  void finish(const char* outcome, const RunControl::Progress& progress, double elapsed);

 private:
  void draw(const RunControl::Progress& progress, double elapsed);

  // bar: asked for (True); delayed_bar: the default's in an interactive session, after 2 s
  enum class Mode { off, bar, delayed_bar, callback } mode_ = Mode::off;
  py::object callback_;
  std::string name_;
  bool drawn_ = false;
};

/// The help text of the `progress` keyword.
inline constexpr const char* kProgressDoc =
    "None (default: a progress bar on stderr in an interactive session, once the call has run 2 s), False "
    "(none), True (the bar from the start, in any session), or a callable progress(fraction, seconds_left) "
    "called about 10 times a second (seconds_left None until it can be estimated); Ctrl-C interrupts the "
    "call in any case";

/// Runs compute() (whose options carry `control`) as described above; returns its result or rethrows
/// its exception. Called with the GIL held.
template <class Compute>
auto run_watched(RunControl& control, const py::object& progress, std::string name, Compute&& compute)
    -> decltype(compute()) {
  using Result = decltype(compute());
  ProgressReporter reporter(progress, std::move(name));  // may throw: before the worker starts
  std::optional<Result> result;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable done_signal;
  bool done = false;
  std::thread worker([&] {
    try {
      result.emplace(compute());
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(mutex);
    done = true;
    done_signal.notify_one();
  });
  const auto join = [&] {
    py::gil_scoped_release nogil;
    worker.join();
  };
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (;;) {
    bool finished = false;
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mutex);
      finished = done_signal.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; });
    }
    if (finished) break;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      reporter.update(control.progress(), elapsed());
    } catch (...) {
      control.cancel();
      join();
      reporter.finish("interrupted", control.progress(), elapsed());
      throw;
    }
  }
  join();
  reporter.finish(error ? "failed" : "done", control.progress(), elapsed());
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace ecekde::python
