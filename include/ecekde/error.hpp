// The one exception type of ecekde, and the one function that raises it.
#pragma once

#include <charconv>
#include <concepts>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ecekde {

/// Every error ecekde reports about its input or its use: a one-line message naming what is wrong
/// (argument, row, column, value). Internal invariant failures are also reported with this type,
/// prefixed "internal error:", and are bugs.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws Error(message), with any control character in it (from text echoed out of a file) written as
/// \xNN so that the message stays one line. Kept out of line so call sites stay small.
[[noreturn]] void fail(const std::string& message);

// Messages from strings and numbers, numbers in their shortest round-trip form.
namespace message {

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

}  // namespace message

/// Concatenates strings and numbers into one message.
template <class... Args>
std::string concat(const Args&... args) {
  std::string out;
  (message::append(out, args), ...);
  return out;
}

/// Throws Error with the concatenated message.
template <class... Args>
[[noreturn]] void fail_with(const Args&... args) {
  fail(concat(args...));
}

}  // namespace ecekde
