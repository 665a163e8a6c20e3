// NPY format versions 1.0, 2.0 and 3.0 (numpy.lib.format): a magic string, a version, a header length
// and a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}, then the raw data.
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/messages.hpp"
#include "ecekde/io.hpp"
#include "io/common.hpp"

namespace ecekde::io {

using ecekde::detail::concat;
using ecekde::detail::fail_with;

namespace {

constexpr std::string_view kMagic{"\x93NUMPY", 6};

struct TypeEntry {
  char kind;
  std::size_t size;
  NpyType type;
  std::string_view descr;  // what write_npy writes
};

constexpr TypeEntry kTypes[] = {
    {'f', 4, NpyType::float32, "<f4"}, {'f', 8, NpyType::float64, "<f8"}, {'i', 1, NpyType::int8, "|i1"},
    {'u', 1, NpyType::uint8, "|u1"},   {'i', 2, NpyType::int16, "<i2"},   {'u', 2, NpyType::uint16, "<u2"},
    {'i', 4, NpyType::int32, "<i4"},   {'u', 4, NpyType::uint32, "<u4"},  {'i', 8, NpyType::int64, "<i8"},
    {'u', 8, NpyType::uint64, "<u8"},  {'b', 1, NpyType::boolean, "|b1"},
};

const TypeEntry& entry(NpyType type) {
  for (const auto& e : kTypes)
    if (e.type == type) return e;
  ECEKDE_ASSERT(false);
  return kTypes[0];
}

[[noreturn]] void unsupported_dtype(const std::string& path, const std::string& descr) {
  fail_with(path, ": unsupported dtype '", descr,
            "' (expected float32/float64 probabilities or integer/boolean labels, little-endian)");
}

// "<f8" -> float64; rejects big-endian, object and other dtypes with a message.
NpyType parse_descr(const std::string& path, const std::string& descr) {
  const auto unsupported = [&] { unsupported_dtype(path, descr); };
  if (descr.size() < 2) unsupported();
  const char order = descr[0], kind = descr[1];
  if (kind == 'O') fail_with(path, ": object arrays (dtype '", descr, "') are not supported");
  if (order != '<' && order != '>' && order != '|' && order != '=') unsupported();
  std::size_t size = 0;
  const std::string_view digits = std::string_view(descr).substr(2);
  if (digits.empty() || digits.size() > 2 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    unsupported();
  for (char c : digits) size = size * 10 + static_cast<std::size_t>(c - '0');
  for (const auto& e : kTypes) {
    if (e.kind != kind || e.size != size) continue;
    if (size > 1 && order == '>')
      fail_with(path, ": big-endian dtype '", descr, "' is not supported (save it little-endian, e.g. a.astype('<",
                descr.substr(1), "'))");
    if (size > 1 && order == '|') unsupported();
    return e.type;
  }
  unsupported_dtype(path, descr);
}

// The header dict, parsed by a small recursive-descent reader of the Python literals NumPy writes.
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::size_t>> shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  Header parse() {
    Header h;
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = parse_string("a quoted key");
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[') fail_with(path_, ": structured dtypes are not supported");
        h.descr = parse_string("a quoted dtype for 'descr'");
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        h.shape = parse_shape();
      } else {
        skip_value();
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after '}'");
    const auto require = [&](bool present, const char* key) {
      if (!present) fail_with(path_, ": malformed NPY header: no '", key, "' key in ", quoted());
    };
    require(h.descr.has_value(), "descr");
    require(h.fortran_order.has_value(), "fortran_order");
    require(h.shape.has_value(), "shape");
    return h;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (peek() != c) error(concat("expected '", c, "'"));
    ++pos_;
  }

  std::string quoted() const {
    std::string s;
    for (char c : text_.substr(0, 200)) s += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return concat('"', s, text_.size() > 200 ? "...\"" : "\"");
  }

  [[noreturn]] void error(const std::string& what) const {
    fail_with(path_, ": malformed NPY header: ", what, " at character ", pos_, " of ", quoted());
  }

  std::string parse_string(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') error(concat("expected ", what));
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != q) ++pos_;
    if (pos_ == text_.size()) error("unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool parse_bool() {
    for (std::string_view word : {"True", "False"}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return word == "True";
      }
    }
    error("expected True or False for 'fortran_order'");
  }

  std::vector<std::size_t> parse_shape() {
    std::vector<std::size_t> shape;
    expect('(');
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') error("expected a non-negative integer in 'shape'");
      std::size_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const auto d = static_cast<std::size_t>(peek() - '0');
        if (v > (std::numeric_limits<std::size_t>::max() - d) / 10) error("dimension too large in 'shape'");
        v = v * 10 + d;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals
      shape.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') error("expected ',' or ')' in 'shape'");
    }
    ++pos_;
    return shape;
  }

  // Skips the value of a key this reader does not use: a string or a bracketed literal or a word.
  void skip_value() {
    if (peek() == '\'' || peek() == '"') {
      parse_string("a value");
      return;
    }
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) return;
        --depth;
      }
      if (c == ',' && depth == 0) return;
      ++pos_;
    }
  }

  const std::string& path_;
  std::string_view text_;
  std::size_t pos_ = 0;
};

