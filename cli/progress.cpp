#include "progress.hpp"

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

namespace ecekde::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

Progress::Progress(bool enabled, RunControl& control)
    : enabled_(enabled), terminal_(stderr_is_terminal()), control_(control), start_(Clock::now()) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::stage(std::string_view label, const std::function<void()>& work) {
  if (!enabled_) {
    work();
    return;
  }
  control_.restart_progress();
  const auto begin = Clock::now();
  char head[32];
  std::snprintf(head, sizeof head, "[%7.1f s] ", seconds_since(start_));
  const std::string line = head + std::string(label) + " ... ";
  if (terminal_) std::fprintf(stderr, "%s", line.c_str());
  std::fflush(stderr);

  // The watcher redraws the line (terminal) or writes a line every 10 s (log) until the work ends.
  std::mutex mutex;
  std::condition_variable wake;
  bool finished = false;
  std::size_t shown = 0;  // characters of status after `line` on the terminal
  std::thread watcher([&] {
    const auto interval = std::chrono::milliseconds(terminal_ ? 250 : 10000);
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, interval, [&] { return finished; })) {
      const double elapsed = seconds_since(begin);
      const std::string status = progress_text(control_.progress(), elapsed);
      if (terminal_) {
        const std::size_t pad = shown > status.size() ? shown - status.size() : 0;
        std::fprintf(stderr, "\r%s%s%s", line.c_str(), status.c_str(), std::string(pad, ' ').c_str());
        shown = status.size();
      } else {
        std::fprintf(stderr, "[%7.1f s] %.*s: %s\n", seconds_since(start_), static_cast<int>(label.size()),
                     label.data(), status.c_str());
      }
      std::fflush(stderr);
    }
  });
  const auto finish = [&](const std::string& outcome) {
    {
      std::lock_guard lock(mutex);
      finished = true;
    }
    wake.notify_one();
    watcher.join();
    const std::size_t pad = shown > outcome.size() ? shown - outcome.size() : 0;
    std::fprintf(stderr, "%s%s%s%s\n", terminal_ ? "\r" : "", line.c_str(), outcome.c_str(),
                 std::string(pad, ' ').c_str());
    std::fflush(stderr);
  };
  try {
    work();
  } catch (const Cancelled&) {
    finish("interrupted");
    throw;
  } catch (...) {
    finish("failed");
    throw;
  }
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds_since(begin));
  finish(took);
}

}  // namespace ecekde::cli
