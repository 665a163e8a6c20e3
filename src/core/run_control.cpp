#include "ecekde/run_control.hpp"

#include <cstdio>

namespace ecekde {

std::optional<double> seconds_left(const RunControl::Progress& progress, double elapsed_seconds) {
  const double f = progress.fraction();
  if (!(f > 0 && f < 1 && elapsed_seconds >= 3)) return std::nullopt;
  return elapsed_seconds * (1 - f) / f;
}

std::string progress_text(const RunControl::Progress& progress, double elapsed_seconds) {
  const double f = progress.fraction();
  char buf[64];
  std::snprintf(buf, sizeof buf, f < 0.1 ? "%.1f%%" : "%.0f%%", 100 * f);
  std::string text = buf;
  const std::optional<double> left = seconds_left(progress, elapsed_seconds);
  if (!left) return text;
  if (*left < 1) {
    std::snprintf(buf, sizeof buf, ", less than 1 s left");
  } else if (*left < 90) {
    std::snprintf(buf, sizeof buf, ", about %.0f s left", *left);
  } else if (*left < 5400) {
    std::snprintf(buf, sizeof buf, ", about %.0f min left", *left / 60);
  } else {
    std::snprintf(buf, sizeof buf, ", about %.1f h left", *left / 3600);
  }
  return text + buf;
}

}  // namespace ecekde
