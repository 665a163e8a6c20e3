#include "ecekde/train/trainer.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <numbers>
#include <numeric>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include "ecekde/error.hpp"
#include "ecekde/random.hpp"
#include "ecekde/train/models.hpp"
#include "ecekde/train/objectives.hpp"

namespace ecekde::train {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A Dataset as tensors: pixels stay uint8 (a quarter of the memory) until a batch is drawn.
struct Tensors {
  at::Tensor pixels;  // n x 1 x rows x cols, uint8
  at::Tensor labels;  // n, int64
};

Tensors to_tensors(const Dataset& d) {
  const auto n = static_cast<std::int64_t>(d.size());
  auto pixels = at::from_blob(const_cast<std::uint8_t*>(d.pixels.data()),
                              {n, 1, static_cast<std::int64_t>(d.rows), static_cast<std::int64_t>(d.cols)}, at::kByte);
  auto labels = at::from_blob(const_cast<std::int64_t*>(d.labels.data()), {n}, at::kLong);
  return {pixels.clone(), labels.clone()};
}

// The mean and standard deviation of the training pixels (in [0, 1]) that standardise every input.
struct Standardizer {
  double mean = 0, sd = 1;

  explicit Standardizer(const Dataset& train) {
    double sum = 0, sum2 = 0;
    for (std::uint8_t v : train.pixels) {
      sum += v / 255.0;
      sum2 += (v / 255.0) * (v / 255.0);
    }
    const auto n = static_cast<double>(train.pixels.size());
    mean = sum / n;
    sd = std::sqrt(std::max(sum2 / n - mean * mean, 1e-12));
  }

  at::Tensor operator()(const at::Tensor& pixels) const { return (pixels.to(at::kFloat) / 255 - mean) / sd; }
};

void check_options(const TrainOptions& o, const Dataset& train) {
  if (o.epochs < 1) fail("epochs must be at least 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 3) fail("batch size must be at least 3, got " + std::to_string(o.batch_size));
  if (train.size() < o.batch_size)
    fail("the " + std::to_string(train.size()) + " training examples do not fill one batch of " +
         std::to_string(o.batch_size));
  if (!(o.learning_rate > 0)) fail("learning rate must be > 0, got " + std::to_string(o.learning_rate));
  if (o.threads < 1) fail("threads must be at least 1, got " + std::to_string(o.threads));
  if (o.validate_every < 1) fail("validate-every must be at least 1, got " + std::to_string(o.validate_every));
  const Objective obj = o.objective.objective;
  if (is_binary(obj) && train.classes != 2)
    fail("objective " + std::string(to_string(obj)) + " needs a two-class data set, got " +
         std::to_string(train.classes) + " classes");
  if (obj == Objective::mse_sharpness && !(o.objective.gamma >= 0 && o.objective.gamma < 1))
    fail("gamma of mse-sharpness must lie in [0, 1), got " + std::to_string(o.objective.gamma));
  if (has_lambda(obj) && !(o.objective.lambda >= 0 && std::isfinite(o.objective.lambda)))
    fail("lambda must be a finite number >= 0, got " + std::to_string(o.objective.lambda));
  if (obj == Objective::kde_xe && !(o.objective.p >= 1 && std::isfinite(o.objective.p)))
    fail("p of kde-xe must be a finite number >= 1, got " + std::to_string(o.objective.p));
  if (obj == Objective::kde_xe_debiased && o.objective.p != 2)
    fail("kde-xe-debiased estimates CE_2^2 and needs p = 2, got " + std::to_string(o.objective.p));
}

// A network, its optimiser and the learning-rate schedule.
class Learner {
 public:
  Learner(const TrainOptions& o, const Dataset& train, std::size_t total_steps)
      : options_(o), total_steps_(static_cast<double>(total_steps)) {
    ModelOptions m = o.model;
    m.outputs = is_binary(o.objective.objective) ? 1 : static_cast<int>(train.classes);
    m.image_rows = static_cast<int>(train.rows);
    m.image_cols = static_cast<int>(train.cols);
    ::torch::manual_seed(o.seed);
    model_ = make_model(m);
    optimizer_ = std::make_unique<::torch::optim::SGD>(
        model_->parameters(), ::torch::optim::SGDOptions(o.learning_rate)
                                  .momentum(o.momentum)
                                  .nesterov(o.momentum > 0)
                                  .weight_decay(o.weight_decay));
  }

  Classifier& model() { return *model_; }

  // One optimisation step on (x, y); returns the loss and the logits (detached).
  std::pair<Loss, at::Tensor> step(const at::Tensor& x, const at::Tensor& y) {
    const double lr = options_.learning_rate * 0.5 * (1 + std::cos(std::numbers::pi * step_ / total_steps_));
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
    ++step_;
    model_->train();
    optimizer_->zero_grad();
    at::Tensor logits = model_->forward(x);
    Loss loss = compute_loss(logits, y, options_.objective, options_.threads);
    loss.total.backward();
    optimizer_->step();
    return {std::move(loss), logits.detach()};
  }

 private:
  TrainOptions options_;
  double total_steps_;
  double step_ = 0;
  std::shared_ptr<Classifier> model_;
  std::unique_ptr<::torch::optim::SGD> optimizer_;
};

at::Tensor predict(Classifier& model, const Tensors& data, const Standardizer& standardize) {
  ::torch::NoGradGuard no_grad;
  model.eval();
  std::vector<at::Tensor> parts;
  const std::int64_t n = data.pixels.size(0), chunk = 1000;
  for (std::int64_t i = 0; i < n; i += chunk)
    parts.push_back(model.forward(standardize(data.pixels.slice(0, i, std::min(n, i + chunk)))));
  return at::cat(parts).to(at::kDouble).reshape({n, -1}).contiguous();
}

std::vector<double> to_vector(const at::Tensor& t) {
  const double* p = t.data_ptr<double>();
  return {p, p + t.numel()};
}

// The order of the training examples in an epoch: a Fisher-Yates shuffle with ecekde::Rng.
at::Tensor epoch_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), std::int64_t{0});
  Rng rng = Rng::stream(seed, epoch);
  for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return at::from_blob(order.data(), {static_cast<std::int64_t>(n)}, at::kLong).clone();
}

}  // namespace

