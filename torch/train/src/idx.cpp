#include "ecekde/train/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "ecekde/error.hpp"

namespace ecekde::train {

namespace {

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// A gzip (or plain) input file: exact-size reads that name the file in every error.
class GzInput {
 public:
  explicit GzInput(const std::string& path) : path_(path) {
    // Open with stdio first: zlib reports a missing file without its reason.
    std::FILE* probe = std::fopen(path.c_str(), "rb");
    if (!probe) fail(path + ": cannot open (" + std::strerror(errno) + ")");
    std::fclose(probe);
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) fail(path + ": cannot open");
  }

  // Reads up to `size` bytes; returns how many were read (fewer only at the end of the data).
  std::size_t read(void* out, std::size_t size) {
    auto* p = static_cast<unsigned char*>(out);
    std::size_t done = 0;
    while (done < size) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(size - done, 1u << 30));
      const int got = gzread(file_.get(), p + done, chunk);
      // zlib may return the bytes before a defect first and report the defect only through gzerror.
      int code = Z_OK;
      const char* message = gzerror(file_.get(), &code);
      if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
        std::string reason = message && *message ? message : "unknown zlib error";
        if (reason.starts_with(path_ + ": ")) reason.erase(0, path_.size() + 2);  // zlib prefixes the path
        fail(path_ + ": not a readable gzip stream (" + reason + ")");
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

  std::uint32_t read_u32(const char* what) {
    std::array<unsigned char, 4> b{};
    if (read(b.data(), 4) != 4) fail(path_ + ": truncated: the file ends inside the header (" + what + ")");
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  }

  // Reads exactly `size` bytes of data and requires the file to end there. Reads in chunks so that a
  // corrupted header announcing terabytes fails as truncated instead of allocating them.
  std::vector<std::uint8_t> read_payload(std::size_t size) {
    constexpr std::size_t chunk = std::size_t{1} << 24;
    std::vector<std::uint8_t> data;
    std::size_t got = 0;
    while (got < size) {
      data.resize(got + std::min(chunk, size - got));
      const std::size_t n = read(data.data() + got, data.size() - got);
      got += n;
      if (got < data.size()) break;
    }
    if (got != size)
      fail(path_ + ": truncated: the header announces " + std::to_string(size) +
           " bytes of data, the file holds " + std::to_string(got));
    unsigned char extra[4096];
    std::size_t beyond = 0;
    for (std::size_t n; (n = read(extra, sizeof extra)) > 0;) beyond += n;
    if (beyond > 0)
      fail(path_ + ": " + std::to_string(beyond) + " bytes beyond the " + std::to_string(size) +
           " bytes of data the header announces");
    return data;
  }

 private:
  struct Closer {
    void operator()(gzFile f) const { gzclose(f); }
  };
  std::string path_;
  std::unique_ptr<gzFile_s, Closer> file_;
};

// Reads the magic number and the sizes of an unsigned-byte IDX file with `dims` dimensions.
std::vector<std::size_t> read_header(GzInput& in, const std::string& path, std::uint32_t dims) {
  const std::uint32_t expected = 0x0800u | dims;
  const std::uint32_t magic = in.read_u32("magic number");
  if (magic != expected)
    fail(path + ": bad IDX magic " + hex32(magic) + " (expected " + hex32(expected) + ": unsigned bytes, " +
         std::to_string(dims) + (dims == 1 ? " dimension)" : " dimensions)"));
  std::vector<std::size_t> sizes(dims);
  for (std::uint32_t d = 0; d < dims; ++d) sizes[d] = in.read_u32("sizes");
  return sizes;
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  GzInput in(path);
  const auto sizes = read_header(in, path, 3);
  if (sizes[1] == 0 || sizes[2] == 0)
    fail(path + ": images of " + std::to_string(sizes[1]) + " x " + std::to_string(sizes[2]) +
         " pixels (expected at least 1 x 1)");
  std::size_t total = 0;
  if (__builtin_mul_overflow(sizes[0], sizes[1], &total) || __builtin_mul_overflow(total, sizes[2], &total))
    fail(path + ": the header announces more bytes than memory can address");
  return IdxImages{sizes[0], sizes[1], sizes[2], in.read_payload(total)};
}

std::vector<std::uint8_t> read_idx_labels(const std::string& path) {
  GzInput in(path);
  const auto sizes = read_header(in, path, 1);
  return in.read_payload(sizes[0]);
}

}  // namespace ecekde::train
