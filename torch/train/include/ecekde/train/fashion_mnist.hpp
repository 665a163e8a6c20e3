// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) as used by the training study: 28 x 28 grey-scale images
// of 10 clothing classes, read from Debian's dataset-fashion-mnist package and split into 50,000
// training, 10,000 validation (held out for temperature scaling and hyperparameter selection) and the
// official 10,000 test images.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ecekde::train {

/// Where Debian's dataset-fashion-mnist installs the four gzip IDX files.
inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Labelled images: example i is pixels[i * rows * cols, (i + 1) * rows * cols) with label labels[i].
struct Dataset {
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;
  std::vector<std::int64_t> labels;
  std::size_t classes = 0;  ///< labels lie in [0, classes)

  std::size_t size() const { return labels.size(); }
};

/// The three splits.
struct FashionMnist {
  Dataset train, validation, test;
};

/// How the official 60,000 training images are split.
struct SplitOptions {
  std::size_t validation = 10000;  ///< images moved to the validation split
  std::uint64_t seed = 0;          ///< the split is a uniformly random subset drawn with ecekde::Rng(seed)
};

/// Reads train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and
/// t10k-labels-idx1-ubyte.gz from `dir` and splits the training files. Both splits keep the files'
/// order. Throws ecekde::Error on a file error (see idx.hpp), image and label counts that differ, a
/// label outside [0, 10), or a validation size not below the training size.
FashionMnist load_fashion_mnist(const std::string& dir = std::string(kFashionMnistDir),
                                const SplitOptions& split = {});

/// One images file and its labels file as a Dataset with `classes` classes (errors as above).
Dataset read_labelled_images(const std::string& images_path, const std::string& labels_path,
                             std::size_t classes = 10);

/// The examples of `data` at `indices` (each < data.size()), in that order.
Dataset select(const Dataset& data, std::span<const std::size_t> indices);

/// The first min(n, size) examples.
Dataset head(const Dataset& data, std::size_t n);

/// A two-class task: the examples of class `negative` (relabelled 0) and `positive` (relabelled 1).
Dataset binary_task(const Dataset& data, std::int64_t negative, std::int64_t positive);

/// "T-shirt/top", "Trouser", ..., "Ankle boot" for labels 0..9.
std::string_view class_name(std::int64_t label);

}  // namespace ecekde::train
