// Test files: a scratch directory per test, and .npy bytes built by hand (independently of ecekde's
// writer) so that tests can make any version, dtype, order, or a corrupted or truncated file.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

namespace testfiles {

/// A fresh directory for one test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("ecekde-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// The path of `name` inside the directory.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Writes `bytes` to `name` and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p;
  }

 private:
  std::filesystem::path dir_;
};

/// The raw bytes of values of type T (little-endian host).
template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

/// A .npy file as NumPy writes it: magic, version, little-endian header length (2 bytes for 1.0, 4 for
/// 2.0/3.0), the dict padded with spaces to a 64-byte boundary and ended by '\n', then `data`.
inline std::string npy(std::string_view dict, std::string_view data, int major = 1, int minor = 0) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::string header(dict);
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data);
}

/// The header dict NumPy writes for the given dtype, order and shape text, e.g. "(2, 3)".
inline std::string dict(std::string_view descr, bool fortran, std::string_view shape) {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + std::string(shape) + ", }";
}

/// Reads a whole file.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace testfiles

/// Expects `statement` to throw ecekde::Error with exactly `message`.
#define EXPECT_ERROR(statement, message)                                      \
  do {                                                                        \
    try {                                                                     \
      statement;                                                              \
      ADD_FAILURE() << "no ecekde::Error thrown; expected: " << (message);    \
    } catch (const ecekde::Error& e) {                                        \
      EXPECT_EQ(std::string(e.what()), std::string(message));                 \
    }                                                                         \
  } while (false)
