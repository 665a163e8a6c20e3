// The IDX reader and the Fashion-MNIST splits, on small files written here (plain and gzip, valid and
// corrupted).
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "ecekde/error.hpp"
#include "ecekde/train/fashion_mnist.hpp"
#include "ecekde/train/idx.hpp"

namespace {

using namespace ecekde::train;
using Bytes = std::vector<std::uint8_t>;

// The bytes of an unsigned-byte IDX file with the given sizes and payload.
Bytes idx(std::uint32_t magic, const std::vector<std::uint32_t>& sizes, const Bytes& payload) {
  Bytes out;
  std::vector<std::uint32_t> words{magic};
  words.insert(words.end(), sizes.begin(), sizes.end());
  for (std::uint32_t v : words)  // big-endian
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Bytes sequence(std::size_t n, std::uint8_t modulo = 251) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i % modulo);
  return b;
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("ecekde-train-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write(const std::string& name, const Bytes& bytes) const {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }

  std::string write_gz(const std::string& name, const Bytes& bytes) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
    gzclose(f);
    return path(name);
  }

  std::filesystem::path dir_;
};

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(IdxTest, ReadsPlainAndGzipImages) {
  const Bytes pixels = sequence(3 * 4 * 5);
  for (const std::string& p : {write("a.idx", idx(0x803, {3, 4, 5}, pixels)), write_gz("a.gz", idx(0x803, {3, 4, 5}, pixels))}) {
    const IdxImages images = read_idx_images(p);
    EXPECT_EQ(images.count, 3u);
    EXPECT_EQ(images.rows, 4u);
    EXPECT_EQ(images.cols, 5u);
    EXPECT_EQ(images.pixels, pixels);
  }
}

TEST_F(IdxTest, ReadsLabelsAndEmptyFiles) {
  EXPECT_EQ(read_idx_labels(write_gz("l.gz", idx(0x801, {4}, {3, 1, 4, 1}))), (Bytes{3, 1, 4, 1}));
  EXPECT_TRUE(read_idx_labels(write("e.idx", idx(0x801, {0}, {}))).empty());
  EXPECT_EQ(read_idx_images(write("e3.idx", idx(0x803, {0, 28, 28}, {}))).count, 0u);
}

TEST_F(IdxTest, MissingFile) {
  const std::string p = path("absent.gz");
  EXPECT_EQ(error_of([&] { read_idx_images(p); }), p + ": cannot open (No such file or directory)");
}

TEST_F(IdxTest, BadMagic) {
  const std::string labels = write_gz("labels.gz", idx(0x801, {2}, {0, 1}));
  EXPECT_EQ(error_of([&] { read_idx_images(labels); }),
            labels + ": bad IDX magic 0x00000801 (expected 0x00000803: unsigned bytes, 3 dimensions)");
  const std::string images = write("images.idx", idx(0x803, {1, 1, 1}, {7}));
  EXPECT_EQ(error_of([&] { read_idx_labels(images); }),
            images + ": bad IDX magic 0x00000803 (expected 0x00000801: unsigned bytes, 1 dimension)");
  const std::string floats = write("floats.idx", idx(0xD01, {1}, {0, 0, 0, 0}));
  EXPECT_EQ(error_of([&] { read_idx_labels(floats); }),
            floats + ": bad IDX magic 0x00000d01 (expected 0x00000801: unsigned bytes, 1 dimension)");
}

TEST_F(IdxTest, TruncatedHeaderAndData) {
  const std::string header = write("h.idx", Bytes{0, 0, 8, 3, 0, 0});
  EXPECT_EQ(error_of([&] { read_idx_images(header); }),
            header + ": truncated: the file ends inside the header (sizes)");
  const std::string magic = write("m.idx", Bytes{0, 0});
  EXPECT_EQ(error_of([&] { read_idx_labels(magic); }),
            magic + ": truncated: the file ends inside the header (magic number)");
  const std::string data = write_gz("d.gz", idx(0x803, {10, 28, 28}, sequence(1000)));
  EXPECT_EQ(error_of([&] { read_idx_images(data); }),
            data + ": truncated: the header announces 7840 bytes of data, the file holds 1000");
  // A corrupted header announcing terabytes fails as truncated, without allocating them.
  const std::string huge = write("huge.idx", idx(0x803, {0xFFFFFFFF, 0xFFFF, 0xFF}, sequence(10)));
  EXPECT_EQ(error_of([&] { read_idx_images(huge); }),
            huge + ": truncated: the header announces 71775023827845375 bytes of data, the file holds 10");
}

TEST_F(IdxTest, TrailingBytes) {
  const std::string p = write("t.idx", idx(0x801, {3}, {1, 2, 3, 4, 5}));
  EXPECT_EQ(error_of([&] { read_idx_labels(p); }), p + ": 2 bytes beyond the 3 bytes of data the header announces");
}

