// The library's side of RunControl: plans drawn on by sweeps, unused plans given back, and a step that
// overran its plan leaving the plans around it alone.
#include <gtest/gtest.h>

#include "core/work_ledger.hpp"

namespace {

using ecekde::detail::PlannedWork;
using ecekde::detail::WorkLedger;

TEST(WorkLedger, SweepsDrawOnPlansAndUnusedPlansAreGivenBack) {
  ecekde::RunControl control;
  {
    const PlannedWork outer(&control, 100);
    {
      const PlannedWork inner(&control, 50);
      WorkLedger::start(&control, 30);  // drawn from the plans: nothing new
      WorkLedger::done(&control, 30);
      EXPECT_EQ(control.progress().planned, 150);
    }  // the inner step used 30 of its 50: 20 given back
    EXPECT_EQ(control.progress().planned, 130);
    WorkLedger::start(&control, 100);
    WorkLedger::done(&control, 100);
  }
  EXPECT_EQ(control.progress().done, 130);
  EXPECT_EQ(control.progress().planned, 130);
  EXPECT_DOUBLE_EQ(control.progress().fraction(), 1.0);
}

TEST(WorkLedger, AStepThatOverranItsPlanGivesNothingBack) {
  ecekde::RunControl control;
  {
    const PlannedWork outer(&control, 100);
    {
      const PlannedWork inner(&control, 50);
      WorkLedger::start(&control, 120);  // 20 more than its own plan: drawn from the outer one
    }
    EXPECT_EQ(control.progress().planned, 150);  // nothing given back, nothing added
    WorkLedger::start(&control, 100);             // 30 left planned, 70 new
    EXPECT_EQ(control.progress().planned, 220);
  }
}

TEST(WorkLedger, NoControlMeansNothingToDo) {
  const PlannedWork planned(nullptr, 10);
  WorkLedger::start(nullptr, 5);
  WorkLedger::done(nullptr, 5);
  WorkLedger::check(nullptr);
  ecekde::RunControl control;
  control.cancel();
  EXPECT_THROW(WorkLedger::check(&control), ecekde::Cancelled);
  EXPECT_THROW(WorkLedger::done(&control, 1), ecekde::Cancelled);
}

}  // namespace
