#include "ecekde/train/experiment.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/temperature.hpp"

namespace ecekde::train {

namespace {

using nlohmann::json;

std::vector<double> sigmoid(std::span<const double> z, double temperature) {
  std::vector<double> f(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) f[i] = 1 / (1 + std::exp(-z[i] / temperature));
  return f;
}

// Binary logits z as two-class logits (0, z): softmax gives (1 - sigmoid(z), sigmoid(z)).
std::vector<double> two_class(std::span<const double> z) {
  std::vector<double> out(2 * z.size(), 0.0);
  for (std::size_t i = 0; i < z.size(); ++i) out[2 * i + 1] = z[i];
  return out;
}

json to_json(const Metrics& m) {
  json diagram = json::array();
  for (const auto& b : m.reliability)
    diagram.push_back({{"lower", b.lower}, {"upper", b.upper}, {"count", b.count},
                       {"confidence", b.mean_confidence}, {"accuracy", b.mean_label}});
  return {{"accuracy", m.accuracy}, {"nll", m.nll}, {"brier", m.brier}, {"ece_kde", m.ece_kde},
          {"ece_kde_bandwidth", m.ece_kde_bandwidth}, {"ece_bin", m.ece_bin}, {"ece_bin_lower", m.ece_bin_lower},
          {"ece_bin_upper", m.ece_bin_upper}, {"reliability", diagram}};
}

json to_json(const BinaryMetrics& m) {
  return {{"accuracy", m.accuracy}, {"mse", m.mse}, {"ce2", m.ce2}, {"ce2_bandwidth", m.ce2_bandwidth}};
}

template <class M>
json to_json(const std::optional<BeforeAfter<M>>& m) {
  return {{"before", to_json(m->before)}, {"after", to_json(m->after)}};
}

}  // namespace

Dataset take_first(const Dataset& data, std::size_t n, const std::string& option, const std::string& what) {
  if (n == 0) return data;
  if (n > data.size())
    fail(option + " " + std::to_string(n) + " exceeds the " + std::to_string(data.size()) + " " + what);
  return head(data, n);
}

ExperimentResult run_experiment(const ExperimentOptions& o, std::ostream* progress, const std::string& tag) {
  FashionMnist data = load_fashion_mnist(o.data_dir);
  data.train = take_first(data.train, o.train_size, "--train-size", "training examples");
  data.validation = take_first(data.validation, o.eval_size, "--eval-size", "validation examples");
  data.test = take_first(data.test, o.eval_size, "--eval-size", "test examples");
  const bool binary = is_binary(o.train.objective.objective);
  if (binary) {
    if (o.binary_negative == o.binary_positive)
      fail("the binary task needs two different classes, got " + std::to_string(o.binary_negative) + " twice");
    for (Dataset* d : {&data.train, &data.validation, &data.test})
      *d = binary_task(*d, o.binary_negative, o.binary_positive);
  }

  ExperimentResult r;
  const auto on_epoch = [&](const EpochRecord& e) {
    if (progress) *progress << tag << format_epoch(e, o.train.epochs) << std::endl;
  };
  r.predictions = train_and_predict(data.train, data.validation, data.test, o.train, on_epoch);
  r.validation_labels = data.validation.labels;
  r.test_labels = data.test.labels;

  const auto start = std::chrono::steady_clock::now();
  const auto& val = r.predictions.validation_logits;
  const auto& tst = r.predictions.test_logits;
  const std::vector<double> val_two = binary ? two_class(val) : std::vector<double>{};
  const std::size_t k = binary ? 2 : r.predictions.columns;
  const TemperatureFit fit = fit_temperature(ProbsView::row_major((binary ? val_two : val).data(), val.size() / r.predictions.columns, k),
                                             LabelsView(r.validation_labels));
  r.temperature = fit.temperature;
  r.temperature_at_bound = fit.at_bound;
  if (binary) {
    const int threads = o.evaluation.threads;
    r.binary_validation = {evaluate_binary(sigmoid(val, 1), r.validation_labels, threads),
                           evaluate_binary(sigmoid(val, r.temperature), r.validation_labels, threads)};
    r.binary_test = {evaluate_binary(sigmoid(tst, 1), r.test_labels, threads),
                     evaluate_binary(sigmoid(tst, r.temperature), r.test_labels, threads)};
  } else {
    // Validation: no intervals, and ECE^KDE only before T (what the choice of lambda looks at).
    EvaluationOptions light = o.evaluation;
    light.bootstrap = 0;
    const Metrics val_before = evaluate(val, r.validation_labels, 1, light);
    light.kde = false;
    r.validation = {val_before, evaluate(val, r.validation_labels, r.temperature, light)};
    r.test = {evaluate(tst, r.test_labels, 1, o.evaluation), evaluate(tst, r.test_labels, r.temperature, o.evaluation)};
  }
  r.evaluation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void write_result_json(const std::string& path, const ExperimentOptions& o, const ExperimentResult& r) {
  const TrainOptions& t = o.train;
  json config = {{"architecture", to_string(t.model.architecture)},
                 {"width", t.model.width},
                 {"objective", to_string(t.objective.objective)},
                 {"lambda", t.objective.lambda},
                 {"gamma", t.objective.gamma},
                 {"p", t.objective.p},
                 {"bandwidth", t.objective.bandwidth ? json(*t.objective.bandwidth) : json("loo")},
                 {"mmce_width", t.objective.mmce_width},
                 {"epochs", t.epochs},
                 {"batch_size", t.batch_size},
                 {"learning_rate", t.learning_rate},
                 {"momentum", t.momentum},
                 {"weight_decay", t.weight_decay},
                 {"seed", t.seed},
                 {"validate_every", t.validate_every},
                 {"threads", t.threads},
                 {"train_size", o.train_size},
                 {"eval_size", o.eval_size},
                 {"bootstrap", o.evaluation.bootstrap},
                 {"ece_bins", o.evaluation.ece_bins}};
  if (is_binary(t.objective.objective)) config["binary_classes"] = {o.binary_negative, o.binary_positive};
  json history = json::array();
  for (const auto& e : r.predictions.history)
    history.push_back({{"epoch", e.epoch}, {"loss", e.loss}, {"base", e.base}, {"regularizer", e.regularizer},
                       {"bandwidth", e.bandwidth}, {"used_share", e.used_share}, {"train_accuracy", e.train_accuracy},
                       {"validation_accuracy", e.validated ? json(e.validation_accuracy) : json(nullptr)},
                       {"validation_loss", e.validated ? json(e.validation_loss) : json(nullptr)},
                       {"seconds", e.seconds}});
  json out = {{"config", config},
              {"parameters", r.predictions.parameters},
              {"history", history},
              {"temperature", r.temperature},
              {"temperature_at_bound", r.temperature_at_bound},
              {"evaluation_seconds", r.evaluation_seconds}};
  if (r.test) {
    out["validation"] = to_json(r.validation);
    out["test"] = to_json(r.test);
  } else {
    out["validation"] = to_json(r.binary_validation);
    out["test"] = to_json(r.binary_test);
  }
  std::ofstream file(path);
  if (!file) fail(path + ": cannot open for writing");
  file << out.dump(1) << '\n';
  if (!file.flush()) fail(path + ": write failed");
}

void save_test_predictions(const std::string& prefix, const ExperimentResult& r) {
  const std::size_t n = r.test_labels.size(), k = r.predictions.columns;
  const std::vector<double> p = k == 1 ? sigmoid(r.predictions.test_logits, 1) : softmax(r.predictions.test_logits, k);
  const std::vector<float> p32(p.begin(), p.end());
  io::write_npy(prefix + "_probs.npy", std::span<const float>(p32),
                k == 1 ? std::vector<std::size_t>{n} : std::vector<std::size_t>{n, k});
  io::write_npy(prefix + "_labels.npy", std::span<const std::int64_t>(r.test_labels), {n});
  // The logits too, so that a temperature (the result's, or another) can be applied afterwards.
  const std::vector<float> z32(r.predictions.test_logits.begin(), r.predictions.test_logits.end());
  io::write_npy(prefix + "_logits.npy", std::span<const float>(z32),
                k == 1 ? std::vector<std::size_t>{n} : std::vector<std::size_t>{n, k});
}

std::string format_epoch(const EpochRecord& e, int epochs) {
  char line[256];
  const int digits = epochs >= 100 ? 3 : epochs >= 10 ? 2 : 1;
  if (!e.validated) {
    std::snprintf(line, sizeof line, "epoch %*d/%d  loss %.4f (data %.4f, reg %.4f, h %.3g)  train acc %.4f  %.1f s",
                  digits, e.epoch, epochs, e.loss, e.base, e.regularizer, e.bandwidth, e.train_accuracy, e.seconds);
    return line;
  }
  std::snprintf(line, sizeof line,
                "epoch %*d/%d  loss %.4f (data %.4f, reg %.4f, h %.3g)  train acc %.4f  val acc %.4f  val loss %.4f  %.1f s",
                digits, e.epoch, epochs, e.loss, e.base, e.regularizer, e.bandwidth, e.train_accuracy,
                e.validation_accuracy, e.validation_loss, e.seconds);
  return line;
}

}  // namespace ecekde::train
