#include "interrupt.hpp"

#include <csignal>

namespace ecekde::cli {

namespace {

RunControl g_control;
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int signal) {
  g_signal = signal;
  g_control.cancel();  // async-signal-safe: a lock-free atomic store
}

}  // namespace

RunControl& run_control() { return g_control; }

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // the second signal takes the default action
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void stop_if_interrupted() {
  if (g_control.cancelled()) throw Cancelled();
}

int interrupted_status() { return 128 + (g_signal ? static_cast<int>(g_signal) : SIGINT); }

}  // namespace ecekde::cli
