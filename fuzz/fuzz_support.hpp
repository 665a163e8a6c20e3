// What every fuzz target asserts about a reader: it either returns data or throws ecekde::Error with a
// one-line message; anything else (another exception, a crash, a sanitizer report, a leak) is a finding.
// Whatever was read then goes through the library's own input checks, as the CLI's would.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"

namespace ecekde::fuzz {

/// Aborts (a libFuzzer finding) when an error message is empty or not one printable line (a control
/// character such as a newline or an escape sequence echoed out of the input).
inline void require_one_line(const Error& e) {
  const std::string_view m = e.what();
  if (m.empty()) std::abort();
  for (const char c : m)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) std::abort();
}

/// Runs `read` and reports a bad message as a finding; other exceptions escape to libFuzzer.
template <class Read>
void expect_value_or_error(Read&& read) {
  try {
    read();
  } catch (const Error& e) {
    require_one_line(e);
  }
}

/// Small inputs only (so each run stays fast): the estimate at a fixed bandwidth, whose input checks are
/// the ones every front end applies (shapes, NaN and inf, negative values, row sums, label range).
inline void estimate_small(ProbsView probs, LabelsView labels) {
  if (probs.rows() * probs.cols() > 256) return;
  EstimateOptions options;
  options.estimator = Estimator::paper;
  options.bandwidth = 0.1;
  options.execution.threads = 1;
  expect_value_or_error([&] { estimate(probs, labels, options); });
}

}  // namespace ecekde::fuzz
