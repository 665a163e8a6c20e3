// The library's side of RunControl: planning work, counting it as it is done, and stopping at a
// cancellation. Every function accepts a null control (nothing is watched) and then does nothing.
#pragma once

#include <algorithm>

#include "ecekde/run_control.hpp"

namespace ecekde::detail {

struct WorkLedger {
  /// Throws Cancelled when `control` was cancelled.
  static void check(const RunControl* control) {
    if (control && control->cancelled()) throw Cancelled();
  }

  /// Plans `work` ahead of the sweeps that will do it: they draw on it (start()) instead of adding to
  /// the plan. Returns what was planned, for give_back().
  static double plan(RunControl* control, double work) {
    if (!control) return 0;
    add(control->planned_, work);
    add(control->reserved_, work);
    return work;
  }

  /// A sweep of `work` starts: it uses planned work where there is some, and plans the rest.
  static void start(RunControl* control, double work) {
    if (!control) return;
    const double unplanned = work - take_reserved(*control, work);
    if (unplanned > 0) add(control->planned_, unplanned);
  }

  /// `work` of a sweep is done; throws Cancelled when the control was cancelled meanwhile.
  static void done(RunControl* control, double work) {
    if (!control) return;
    add(control->done_, work);
    check(control);
  }

  /// Takes back planned work that no sweep used (a search that stopped early), up to `work`.
  static void give_back(RunControl* control, double work) {
    if (control && work > 0) add(control->planned_, -take_reserved(*control, work));
  }

  /// Planned work not yet drawn on by a sweep.
  static double unused(const RunControl* control) {
    return control ? control->reserved_.load(std::memory_order_relaxed) : 0.0;
  }

 private:
  // Takes up to `work` from the planned work not yet used; returns how much it took.
  static double take_reserved(RunControl& control, double work) {
    double left = control.reserved_.load(std::memory_order_relaxed), take = 0;
    do {
      take = std::min(left, work);
    } while (!control.reserved_.compare_exchange_weak(left, left - take, std::memory_order_relaxed));
    return take;
  }

  static void add(std::atomic<double>& a, double v) {
    double old = a.load(std::memory_order_relaxed);
    while (!a.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
    }
  }
};

/// Work planned for one step (a bandwidth search, an estimate's final sweeps): what its sweeps leave
/// unused when it ends (early, or by an exception) is taken back out of the plan.
class PlannedWork {
 public:
  PlannedWork(RunControl* control, double work)
      : control_(control), before_(WorkLedger::unused(control)), work_(WorkLedger::plan(control, work)) {}
  ~PlannedWork() {  // a step that used more than it planned drew on the plans around it: nothing to give
    WorkLedger::give_back(control_, std::min(work_, WorkLedger::unused(control_) - before_));
  }
  PlannedWork(const PlannedWork&) = delete;
  PlannedWork& operator=(const PlannedWork&) = delete;

 private:
  RunControl* control_;
  double before_, work_;
};

}  // namespace ecekde::detail
