// The C++ side of the Python tests: runs one ecekde computation on files and prints every number exactly
// (hexadecimal floating point), one "name value value ..." line per field. Usage:
//   ecekde_py_reference estimate    PROBS LABELS TYPE P H|auto [CRITERION FORM]
//   ecekde_py_reference gradient    PROBS LABELS TYPE P H|auto
//   ecekde_py_reference bootstrap   PROBS LABELS TYPE P H|auto REPLICATES SEED COPIES
//   ecekde_py_reference test        PROBS LABELS TYPE P H|auto REPLICATES SEED
//   ecekde_py_reference binned      PROBS LABELS TYPE P BINS|doane BINNING
//   ecekde_py_reference mmce        PROBS LABELS WEIGHTED(0|1)
//   ecekde_py_reference temperature LOGITS LABELS
//   ecekde_py_reference synthetic   N CLASSES T1 T2 SEED
//   ecekde_py_reference call FUNCTION PROBS LABELS [NAME=VALUE ...]
//       FUNCTION (estimate, estimate_with_gradient, bootstrap_kde, calibration_test_kde, select_bandwidth,
//       binned_calibration_error, mmce, fit_temperature)
//       with its options set by name through the library's option tables, as the CLI sets them
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "ecekde/ecekde.hpp"
#include "ecekde/options.hpp"
#include "ecekde/synthetic.hpp"

