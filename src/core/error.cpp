#include "ecekde/error.hpp"
#include "ecekde/names.hpp"

namespace ecekde {

// Messages echo text from the user's files (a dtype, a cell, a column name); control characters in it
// are written as \xNN, so a message is always one printable line.
void fail(const std::string& message) {
  std::string line;
  line.reserve(message.size());
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      line += c;
      continue;
    }
    constexpr char kHex[] = "0123456789abcdef";
    line += "\\x";
    line += kHex[u >> 4];
    line += kHex[u & 15];
  }
  throw Error(line);
}

}  // namespace ecekde

namespace ecekde::detail {

void fail_unknown_name(std::string_view what, std::string_view name, const std::vector<std::string_view>& choices) {
  std::string message = "unknown ";
  message.append(what).append(" '").append(name).append("' (expected ");
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) message.append(i + 1 == choices.size() ? " or " : ", ");
    message.append(choices[i]);
  }
  message.append(")");
  fail(message);
}

}  // namespace ecekde::detail