std::uint32_t little_endian(const unsigned char* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void swap_bytes(void* data, std::size_t count, std::size_t size) {
  auto* p = static_cast<unsigned char*>(data);
  for (std::size_t i = 0; i < count; ++i, p += size) std::reverse(p, p + size);
}

template <class T>
void write_array(const std::string& path, std::span<const T> data, const std::vector<std::size_t>& shape,
                 NpyType type) {
  std::size_t count = 1;
  for (std::size_t d : shape) count *= d;
  if (count != data.size())
    fail_with(path, ": cannot write: shape ", detail::shape_text(shape), " holds ", count, " elements, the data has ",
              data.size());
  std::string header = concat("{'descr': '", entry(type).descr, "', 'fortran_order': False, 'shape': ",
                              detail::shape_text(shape), ", }");
  // Pad with spaces so that the data starts at a multiple of 64 bytes, and end with a newline.
  const auto padding = [&](std::size_t prefix) { return (64 - (prefix + header.size() + 1) % 64) % 64; };
  const bool v1 = header.size() + 1 + padding(10) <= 65535;
  const std::size_t prefix = v1 ? 10 : 12;
  header.append(padding(prefix), ' ');
  header += '\n';
  std::string bytes(kMagic);
  bytes += static_cast<char>(v1 ? 1 : 2);
  bytes += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header;
  const std::size_t start = bytes.size();
  bytes.resize(start + data.size_bytes());
  if (!data.empty()) std::memcpy(bytes.data() + start, data.data(), data.size_bytes());
  if constexpr (std::endian::native == std::endian::big) swap_bytes(bytes.data() + start, data.size(), sizeof(T));
  detail::write_all(path, bytes);
}

}  // namespace

std::size_t item_size(NpyType type) { return entry(type).size; }

namespace detail {

// Parses the bytes of an .npy file; the data is used in place when `in_place` (then `owner` keeps the
// bytes alive) and it is aligned for its type, else copied into aligned storage.
struct NpyReader {
  static NpyArray parse(const std::string& path, std::string_view file, std::shared_ptr<const void> owner,
                        bool in_place) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(file.data());
    const std::size_t got = file.size();
    if (got == 0) fail_with(path, ": not an NPY file (the file is empty)");
    if (std::memcmp(bytes, kMagic.data(), std::min<std::size_t>(got, kMagic.size())) != 0)
      fail_with(path, ": not an NPY file (it does not start with the magic string \\x93NUMPY)");
    if (got < 8) fail_with(path, ": truncated NPY header (the file has only ", got, " bytes)");
    const int major = bytes[6], minor = bytes[7];
    if (major < 1 || major > 3 || minor != 0)
      fail_with(path, ": unsupported NPY format version ", major, ".", minor, " (expected 1.0, 2.0 or 3.0)");
    const std::size_t length_bytes = major == 1 ? 2 : 4, header_start = 8 + length_bytes;
    if (got < header_start) fail_with(path, ": truncated NPY header (the file ends inside the header length)");
    const std::size_t header_size = little_endian(bytes + 8, length_bytes);
    if (got - header_start < header_size)
      fail_with(path, ": truncated NPY header (it should be ", header_size, " bytes, the file has ",
                got - header_start, ")");

    const Header h = HeaderParser(path, file.substr(header_start, header_size)).parse();
    NpyArray a;
    a.path_ = path;
    a.descr_ = *h.descr;
    a.type_ = parse_descr(path, a.descr_);
    a.shape_ = *h.shape;
    a.fortran_order_ = *h.fortran_order;
    const std::size_t item = item_size(a.type_);
    std::size_t count = 1;
    constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
    for (std::size_t d : a.shape_) {
      if (d != 0 && count > kMax / item / d) fail_with(path, ": shape ", shape_text(a.shape_), " is too large");
      count *= d;
    }
    a.size_ = count;
    const std::size_t data_bytes = count * item, data_start = header_start + header_size;
    if (got - data_start < data_bytes)
      fail_with(path, ": truncated data: shape ", shape_text(a.shape_), " of '", a.descr_, "' needs ", data_bytes,
                " bytes, the file has ", got - data_start);
    const unsigned char* data = bytes + data_start;
    const bool native = std::endian::native == std::endian::little || item == 1;
    if (in_place && native && reinterpret_cast<std::uintptr_t>(data) % item == 0) {
      a.data_ = data;
      a.owner_ = std::move(owner);
      a.mapped_ = true;
      return a;
    }
    auto storage = std::make_shared<std::vector<std::uint64_t>>((data_bytes + 7) / 8);  // 8-byte aligned
    if (data_bytes > 0) std::memcpy(storage->data(), data, data_bytes);
    if (!native) swap_bytes(storage->data(), count, item);
    a.data_ = storage->data();
    a.owner_ = std::move(storage);
    return a;
  }
};

}  // namespace detail

NpyArray read_npy(const std::string& path) {
  detail::FileBytes file = detail::map_or_read(path);
  return detail::NpyReader::parse(path, file.bytes, std::move(file.owner), file.mapped);
}

NpyArray parse_npy(const std::string& name, std::string_view bytes) {
  return detail::NpyReader::parse(name, bytes, nullptr, false);
}

void write_npy(const std::string& path, std::span<const double> data, const std::vector<std::size_t>& shape) {
  write_array(path, data, shape, NpyType::float64);
}
void write_npy(const std::string& path, std::span<const float> data, const std::vector<std::size_t>& shape) {
  write_array(path, data, shape, NpyType::float32);
}
void write_npy(const std::string& path, std::span<const std::int64_t> data,
               const std::vector<std::size_t>& shape) {
  write_array(path, data, shape, NpyType::int64);
}
void write_npy(const std::string& path, std::span<const std::int32_t> data,
               const std::vector<std::size_t>& shape) {
  write_array(path, data, shape, NpyType::int32);
}

}  // namespace ecekde::io