namespace {

using namespace ecekde;

void print(const char* name, std::span<const double> values) {
  std::printf("%s", name);
  for (double v : values) std::printf(" %a", v);
  std::printf("\n");
}
void print(const char* name, double value) { print(name, std::span<const double>(&value, 1)); }

EstimateOptions estimate_options(char** a) {
  EstimateOptions o;
  o.type = parse_name<CalibrationType>(a[0]);
  o.p = std::strtod(a[1], nullptr);
  if (std::string(a[2]) != "auto") o.bandwidth = std::strtod(a[2], nullptr);
  return o;
}

void print_result(const Result& r) {
  print("ce_pow_p", r.ce_pow_p);
  print("ce", r.ce);
  print("bandwidth", r.bandwidth);
  if (r.type == CalibrationType::marginal) print("class_ce_pow_p", r.class_ce_pow_p);
}

// Sets NAME=VALUE in whichever table of `function` has the option; false when none has it.
template <class Options>
bool set_option(const std::vector<options::Option<Options>>& table, unsigned used_by, Options& o,
                const std::string& name, const std::string& value) {
  const options::Option<Options>* option = options::find(table, name);
  if (!option || !(option->used_by & used_by)) return false;
  options::set_text(*option, o, value);
  return true;
}

int call(const std::string& function, const std::string& probs_path, const std::string& labels_path,
         std::span<char*> settings) {
  const io::Predictions in = io::read_predictions(probs_path, labels_path);
  const ProbsView probs = in.probs.view();
  const LabelsView labels = in.labels.view();
  const unsigned used_by = function == "estimate"           ? options::uses::estimate
                           : function == "select_bandwidth" ? options::uses::select_bandwidth
                                                            : options::uses::paper_entries;
  EstimateOptions o;
  BootstrapOptions b;
  CalibrationTestOptions t;
  BinnedOptions binned;
  MmceOptions m;
  TemperatureOptions temperature;
  for (const char* setting : settings) {
    const std::string text(setting);
    const std::size_t eq = text.find('=');
    const std::string name = text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
    const bool metric_option =
        (function == "binned_calibration_error" &&
         set_option(options::binned_options(), options::uses::all, binned, name, value)) ||
        (function == "mmce" && set_option(options::mmce_options(), options::uses::all, m, name, value)) ||
        (function == "fit_temperature" &&
         set_option(options::temperature_options(), options::uses::all, temperature, name, value));
    if (!metric_option && !set_option(options::estimate_options(), used_by, o, name, value) &&
        !(function == "bootstrap_kde" && set_option(options::bootstrap_options(), options::uses::all, b, name, value)) &&
        !(function == "calibration_test_kde" &&
          set_option(options::calibration_test_options(), options::uses::all, t, name, value)))
      fail("no option " + name + " for " + function);
  }
  if (function == "estimate") {
    const Result r = estimate(probs, labels, o);
    print_result(r);
    print("standard_error", r.standard_error);
  } else if (function == "estimate_with_gradient") {
    const GradientResult g = estimate_with_gradient(probs, labels, o);
    print_result(g.result);
    print("grad_ce_pow_p", g.grad_ce_pow_p);
  } else if (function == "bootstrap_kde") {
    const KdeBootstrap r = bootstrap_kde(probs, labels, o, b);
    print_result(r.result);
    print("lower", r.ce_pow_p.lower);
    print("upper", r.ce_pow_p.upper);
  } else if (function == "calibration_test_kde") {
    const CalibrationTestResult r = calibration_test_kde(probs, labels, o, t);
    print("statistic", r.statistic);
    print("p_value", r.p_value);
  } else if (function == "binned_calibration_error") {
    const BinnedResult r = binned_calibration_error(probs, labels, binned);
    print("ce_pow_p", r.ce_pow_p);
    print("ce", r.ce);
  } else if (function == "mmce") {
    print("mmce_squared", mmce(probs, labels, m).mmce_squared);
  } else if (function == "fit_temperature") {
    print("temperature", fit_temperature(probs, labels, temperature).temperature);
  } else if (function == "select_bandwidth") {
    print("chosen", select_bandwidth(probs, labels, o.type, o.bandwidth_selection, o.execution, o.renormalize).bandwidth);
  } else {
    return 2;
  }
  return 0;
}

int run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "call" && argc >= 5) return call(argv[2], argv[3], argv[4], std::span<char*>(argv + 5, argc - 5));
  if (command == "synthetic" && argc == 7) {
    const SyntheticModel model{std::stoul(argv[3]), std::strtod(argv[4], nullptr), std::strtod(argv[5], nullptr)};
    const SyntheticData d = generate_synthetic(model, std::stoul(argv[2]), std::stoull(argv[6]));
    print("probs", d.probs);
    print("calibrated", d.calibrated);
    print("labels", std::vector<double>(d.labels.begin(), d.labels.end()));
    return 0;
  }
  if (argc < 4) return 2;
  const io::Predictions in = io::read_predictions(argv[2], argv[3]);
  const ProbsView probs = in.probs.view();
  const LabelsView labels = in.labels.view();
  char** a = argv + 4;
  const int rest = argc - 4;
  if (command == "estimate" && (rest == 3 || rest == 4 || rest == 6)) {
    EstimateOptions o = estimate_options(a);  // type p bandwidth [estimator [criterion form]]
    if (rest >= 4) o.estimator = parse_name<Estimator>(a[3]);
    if (rest == 6) {
      o.bandwidth_selection.criterion = parse_name<BandwidthCriterion>(a[4]);
      o.form = parse_name<KdeForm>(a[5]);
    }
    const Result r = estimate(probs, labels, o);
    print_result(r);
    print("excluded_rows", static_cast<double>(r.excluded_rows));
  } else if (command == "gradient" && rest == 3) {
    const GradientResult g = estimate_with_gradient(probs, labels, estimate_options(a));
    print_result(g.result);
    print("grad_ce_pow_p", g.grad_ce_pow_p);
    print("grad_ce", g.grad_ce);
  } else if (command == "bootstrap" && rest == 6) {
    const BootstrapOptions b{std::stoul(a[3]), 0.95, std::stoull(a[4]), parse_name<BootstrapCopies>(a[5])};
    const KdeBootstrap r = bootstrap_kde(probs, labels, estimate_options(a), b);
    print_result(r.result);
    print("lower", r.ce_pow_p.lower);
    print("upper", r.ce_pow_p.upper);
    print("replicates", r.ce_pow_p.replicates);
  } else if (command == "test" && rest == 5) {
    const CalibrationTestResult r =
        calibration_test_kde(probs, labels, estimate_options(a), {std::stoul(a[3]), std::stoull(a[4])});
    print("statistic", r.statistic);
    print("p_value", r.p_value);
    print("null_values", r.null_values);
  } else if (command == "binned" && rest == 4) {
    BinnedOptions o;
    o.type = parse_name<CalibrationType>(a[0]);
    o.p = std::strtod(a[1], nullptr);
    if (std::string(a[2]) == "doane") o.bins.reset();
    else o.bins = std::stoul(a[2]);
    o.binning = parse_name<Binning>(a[3]);
    const BinnedResult r = binned_calibration_error(probs, labels, o);
    print("ce_pow_p", r.ce_pow_p);
    print("ce", r.ce);
    for (const auto& e : r.edges) print("edges", e);
  } else if (command == "mmce" && rest == 1) {
    MmceOptions o;
    o.weighted = std::string(a[0]) == "1";
    const MmceResult r = mmce(probs, labels, o);
    print("mmce_squared", r.mmce_squared);
    print("gradient", r.gradient);
  } else if (command == "temperature" && rest == 0) {
    const TemperatureFit f = fit_temperature(probs, labels);
    print("temperature", f.temperature);
    print("nll", f.nll);
  } else {
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = run(argc, argv);
    if (status == 2) std::fprintf(stderr, "usage: see the comment at the top of cpp_reference.cpp\n");
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
