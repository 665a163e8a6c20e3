// A strict, small XML well-formedness check for the SVG files the CLI writes (no DTDs, CDATA or
// comments, which the writer never emits): one root element, properly nested and closed tags, quoted
// attributes without '<', and only the five predefined or numeric character references.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace xmlcheck {

/// "" if `text` is well-formed XML of the kind above, else what is wrong and where.
inline std::string problem(std::string_view text) {
  std::size_t i = 0;
  auto at = [&](const std::string& what) { return what + " at offset " + std::to_string(i); };
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  auto reference_ok = [&](std::size_t amp) {
    const std::size_t semi = text.find(';', amp);
    if (semi == std::string_view::npos) return false;
    const std::string_view ref = text.substr(amp + 1, semi - amp - 1);
    if (ref == "amp" || ref == "lt" || ref == "gt" || ref == "quot" || ref == "apos") return true;
    if (ref.size() >= 2 && ref[0] == '#') {
      for (std::size_t k = 1; k < ref.size(); ++k)
        if (!std::isxdigit(static_cast<unsigned char>(ref[k])) && !(k == 1 && ref[k] == 'x')) return false;
      return true;
    }
    return false;
  };
  if (text.substr(0, 5) == "<?xml") {
    i = text.find("?>");
    if (i == std::string_view::npos) return "unterminated XML declaration";
    i += 2;
  }
  std::vector<std::string> open;
  bool root_seen = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '&') {
      if (!reference_ok(i)) return at("bad character reference");
      ++i;
      continue;
    }
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) return at("text outside the root element");
      ++i;
      continue;
    }
    ++i;
    const bool closing = i < text.size() && text[i] == '/';
    if (closing) ++i;
    const std::size_t name_start = i;
    while (i < text.size() && name_char(text[i])) ++i;
    const std::string name(text.substr(name_start, i - name_start));
    if (name.empty()) return at("missing element name");
    if (closing) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (i >= text.size() || text[i] != '>') return at("malformed closing tag");
      if (open.empty() || open.back() != name) return at("closing tag </" + name + "> does not match");
      open.pop_back();
      ++i;
      continue;
    }
    if (open.empty() && root_seen) return at("second root element <" + name + ">");
    root_seen = true;
    std::vector<std::string> attributes;
    while (true) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      if (i >= text.size()) return "unterminated tag <" + name + ">";
      if (text[i] == '>') {
        open.push_back(name);
        ++i;
        break;
      }
      if (text.substr(i, 2) == "/>") {
        i += 2;
        break;
      }
      const std::size_t a = i;
      while (i < text.size() && name_char(text[i])) ++i;
      const std::string attribute(text.substr(a, i - a));
      if (attribute.empty() || i + 1 >= text.size() || text[i] != '=' || text[i + 1] != '"')
        return at("malformed attribute in <" + name + ">");
      for (const auto& seen : attributes)
        if (seen == attribute) return at("repeated attribute " + attribute + " in <" + name + ">");
      attributes.push_back(attribute);
      i += 2;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '<') return at("'<' in an attribute value");
        if (text[i] == '&' && !reference_ok(i)) return at("bad character reference in an attribute");
        ++i;
      }
      if (i >= text.size()) return "unterminated attribute value in <" + name + ">";
      ++i;
    }
  }
  if (!open.empty()) return "element <" + open.back() + "> is not closed";
  if (!root_seen) return "no root element";
  return "";
}

/// How many times `needle` occurs in `text`.
inline std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace xmlcheck
