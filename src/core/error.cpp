#include "ecekde/error.hpp"
#include "ecekde/names.hpp"

namespace ecekde {

void fail(const std::string& message) { throw Error(message); }

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
