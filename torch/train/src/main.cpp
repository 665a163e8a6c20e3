// ecekde-train: one run of the calibration-regularised training study (run), or the per-step cost of
// a regulariser against plain cross-entropy (time). Any failure is one line on stderr.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ecekde/options.hpp"
#include "ecekde/train/experiment.hpp"

namespace {

using namespace ecekde::train;

struct Args {
  ExperimentOptions experiment;
  std::string architecture = "resnet", objective = "xe";
  std::string bandwidth = "auto";  // as ecekde estimate spells it: auto (LOO per batch) or h
  std::string out, save_probs;
  bool quiet = false;
  int steps = 100, warmup = 5;
  std::vector<CLI::Option*> p_options;  // --p of each subcommand
};

void add_training_options(CLI::App& cmd, Args& a) {
  TrainOptions& t = a.experiment.train;
  cmd.add_option("--data", a.experiment.data_dir, "directory of the Fashion-MNIST gzip IDX files")->capture_default_str();
  cmd.add_option("--model", a.architecture, "resnet (ResNet-8) or mlp")->capture_default_str();
  cmd.add_option("--width", t.model.width, "resnet: channels of the first stage; mlp: hidden units")->capture_default_str();
  cmd.add_option("--objective", a.objective, "xe, kde-xe, kde-xe-debiased, mmce, focal, focal53, mse, mse-sharpness")
      ->capture_default_str();
  cmd.add_option("--lambda", t.objective.lambda, "weight of the kde-xe, kde-xe-debiased or mmce regulariser (>= 0)")->capture_default_str();
  cmd.add_option("--gamma", t.objective.gamma, "focal: exponent; mse-sharpness: weight in [0, 1)")->capture_default_str();
  a.p_options.push_back(cmd.add_option("--p", t.objective.p, "kde-xe: order of the L_p calibration error (kde-xe-debiased: 2, the default there)")
                   ->capture_default_str());
  cmd.add_option("--bandwidth", a.bandwidth,
                 "kde-xe(-debiased), mse-sharpness: kernel bandwidth h > 0, or auto: the LOO choice on every batch")
      ->type_name("auto|FLOAT")
      ->capture_default_str();
  cmd.add_option("--mmce-width", t.objective.mmce_width, "mmce: Laplacian kernel width")->capture_default_str();
  cmd.add_option("--batch-size", t.batch_size, "examples per batch")->capture_default_str();
  cmd.add_option("--lr", t.learning_rate, "initial learning rate (SGD, Nesterov, cosine decay)")->capture_default_str();
  cmd.add_option("--momentum", t.momentum)->capture_default_str();
  cmd.add_option("--weight-decay", t.weight_decay)->capture_default_str();
  cmd.add_option("--seed", t.seed, "initialisation and batch order")->capture_default_str();
  cmd.add_option("--threads", t.threads, "LibTorch and ecekde threads")->capture_default_str();
  cmd.add_option("--train-size", a.experiment.train_size, "use the first N training examples; 0 = all 50,000")
      ->capture_default_str();
  cmd.add_option("--validate-every", t.validate_every, "validation accuracy and loss after every E-th epoch and the last")
      ->capture_default_str();
}

void finish_options(Args& a) {
  TrainOptions& t = a.experiment.train;
  t.model.architecture = parse_architecture(a.architecture);
  t.objective.objective = parse_objective(a.objective);
  // kde-xe-debiased estimates CE_2^2: p defaults to 2 there, and another p given is refused (by the trainer).
  const bool p_given = std::any_of(a.p_options.begin(), a.p_options.end(), [](CLI::Option* o) { return o->count() > 0; });
  if (t.objective.objective == Objective::kde_xe_debiased && !p_given) t.objective.p = 2;
  if (!has_lambda(t.objective.objective) && t.objective.lambda != 0)
    throw std::invalid_argument("--lambda applies to kde-xe, kde-xe-debiased and mmce, not to " + a.objective);
  // Read as ecekde estimate reads its --bandwidth (the option table's kind and none word).
  const ecekde::options::Value h = ecekde::options::parse_text(ecekde::options::Kind::real, "bandwidth", a.bandwidth, "auto");
  if (const double* fixed = std::get_if<double>(&h)) {
    if (!(*fixed > 0)) throw std::invalid_argument("--bandwidth must be 'auto' or a number > 0, got " + a.bandwidth);
    t.objective.bandwidth = *fixed;
  }
  a.experiment.evaluation.threads = t.threads;
}

std::string tag(const TrainOptions& t) {
  std::string s = "[" + std::string(to_string(t.model.architecture)) + " " + std::string(to_string(t.objective.objective));
  if (has_lambda(t.objective.objective)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " lambda=%g", t.objective.lambda);
    s += buf;
  } else if (t.objective.objective != Objective::xe && t.objective.objective != Objective::mse &&
             t.objective.objective != Objective::focal53) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " gamma=%g", t.objective.gamma);
    s += buf;
  }
  return s + " seed=" + std::to_string(t.seed) + "] ";
}