TrainedPredictions train_and_predict(const Dataset& train, const Dataset& validation, const Dataset& test,
                                     const TrainOptions& o, const EpochCallback& on_epoch) {
  check_options(o, train);
  at::set_num_threads(o.threads);
  const bool binary = is_binary(o.objective.objective);
  const Standardizer standardize(train);
  const Tensors data = to_tensors(train), val = to_tensors(validation), tst = to_tensors(test);
  const std::size_t batches = train.size() / o.batch_size;
  Learner learner(o, train, batches * static_cast<std::size_t>(o.epochs));

  TrainedPredictions out;
  for (const auto& p : learner.model().parameters()) out.parameters += static_cast<std::size_t>(p.numel());
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const at::Tensor order = epoch_order(train.size(), o.seed, static_cast<std::uint64_t>(epoch));
    EpochRecord record;
    record.epoch = epoch;
    record.used_share = 0;
    double correct = 0;
    const auto start = Clock::now();
    for (std::size_t b = 0; b < batches; ++b) {
      const at::Tensor rows = order.slice(0, static_cast<std::int64_t>(b * o.batch_size),
                                          static_cast<std::int64_t>((b + 1) * o.batch_size));
      const at::Tensor y = data.labels.index_select(0, rows);
      auto [loss, logits] = learner.step(standardize(data.pixels.index_select(0, rows)), y);
      const double total = loss.total.item<double>();
      if (!std::isfinite(total))
        fail("epoch " + std::to_string(epoch) + ", batch " + std::to_string(b) + ": the loss is not finite (" +
             std::to_string(total) + ")");
      record.loss += total;
      record.base += loss.base;
      record.regularizer += loss.regularizer;
      record.bandwidth += loss.bandwidth;
      record.used_share += loss.used_share;
      const at::Tensor predicted = binary ? (logits.reshape({-1}) > 0).to(at::kLong) : logits.argmax(1);
      correct += predicted.eq(y).sum().item<double>();
    }
    record.seconds = seconds_since(start);
    const auto nb = static_cast<double>(batches);
    record.loss /= nb;
    record.base /= nb;
    record.regularizer /= nb;
    record.bandwidth /= nb;
    record.used_share /= nb;
    record.train_accuracy = correct / (nb * static_cast<double>(o.batch_size));

    record.validated = epoch % o.validate_every == 0 || epoch == o.epochs;
    if (!record.validated) {
      record.validation_accuracy = record.validation_loss = std::nan("");
      out.history.push_back(record);
      if (on_epoch) on_epoch(record);
      continue;
    }
    const at::Tensor logits = predict(learner.model(), val, standardize);
    if (binary) {
      const at::Tensor z = logits.reshape({-1});
      record.validation_accuracy = (z > 0).to(at::kLong).eq(val.labels).to(at::kDouble).mean().item<double>();
      record.validation_loss = (z.sigmoid() - val.labels.to(at::kDouble)).square().mean().item<double>();
    } else {
      record.validation_accuracy = logits.argmax(1).eq(val.labels).to(at::kDouble).mean().item<double>();
      record.validation_loss = at::cross_entropy_loss(logits, val.labels).item<double>();
    }
    out.history.push_back(record);
    if (on_epoch) on_epoch(record);
  }
  const at::Tensor val_logits = predict(learner.model(), val, standardize);
  out.columns = static_cast<std::size_t>(val_logits.size(1));
  out.validation_logits = to_vector(val_logits);
  out.test_logits = to_vector(predict(learner.model(), tst, standardize));
  return out;
}

StepTimes time_steps(const Dataset& train, const TrainOptions& first, const TrainOptions& second, int steps,
                     int warmup) {
  check_options(first, train);
  check_options(second, train);
  if (first.batch_size != second.batch_size || first.threads != second.threads)
    fail("timed objectives must share batch size and thread count");
  at::set_num_threads(first.threads);
  const Standardizer standardize(train);
  const Tensors data = to_tensors(train);
  const std::size_t batches = train.size() / first.batch_size;
  const auto total = static_cast<std::size_t>(warmup + steps);
  Learner a(first, train, total), b(second, train, total);
  StepTimes times;
  at::Tensor order;
  for (std::size_t s = 0; s < total; ++s) {
    const std::size_t k = s % batches;
    if (k == 0) order = epoch_order(train.size(), first.seed, s / batches);
    const at::Tensor rows = order.slice(0, static_cast<std::int64_t>(k * first.batch_size),
                                        static_cast<std::int64_t>((k + 1) * first.batch_size));
    const at::Tensor x = standardize(data.pixels.index_select(0, rows)), y = data.labels.index_select(0, rows);
    // Which objective goes first alternates too, so neither always runs on a cache warmed by the other.
    std::array<std::pair<Learner*, std::vector<double>*>, 2> turns{{{&a, &times.first}, {&b, &times.second}}};
    if (s % 2) std::swap(turns[0], turns[1]);
    for (auto [learner, record] : turns) {
      const auto start = Clock::now();
      learner->step(x, y);
      if (s >= static_cast<std::size_t>(warmup)) record->push_back(seconds_since(start));
    }
  }
  return times;
}

}  // namespace ecekde::train
