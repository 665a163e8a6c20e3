// Reading IDX files (the format of MNIST and Fashion-MNIST), plain or gzip-compressed.
//
// An IDX file is a 4-byte magic number 00 00 TT DD (TT: element type, 0x08 = unsigned byte; DD: number
// of dimensions), DD big-endian uint32 sizes, then the elements in row-major order. Only unsigned-byte
// files are read here: images have 3 dimensions (count, rows, columns), labels 1 (count). gzip input is
// recognised by its content, not its name (zlib reads uncompressed files unchanged).
//
// Every problem is an ecekde::Error whose one-line message starts with the path, e.g.
//     train-images-idx3-ubyte.gz: bad IDX magic 0x00000801 (expected 0x00000803: unsigned bytes, 3 dimensions)
//     train-images-idx3-ubyte.gz: truncated: the header announces 47040000 bytes of data, the file holds 1000
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ecekde::train {

/// `count` grey-scale images of rows x cols pixels (0 = background), image-major, then row-major.
struct IdxImages {
  std::size_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  ///< count * rows * cols values
};

/// Reads an images file (magic 0x00000803). Throws ecekde::Error when the file is missing or unreadable,
/// is not valid gzip, has a different magic number, has a zero-sized image, is shorter than its header
/// says, or holds bytes beyond that.
IdxImages read_idx_images(const std::string& path);

/// Reads a labels file (magic 0x00000801): one byte per item. Errors as for read_idx_images.
std::vector<std::uint8_t> read_idx_labels(const std::string& path);

}  // namespace ecekde::train
