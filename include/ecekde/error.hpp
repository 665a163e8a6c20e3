// The one exception type of ecekde, and the one function that raises it.
#pragma once

#include <stdexcept>
#include <string>

namespace ecekde {

/// Every error ecekde reports about its input or its use: a one-line message naming what is wrong
/// (argument, row, column, value). Internal invariant failures are also reported with this type,
/// prefixed "internal error:", and are bugs.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws Error(message). Kept out of line so call sites stay small.
[[noreturn]] void fail(const std::string& message);

}  // namespace ecekde
