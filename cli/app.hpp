// The ecekde application: its subcommands, parsing, and how errors reach the user.
#pragma once

#include <stdexcept>
#include <string_view>

namespace ecekde::cli {

/// Exit statuses: 0 success, 1 bad input or failed computation, 2 wrong use of the command line.
inline constexpr int kErrorExit = 1;
inline constexpr int kUsageExit = 2;

/// Wrong use of the command line (unknown flag, missing or conflicting flags, malformed value).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses the command line and runs the chosen subcommand. Returns the exit status; throws
/// UsageError, ecekde::Error or other exceptions for main() to report.
int run(int argc, char** argv);

/// Prints "ecekde: error: <message>" as one line on stderr and returns `status`.
int report_error(std::string_view message, int status);

}  // namespace ecekde::cli