void print_summary(const ExperimentResult& r) {
  std::printf("temperature %.4f%s (fitted on %zu validation examples)\n", r.temperature,
              r.temperature_at_bound ? " (at the search bound)" : "", r.validation_labels.size());
  if (r.test) {
    std::printf("%-9s %9s %9s %9s %13s %11s %24s\n", "test", "accuracy", "NLL", "Brier", "ECE^KDE (h)", "", "ECE^bin [95% CI]");
    for (const auto& [name, m] : {std::pair{"before T", &r.test->before}, std::pair{"after T", &r.test->after}})
      std::printf("%-9s %9.4f %9.4f %9.4f %9.4f (%.3g) %13.4f [%.4f, %.4f]\n", name, m->accuracy, m->nll, m->brier,
                  m->ece_kde, m->ece_kde_bandwidth, m->ece_bin, m->ece_bin_lower, m->ece_bin_upper);
  } else {
    std::printf("%-9s %9s %9s %9s\n", "test", "accuracy", "MSE", "CE_2");
    for (const auto& [name, m] : {std::pair{"before T", &r.binary_test->before}, std::pair{"after T", &r.binary_test->after}})
      std::printf("%-9s %9.4f %9.4f %9.4f\n", name, m->accuracy, m->mse, m->ce2);
  }
}

int run_command(Args& a) {
  finish_options(a);
  const ExperimentResult r = run_experiment(a.experiment, a.quiet ? nullptr : &std::cerr, tag(a.experiment.train));
  if (!a.out.empty()) write_result_json(a.out, a.experiment, r);
  if (!a.save_probs.empty()) save_test_predictions(a.save_probs, r);
  if (!a.quiet) print_summary(r);
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int time_command(Args& a) {
  finish_options(a);
  ExperimentOptions& e = a.experiment;
  FashionMnist data = load_fashion_mnist(e.data_dir);
  data.train = take_first(data.train, e.train_size, "--train-size", "training examples");
  TrainOptions xe = e.train;
  xe.objective = {};
  const StepTimes times = time_steps(data.train, xe, e.train, a.steps, a.warmup);
  const double batches = static_cast<double>(data.train.size() / e.train.batch_size);
  const double t_xe = median(times.first), t_reg = median(times.second);
  const double overhead = 100 * (t_reg / t_xe - 1);
  std::printf("%s: median step %.4f s (xe) vs %.4f s (%s), overhead %.1f%%; per epoch of %.0f steps: %.1f s vs %.1f s\n",
              std::string(to_string(e.train.model.architecture)).c_str(), t_xe, t_reg,
              std::string(to_string(e.train.objective.objective)).c_str(), overhead, batches, t_xe * batches,
              t_reg * batches);
  if (!a.out.empty()) {
    nlohmann::json out = {{"architecture", to_string(e.train.model.architecture)},
                          {"width", e.train.model.width},
                          {"objective", to_string(e.train.objective.objective)},
                          {"lambda", e.train.objective.lambda},
                          {"threads", e.train.threads},
                          {"batch_size", e.train.batch_size},
                          {"batches_per_epoch", batches},
                          {"xe_step_seconds", times.first},
                          {"objective_step_seconds", times.second},
                          {"xe_median", t_xe},
                          {"objective_median", t_reg},
                          {"overhead_percent", overhead}};
    std::ofstream(a.out) << out.dump(1) << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"ecekde-train: calibration-regularised training on Fashion-MNIST (docs/training.md)", "ecekde-train"};
    app.require_subcommand(1);
    Args a;
    CLI::App* run = app.add_subcommand("run", "train one model, temperature-scale it, evaluate it");
    add_training_options(*run, a);
    run->add_option("--epochs", a.experiment.train.epochs)->capture_default_str();
    run->add_option("--eval-size", a.experiment.eval_size, "use the first N validation and test examples; 0 = all")
        ->capture_default_str();
    run->add_option("--bootstrap", a.experiment.evaluation.bootstrap, "resamples of the ECE^bin interval")
        ->capture_default_str();
    run->add_option("--binary-negative", a.experiment.binary_negative, "binary objectives: the class relabelled 0")
        ->capture_default_str();
    run->add_option("--binary-positive", a.experiment.binary_positive, "binary objectives: the class relabelled 1")
        ->capture_default_str();
    run->add_option("--out", a.out, "write the result as JSON to this file");
    run->add_option("--save-probs", a.save_probs, "write PREFIX_probs.npy and PREFIX_labels.npy (test, before T)");
    run->add_flag("--quiet", a.quiet, "no progress lines and no summary");
    CLI::App* time = app.add_subcommand("time", "median training-step time of an objective against xe, alternating");
    add_training_options(*time, a);
    time->add_option("--steps", a.steps, "timed steps of each objective")->capture_default_str();
    time->add_option("--warmup", a.warmup, "untimed steps first")->capture_default_str();
    time->add_option("--out", a.out, "write the step times as JSON to this file");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    return run->parsed() ? run_command(a) : time_command(a);
  } catch (const std::exception& e) {
    // One line: LibTorch's errors append a backtrace on the following lines.
    std::string message = e.what();
    message = message.substr(0, message.find('\n'));
    std::cout.flush();
    std::cerr << "ecekde-train: error: " << message << std::endl;
    return 1;
  }
}
