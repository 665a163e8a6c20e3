#include "ecekde/train/models.hpp"

#include <string>

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "ecekde/error.hpp"

namespace ecekde::train {

namespace {

namespace nn = ::torch::nn;

nn::Conv2d conv(int in, int out, int kernel, int stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// Two 3x3 convolutions with batch normalisation and a shortcut (a 1x1 projection where the shape changes).
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int in, int out, int stride)
      : conv1_(register_module("conv1", conv(in, out, 3, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", conv(out, out, 3, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module("shortcut", conv(in, out, 1, stride));
      shortcut_bn_ = register_module("shortcut_bn", nn::BatchNorm2d(out));
    }
  }

  at::Tensor forward(const at::Tensor& x) {
    at::Tensor y = bn2_(conv2_(bn1_(conv1_(x)).relu()));
    return (y + (shortcut_ ? shortcut_bn_(shortcut_(x)) : x)).relu();
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Conv2d shortcut_{nullptr};
  nn::BatchNorm2d shortcut_bn_{nullptr};
};

class ResNet8 : public Classifier {
 public:
  ResNet8(int width, int outputs)
      : stem_(register_module("stem", conv(1, width, 3, 1))),
        stem_bn_(register_module("stem_bn", nn::BatchNorm2d(width))),
        stage1_(register_module("stage1", std::make_shared<BasicBlock>(width, width, 1))),
        stage2_(register_module("stage2", std::make_shared<BasicBlock>(width, 2 * width, 2))),
        stage3_(register_module("stage3", std::make_shared<BasicBlock>(2 * width, 4 * width, 2))),
        head_(register_module("head", nn::Linear(4 * width, outputs))) {}

  at::Tensor forward(const at::Tensor& images) override {
    at::Tensor x = stem_bn_(stem_(images)).relu();
    x = stage3_->forward(stage2_->forward(stage1_->forward(x)));
    return head_(x.mean({2, 3}));
  }

 private:
  nn::Conv2d stem_;
  nn::BatchNorm2d stem_bn_;
  std::shared_ptr<BasicBlock> stage1_, stage2_, stage3_;
  nn::Linear head_;
};

// A fully connected layer computed as a 1x1 convolution: the same affine map and the same default
// initialisation as nn::Linear, but run by oneDNN. Debian's LibTorch sends nn::Linear to the reference
// BLAS, which made the MLP about 7 times slower on the study's machine.
class Dense : public nn::Module {
 public:
  Dense(int inputs, int outputs) : conv_(register_module("conv", nn::Conv2d(nn::Conv2dOptions(inputs, outputs, 1)))) {}

  at::Tensor forward(const at::Tensor& x) { return conv_(x.reshape({x.size(0), x.size(1), 1, 1})).flatten(1); }

 private:
  nn::Conv2d conv_;
};

class Mlp : public Classifier {
 public:
  Mlp(int inputs, int width, int outputs)
      : hidden1_(register_module("hidden1", std::make_shared<Dense>(inputs, width))),
        hidden2_(register_module("hidden2", std::make_shared<Dense>(width, width))),
        head_(register_module("head", std::make_shared<Dense>(width, outputs))) {}

  at::Tensor forward(const at::Tensor& images) override {
    return head_->forward(hidden2_->forward(hidden1_->forward(images.flatten(1)).relu()).relu());
  }

 private:
  std::shared_ptr<Dense> hidden1_, hidden2_, head_;
};

}  // namespace

std::shared_ptr<Classifier> make_model(const ModelOptions& o) {
  if (o.width < 1) fail("model width must be at least 1, got " + std::to_string(o.width));
  if (o.outputs < 1) fail("model outputs must be at least 1, got " + std::to_string(o.outputs));
  if (o.image_rows < 1 || o.image_cols < 1)
    fail("images must have at least 1 x 1 pixels, got " + std::to_string(o.image_rows) + " x " +
         std::to_string(o.image_cols));
  if (o.architecture == Architecture::resnet) return std::make_shared<ResNet8>(o.width, o.outputs);
  return std::make_shared<Mlp>(o.image_rows * o.image_cols, o.width, o.outputs);
}

}  // namespace ecekde::train
