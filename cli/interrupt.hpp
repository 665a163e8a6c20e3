// Ctrl-C (SIGINT) and SIGTERM while a command runs. The first one cancels the running computation
// through the library's RunControl: it stops within a tile of work, nothing more is printed or written,
// and the command ends with "ecekde: interrupted" and exit status 128 + the signal (130 for Ctrl-C). A
// second one ends the process at once, by the signal's default action.
#pragma once

#include "ecekde/run_control.hpp"

namespace ecekde::cli {

/// The control every computation of the command reports to.
RunControl& run_control();

/// Installs the handlers (once, at the start of main).
void install_interrupt_handlers();

/// Throws Cancelled when an interrupt arrived: commands call it before each output, so that a command
/// interrupted outside the library's computations (synth's generator, fit-temperature's search) prints
/// and writes nothing more.
void stop_if_interrupted();

/// The exit status for an interruption: 128 + the signal received (130 when none was).
int interrupted_status();

}  // namespace ecekde::cli
