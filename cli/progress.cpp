#include "progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace ecekde::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Progress::Progress(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void Progress::stage(std::string_view label, const std::function<void()>& work) {
  if (!enabled_) {
    work();
    return;
  }
  const auto begin = std::chrono::steady_clock::now();
  std::fprintf(stderr, "[%7.1f s] %.*s ... ", seconds_since(start_), static_cast<int>(label.size()), label.data());
  std::fflush(stderr);
  try {
    work();
  } catch (...) {
    std::fprintf(stderr, "failed\n");
    throw;
  }
  std::fprintf(stderr, "%.2f s\n", seconds_since(begin));
}

}  // namespace ecekde::cli
