// Message building for errors and reports: numbers are printed in their shortest round-trip form.
#pragma once

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>

#include "ecekde/error.hpp"

namespace ecekde::detail {

inline void append(std::string& out, std::string_view s) { out += s; }
inline void append(std::string& out, const char* s) { out += s; }
inline void append(std::string& out, const std::string& s) { out += s; }
inline void append(std::string& out, char c) { out += c; }

template <class T>
  requires(std::integral<T> && !std::same_as<T, char> && !std::same_as<T, bool>)
void append(std::string& out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

template <std::floating_point T>
void append(std::string& out, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// Concatenates strings and numbers into one message.
template <class... Args>
std::string concat(const Args&... args) {
  std::string out;
  (append(out, args), ...);
  return out;
}

/// Throws ecekde::Error with the concatenated message.
template <class... Args>
[[noreturn]] void fail_with(const Args&... args) {
  fail(concat(args...));
}

}  // namespace ecekde::detail

/// Internal invariant check (a bug if it fires; never used for user input).
#define ECEKDE_ASSERT(cond)                                                                        \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::ecekde::detail::fail_with("internal error: ", #cond, " failed at ", __FILE__, ":",          \
                                  __LINE__);                                                       \
  } while (false)
