#include "option_flags.hpp"

namespace ecekde::cli {

std::string flag_name(std::string_view name, std::string_view prefix) {
  std::string flag(prefix);
  for (char c : name) flag += c == '_' ? '-' : c;
  return flag;
}

std::string flag_type_name(options::Kind kind, std::string_view none_word) {
  if (!none_word.empty()) return std::string(none_word) + "|" + flag_type_name(kind, {});
  switch (kind) {
    case options::Kind::flag: return "";
    case options::Kind::integer: return "INT";
    case options::Kind::count: return "UINT";
    case options::Kind::real: return "FLOAT";
    case options::Kind::real_list: return "H,H,...";
    case options::Kind::index_list: return "C,C,...";
    case options::Kind::choice: return "NAME";
    case options::Kind::text: return "TEXT";
  }
  return "";
}

}  // namespace ecekde::cli
