#include "io/common.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/messages.hpp"

namespace ecekde::io::detail {

using ecekde::detail::concat;
using ecekde::detail::fail_with;

File open_for_reading(const std::string& path) {
  errno = 0;
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) fail_with(path, ": cannot open: ", std::strerror(errno));
  return f;
}

std::size_t read_some(std::FILE* f, const std::string& path, void* out, std::size_t size) {
  if (size == 0) return 0;
  errno = 0;
  const std::size_t got = std::fread(out, 1, size, f);
  if (got < size && std::ferror(f)) fail_with(path, ": cannot read: ", std::strerror(errno));
  return got;
}

std::string read_all(const std::string& path) {
  File f = open_for_reading(path);
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t got = read_some(f.get(), path, buffer, sizeof buffer);
    out.append(buffer, got);
    if (got < sizeof buffer) return out;
  }
}

FileBytes map_or_read(const std::string& path) {
  errno = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_with(path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // a mapping outlives its descriptor
  if (map != MAP_FAILED) {
    const auto size = static_cast<std::size_t>(st.st_size);
    std::shared_ptr<const void> owner(map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
    return {std::string_view(static_cast<const char*>(map), size), std::move(owner), true};
  }
  auto copy = std::make_shared<const std::string>(read_all(path));
  const std::string_view bytes = *copy;
  return {bytes, std::move(copy), false};
}

void write_all(const std::string& path, std::string_view bytes) {
  // Written beside the target and renamed over it when complete: an interrupted or failed write never
  // leaves a partial file under the final name.
  const std::string partial = concat(path, ".partial-", ::getpid());
  errno = 0;
  File f(std::fopen(partial.c_str(), "wb"));
  if (!f) fail_with(path, ": cannot write: ", std::strerror(errno));
  errno = 0;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size();
  int error = errno;
  errno = 0;
  ok = std::fclose(f.release()) == 0 && ok;
  if (ok && std::rename(partial.c_str(), path.c_str()) != 0) ok = false;
  if (!ok) {
    error = error ? error : errno;
    std::remove(partial.c_str());
    fail_with(path, ": cannot write: ", std::strerror(error));
  }
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += ecekde::detail::concat(i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

bool has_extension(std::string_view path, std::string_view extension) {
  if (path.size() < extension.size()) return false;
  const std::string_view tail = path.substr(path.size() - extension.size());
  for (std::size_t i = 0; i < tail.size(); ++i) {
    const char a = tail[i], b = extension[i];
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a) != lower(b)) return false;
  }
  return true;
}

}  // namespace ecekde::io::detail
