#include "ecekde/train/fashion_mnist.hpp"

#include <algorithm>
#include <array>
#include <numeric>

#include "ecekde/error.hpp"
#include "ecekde/random.hpp"
#include "ecekde/train/idx.hpp"

namespace ecekde::train {

Dataset read_labelled_images(const std::string& images_path, const std::string& labels_path,
                             std::size_t classes) {
  IdxImages images = read_idx_images(images_path);
  const std::vector<std::uint8_t> labels = read_idx_labels(labels_path);
  if (labels.size() != images.count)
    fail(labels_path + ": " + std::to_string(labels.size()) + " labels for the " +
         std::to_string(images.count) + " images of " + images_path);
  Dataset data{images.rows, images.cols, std::move(images.pixels), {}, classes};
  data.labels.reserve(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= classes)
      fail(labels_path + ": label " + std::to_string(labels[i]) + " of item " + std::to_string(i) +
           " is not below " + std::to_string(classes));
    data.labels.push_back(labels[i]);
  }
  return data;
}

FashionMnist load_fashion_mnist(const std::string& dir, const SplitOptions& split) {
  Dataset full = read_labelled_images(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  Dataset test = read_labelled_images(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  if (split.validation >= full.size())
    fail("validation size " + std::to_string(split.validation) + " is not below the " +
         std::to_string(full.size()) + " training images");

  // A partial Fisher-Yates shuffle draws the validation indices; both parts keep the file order.
  std::vector<std::size_t> order(full.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(split.seed);
  for (std::size_t i = 0; i < split.validation; ++i)
    std::swap(order[i], order[i + rng.below(order.size() - i)]);
  std::vector<std::size_t> validation(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(split.validation));
  std::vector<std::size_t> train(order.begin() + static_cast<std::ptrdiff_t>(split.validation), order.end());
  std::sort(validation.begin(), validation.end());
  std::sort(train.begin(), train.end());
  return {select(full, train), select(full, validation), std::move(test)};
}

Dataset select(const Dataset& data, std::span<const std::size_t> indices) {
  const std::size_t pixels = data.rows * data.cols;
  Dataset out{data.rows, data.cols, {}, {}, data.classes};
  out.pixels.reserve(indices.size() * pixels);
  out.labels.reserve(indices.size());
  for (std::size_t i : indices) {
    if (i >= data.size())
      fail("example index " + std::to_string(i) + " is not below the " + std::to_string(data.size()) +
           " examples");
    const auto first = data.pixels.begin() + static_cast<std::ptrdiff_t>(i * pixels);
    out.pixels.insert(out.pixels.end(), first, first + static_cast<std::ptrdiff_t>(pixels));
    out.labels.push_back(data.labels[i]);
  }
  return out;
}

Dataset head(const Dataset& data, std::size_t n) {
  std::vector<std::size_t> indices(std::min(n, data.size()));
  std::iota(indices.begin(), indices.end(), std::size_t{0});
  return select(data, indices);
}

Dataset binary_task(const Dataset& data, std::int64_t negative, std::int64_t positive) {
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < data.size(); ++i)
    if (data.labels[i] == negative || data.labels[i] == positive) indices.push_back(i);
  Dataset out = select(data, indices);
  for (auto& y : out.labels) y = y == positive ? 1 : 0;
  out.classes = 2;
  return out;
}

std::string_view class_name(std::int64_t label) {
  static constexpr std::array<std::string_view, 10> names = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  if (label < 0 || label >= static_cast<std::int64_t>(names.size()))
    fail("Fashion-MNIST has no class " + std::to_string(label));
  return names[static_cast<std::size_t>(label)];
}

}  // namespace ecekde::train
