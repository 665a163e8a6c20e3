// Shared by the io module: file access through C stdio with ecekde::Error messages naming the file, and
// message helpers.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ecekde::io::detail {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

/// Opens `path` for reading; throws "PATH: cannot open: <reason>".
File open_for_reading(const std::string& path);

/// Reads up to `size` bytes; returns how many were read (fewer only at the end of the file). Throws
/// "PATH: cannot read: <reason>" on a read error (e.g. the path is a directory).
std::size_t read_some(std::FILE* f, const std::string& path, void* out, std::size_t size);

/// The whole file as a string.
std::string read_all(const std::string& path);

/// A file's bytes and what keeps them alive: the file mapped read-only where the system allows (a
/// non-empty regular file), else a copy read through stdio (pipes, special files, empty files).
struct FileBytes {
  std::string_view bytes;
  std::shared_ptr<const void> owner;
  bool mapped = false;
};

/// Throws like open_for_reading / read_some.
FileBytes map_or_read(const std::string& path);

/// Writes the whole of `bytes` to `path` (io::write_file); throws "PATH: cannot write: <reason>".
void write_all(const std::string& path, std::string_view bytes);

/// A shape as Python writes it: "(3,)", "(3, 4)", "()".
std::string shape_text(const std::vector<std::size_t>& shape);

/// True when `path` ends with `extension` (e.g. ".npy"), ignoring ASCII case.
bool has_extension(std::string_view path, std::string_view extension);

}  // namespace ecekde::io::detail
