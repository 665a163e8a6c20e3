// The library's message helpers (concat and fail_with, public in ecekde/error.hpp) and its internal
// invariant check.
#pragma once

#include "ecekde/error.hpp"

namespace ecekde::detail {

using ecekde::concat;
using ecekde::fail_with;

}  // namespace ecekde::detail

/// Internal invariant check (a bug if it fires; never used for user input).
#define ECEKDE_ASSERT(cond)                                                                        \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::ecekde::detail::fail_with("internal error: ", #cond, " failed at ", __FILE__, ":",          \
                                  __LINE__);                                                       \
  } while (false)