TEST_F(IdxTest, CorruptGzip) {
  const std::string good = write_gz("g.gz", idx(0x801, {2000}, sequence(2000, 7)));
  std::ifstream in(good, std::ios::binary);
  Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() / 2);  // a gzip stream cut in the middle
  const std::string cut = write("cut.gz", bytes);
  EXPECT_EQ(error_of([&] { read_idx_labels(cut); }), cut + ": not a readable gzip stream (unexpected end of file)");
}

// Four IDX files in Fashion-MNIST's layout: `train` training and `test` test images of 2 x 3 pixels
// whose first pixel is the image's index and whose label is its index modulo 10.
void write_fashion(const std::string& dir, std::uint32_t train, std::uint32_t test) {
  for (auto [prefix, n] : {std::pair{std::string("train"), train}, std::pair{std::string("t10k"), test}}) {
    Bytes pixels(n * 6), labels(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      pixels[i * 6] = static_cast<std::uint8_t>(i);
      labels[i] = static_cast<std::uint8_t>(i % 10);
    }
    for (auto [name, bytes] : {std::pair{prefix + "-images-idx3-ubyte.gz", idx(0x803, {n, 2, 3}, pixels)},
                               std::pair{prefix + "-labels-idx1-ubyte.gz", idx(0x801, {n}, labels)}}) {
      gzFile f = gzopen((dir + "/" + name).c_str(), "wb");
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(f);
    }
  }
}

TEST_F(IdxTest, SplitsAreDisjointReproducibleAndOrdered) {
  write_fashion(dir_.string(), 60, 20);
  const FashionMnist a = load_fashion_mnist(dir_.string(), {15, 3});
  ASSERT_EQ(a.train.size(), 45u);
  ASSERT_EQ(a.validation.size(), 15u);
  ASSERT_EQ(a.test.size(), 20u);
  EXPECT_EQ(a.train.rows, 2u);
  EXPECT_EQ(a.train.cols, 3u);
  std::set<int> seen;
  for (const Dataset* d : {&a.train, &a.validation}) {
    int previous = -1;
    for (std::size_t i = 0; i < d->size(); ++i) {
      const int index = d->pixels[i * 6];
      EXPECT_GT(index, previous);  // file order kept
      previous = index;
      EXPECT_EQ(d->labels[i], index % 10);
      EXPECT_TRUE(seen.insert(index).second);
    }
  }
  EXPECT_EQ(seen.size(), 60u);
  const FashionMnist b = load_fashion_mnist(dir_.string(), {15, 3});
  EXPECT_EQ(a.validation.pixels, b.validation.pixels);
  const FashionMnist c = load_fashion_mnist(dir_.string(), {15, 4});
  EXPECT_NE(a.validation.pixels, c.validation.pixels);
  EXPECT_EQ(error_of([&] { load_fashion_mnist(dir_.string(), {60, 0}); }),
            "validation size 60 is not below the 60 training images");
}

TEST_F(IdxTest, LabelErrors) {
  const std::string images = write("i.idx", idx(0x803, {3, 1, 1}, {0, 1, 2}));
  const std::string two = write("two.idx", idx(0x801, {2}, {0, 1}));
  EXPECT_EQ(error_of([&] { read_labelled_images(images, two); }), two + ": 2 labels for the 3 images of " + images);
  const std::string big = write("big.idx", idx(0x801, {3}, {0, 10, 1}));
  EXPECT_EQ(error_of([&] { read_labelled_images(images, big); }), big + ": label 10 of item 1 is not below 10");
}

TEST_F(IdxTest, BinaryTaskAndSelect) {
  const std::string images = write("i.idx", idx(0x803, {5, 1, 1}, {10, 11, 12, 13, 14}));
  const std::string labels = write("l.idx", idx(0x801, {5}, {6, 0, 3, 0, 6}));
  const Dataset d = read_labelled_images(images, labels);
  const Dataset b = binary_task(d, 0, 6);
  EXPECT_EQ(b.classes, 2u);
  EXPECT_EQ(b.pixels, (Bytes{10, 11, 13, 14}));
  EXPECT_EQ(b.labels, (std::vector<std::int64_t>{1, 0, 0, 1}));
  const std::vector<std::size_t> rows{4, 0};
  EXPECT_EQ(select(d, rows).pixels, (Bytes{14, 10}));
  EXPECT_EQ(head(d, 2).labels, (std::vector<std::int64_t>{6, 0}));
  const std::vector<std::size_t> bad{5};
  EXPECT_EQ(error_of([&] { select(d, bad); }), "example index 5 is not below the 5 examples");
  EXPECT_EQ(class_name(6), "Shirt");
  EXPECT_EQ(error_of([&] { class_name(10); }), "Fashion-MNIST has no class 10");
}

}  // namespace
