// The networks of the training study (LibTorch modules).
#pragma once

#include <memory>

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include "ecekde/train/options.hpp"

namespace ecekde::train {

/// A network from images to logits.
class Classifier : public ::torch::nn::Module {
 public:
  /// images: n x 1 x rows x cols floats; returns n x outputs logits.
  virtual at::Tensor forward(const at::Tensor& images) = 0;
};

/// A freshly initialised network (LibTorch's default initialisation, drawn from its global generator:
/// call torch::manual_seed first for a reproducible one). Throws ecekde::Error on a width or output
/// count below 1.
std::shared_ptr<Classifier> make_model(const ModelOptions& options);

}  // namespace ecekde::train
