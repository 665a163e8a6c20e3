// The names of ecekde's enumerations, one table per enumeration: what options, flags, keywords and JSON
// fields spell. Each enumeration's header specialises EnumNames next to its declaration.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ecekde {

/// Specialised per enumeration: `what` (the noun used in errors) and `names`, pairs of value and name.
template <class E>
struct EnumNames;

template <class E>
concept NamedEnum = requires {
  EnumNames<E>::what;
  EnumNames<E>::names;
};

namespace detail {
[[noreturn]] void fail_unknown_name(std::string_view what, std::string_view name,
                                    const std::vector<std::string_view>& choices);
}  // namespace detail

/// The name of `value` ("top-label", "loo-likelihood", ...).
template <NamedEnum E>
constexpr std::string_view to_string(E value) {
  for (const auto& [v, name] : EnumNames<E>::names)
    if (v == value) return name;
  return "?";
}

/// Every name of E, in declaration order.
template <NamedEnum E>
std::vector<std::string_view> enum_names() {
  std::vector<std::string_view> out;
  for (const auto& entry : EnumNames<E>::names) out.push_back(entry.second);
  return out;
}

/// The value named `name`; '_' is accepted for '-' ("top_label"). Throws Error naming the choices.
template <NamedEnum E>
E parse_name(std::string_view name) {
  std::string dashed(name);
  for (char& c : dashed)
    if (c == '_') c = '-';
  for (const auto& [v, known] : EnumNames<E>::names)
    if (known == dashed) return v;
  detail::fail_unknown_name(EnumNames<E>::what, name, enum_names<E>());
}

}  // namespace ecekde
