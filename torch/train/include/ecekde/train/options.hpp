// What a training run is: model, objective and optimisation settings. No LibTorch here, so that front
// ends (the ecekde-train tool) compile without its heavy headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ecekde::train {

/// The network.
enum class Architecture {
  /// ResNet-8: a 3x3 convolution of `width` channels, then three basic residual blocks (two 3x3
  /// convolutions with batch normalisation each) of width, 2 width and 4 width channels at strides 1, 2
  /// and 2, global average pooling and a linear layer.
  resnet,
  /// Two hidden layers of `width` ReLU units on the flattened image.
  mlp,
};

struct ModelOptions {
  Architecture architecture = Architecture::resnet;
  int width = 8;        ///< resnet: channels of the first stage; mlp: units per hidden layer
  int outputs = 10;     ///< classes (1 for a binary task: one logit, P(y = 1) = sigmoid)
  int image_rows = 28, image_cols = 28;
};

/// The training loss.
enum class Objective {
  xe,             ///< cross-entropy
  kde_xe,         ///< XE + lambda * canonical ECE^KDE (CE_p^p of the batch; the paper's KDE-XE)
  /// XE + lambda * the debiased canonical CE_2^2 of the batch (KdeForm::debiased: the label noise's pairs
  /// left out of the square; p must be 2)
  kde_xe_debiased,
  mmce,           ///< XE + lambda * MMCE_w (Kumar et al. 2018, weighted, Laplacian kernel)
  focal,          ///< focal loss -(1 - p_y)^gamma log p_y with a fixed gamma
  focal53,        ///< FL-53 (Mukhoti et al. 2020): gamma = 5 where p_y < 0.2, else 3
  mse,            ///< binary: mean (f - y)^2 with f = sigmoid(logit)
  mse_sharpness,  ///< binary, Eq. 6: MSE + gamma * E[E[y|f]^2], the expectation by Eq. 7
};

struct ObjectiveOptions {
  Objective objective = Objective::xe;
  double lambda = 0;                  ///< weight of the kde_xe / mmce regulariser
  double gamma = 3;                   ///< focal: the exponent; mse_sharpness: the weight in [0, 1)
  double p = 1;                       ///< kde_xe: order of the L_p norm (kde_xe_debiased: must be 2)
  std::optional<double> bandwidth;    ///< kde_xe(_debiased), mse_sharpness: fixed h; empty = LOO choice per batch
  double mmce_width = 0.4;            ///< mmce: width of the Laplacian kernel
};

/// One training run.
struct TrainOptions {
  ModelOptions model;
  ObjectiveOptions objective;
  int epochs = 10;
  std::size_t batch_size = 128;   ///< the last incomplete batch of an epoch is dropped
  double learning_rate = 0.1;     ///< SGD with Nesterov momentum, cosine decay to 0 over all steps
  double momentum = 0.9;
  double weight_decay = 5e-4;
  std::uint64_t seed = 0;         ///< initialisation (torch::manual_seed) and batch order (ecekde::Rng)
  int threads = 1;                ///< torch::set_num_threads and the regularisers' threads
  int validate_every = 1;         ///< validation accuracy and loss after every E-th epoch and the last
};

std::string_view to_string(Architecture architecture);  ///< "resnet", "mlp"
Architecture parse_architecture(std::string_view name);  ///< throws ecekde::Error on other names
std::string_view to_string(Objective objective);        ///< "xe", "kde-xe", "kde-xe-debiased", "mmce", "focal", "focal53", "mse", "mse-sharpness"
Objective parse_objective(std::string_view name);        ///< the names above (also with '_'); throws ecekde::Error
bool is_binary(Objective objective);                     ///< mse and mse_sharpness
bool has_lambda(Objective objective);                    ///< kde_xe, kde_xe_debiased and mmce (weighted by lambda)

}  // namespace ecekde::train
