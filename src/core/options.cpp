// The option tables of the ECE^KDE entry points (include/ecekde/options.hpp): every option's name, help
// text and example value, written once. Checks of ranges (p >= 1, h > 0, 0 < level < 1, ...) stay with
// the entry points, where callers who fill the structs directly meet them too; the tables check what a
// value's kind and choices demand.
#include "ecekde/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/messages.hpp"

namespace ecekde::options {

namespace detail {

void fail_value(std::string_view name, std::string_view expected) {
  ecekde::detail::fail_with("option ", name, " must be ", expected);
}

std::optional<double> as_real(const Value& value) {
  if (const double* x = std::get_if<double>(&value)) return *x;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return static_cast<double>(*u);
  return std::nullopt;
}

}  // namespace detail

namespace {

std::string real_text(double x) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Comma-separated values, or nothing when one of them is not a T.
template <class T>
std::optional<std::vector<T>> parse_list(std::string_view text) {
  std::vector<T> list;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const auto x = parse_number<T>(text.substr(start, comma - start));
    if (!x) return std::nullopt;
    list.push_back(*x);
    start = comma + 1;
  }
  return list;
}

}  // namespace

std::string to_text(const Value& value, std::string_view none_word) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) return std::string(none_word);
        else if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<V, double>) return real_text(v);
        else if constexpr (std::is_same_v<V, std::string>) return v;
        else if constexpr (std::is_same_v<V, std::vector<double>> || std::is_same_v<V, std::vector<std::int64_t>>) {
          std::string out;
          for (const auto x : v) {
            if (!out.empty()) out += ',';
            if constexpr (std::is_same_v<V, std::vector<double>>) out += real_text(x);
            else out += std::to_string(x);
          }
          return out.empty() ? std::string(none_word) : out;
        } else return std::to_string(v);
      },
      value);
}

Value parse_text(Kind kind, std::string_view name, std::string_view text, std::string_view none_word) {
  auto bad = [&](std::string_view expected) -> Value {
    std::string flag(name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    ecekde::detail::fail_with("--", flag, " must be ", expected, ", got '", text, "'");
  };
  if (!none_word.empty() && text == none_word) return std::monostate{};
  const std::string or_none = none_word.empty() ? "" : ecekde::detail::concat("'", none_word, "' or ");
  switch (kind) {
    case Kind::flag:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      return bad("true or false");
    case Kind::integer:
      if (const auto i = parse_number<std::int64_t>(text)) return *i;
      return bad(or_none + "an integer");
    case Kind::count:
      if (const auto u = parse_number<std::uint64_t>(text)) return *u;
      return bad(or_none + "an integer >= 0");
    case Kind::real:
      if (const auto x = parse_number<double>(text)) return *x;
      return bad(or_none + "a number");
    case Kind::real_list:
      if (const auto list = parse_list<double>(text)) return *list;
      return bad("comma-separated numbers");
    case Kind::index_list:
      if (const auto list = parse_list<std::int64_t>(text)) return *list;
      return bad("comma-separated integers");
    case Kind::choice:
    case Kind::text: return std::string(text);
  }
  return bad("valid");
}

const std::vector<Option<EstimateOptions>>& estimate_options() {
  using O = EstimateOptions;
  using B = BandwidthOptions;
  using X = ExecutionOptions;
  static const std::vector<Option<O>> table{
      describe<&O::estimator>(
          {.name = "estimator",
           .help = "Which estimator: crossfit (accurate at practical n, with a standard error and interval: a "
                   "cross-fitted recalibration map, kernel-smoothed residuals, label noise not counted; see "
                   "docs/validation.md) or paper (the paper's ECE^KDE, Eq. 9, exactly as published)",
           .example = "paper",
           .used_by = uses::estimate}),
      describe<&O::level>({.name = "level",
                           .help = "Probability of the crossfit estimator's interval (normal, from its standard "
                                   "error)",
                           .example = "0.9",
                           .used_by = uses::estimate}),
      describe<&O::folds>({.name = "folds",
                           .help = "Folds of the crossfit estimator's cross-fitted pilot (>= 2): each row's pilot "
                                   "is fitted on the other folds, and its correction reads its neighbours' "
                                   "residuals under its own fold's model, so the one-dimensional types' "
                                   "corrections carry one residual column per fold",
                           .example = "3",
                           .used_by = uses::estimate}),
      describe<&O::mean_rows>(
          {.name = "mean_rows",
           .help = "Crossfit, canonical: average the estimate's row terms over at most this many rows, a random subset "
                   "with a fixed seed, each corrected against all samples (its standard error includes the "
                   "subsampling); 0 = automatic: every row unless rows x n x (K + 32) would exceed 1e12",
           .example = "5000",
           .used_by = uses::estimate}),
      describe<&O::type>({.name = "type",
                          .help = "What calibration to measure: canonical (whole probability vector, Dirichlet "
                                  "kernel), marginal (sum over classes of each class's binary problem), top-label "
                                  "(the top class's confidence and correctness), binary (one column P(y = 1), or "
                                  "the last of two columns)",
                          .example = "marginal"}),
      describe<&O::p>({.name = "p",
                       .help = "Order of the L_p norm, any real p >= 1",
                       .example = "2",
                       .used_by = uses::estimate | uses::paper_entries}),
      describe<&O::bandwidth>(
          {.name = "bandwidth",
           .help = "Kernel bandwidth h > 0, or automatic: chosen per type by leave-one-out likelihood (paper) or "
                   "by the leave-one-out Brier score of the corrected regression (crossfit; at p = 2 a narrower "
                   "bandwidth where its whole correction reads significantly more, bandwidth_selection.criterion_choice "
                   "then naming the Brier score's)",
           .example = "0.05",
           .none = "automatic",
           .none_word = "auto",
           .used_by = uses::estimate | uses::paper_entries}),
      describe<&O::bandwidth_selection, &B::criterion>(
          {.name = "criterion",
           .help = "Automatic bandwidth criterion: loo-likelihood (the paper's LOO maximum likelihood), reference "
                   "(as the authors' code: minus log h per point, favours smaller h) or loo-regression (not the "
                   "paper's: minus the leave-one-out Brier score of the kernel regression; needs the labels)",
           .example = "reference"}),
      describe<&O::bandwidth_selection, &B::grid>(
          {.name = "grid",
           .help = "Candidate bandwidths of the automatic choice",
           .example = "0.02,0.05,0.1",
           .none = "the paper's 10^linspace(-5,-1,15) and 0.2, 0.4, 0.6, 0.8, 1"}),
      describe<&O::bandwidth_selection, &B::refine>(
          {.name = "refine",
           .help = "Refine the best grid point of the automatic choice by a search in log h around it",
           .example = "false"}),
      describe<&O::bandwidth_selection, &B::max_rows>(
          {.name = "max_rows",
           .help = "Average the automatic choice's criterion over at most this many rows, a random subset with a "
                   "fixed seed (each row still scored against all samples); 0 = all rows",
           .example = "60"}),
      describe<&O::form>({.name = "form",
                          .help = "How each row's error is formed: plug-in (the paper's Eq. 9) or debiased (not "
                                  "the paper's; p = 2 only: the label noise's pairs left out, can be negative; only "
                                  "the estimate itself offers it)",
                          .example = "debiased",
                          .used_by = uses::estimate | uses::paper_entries}),
      describe<&O::renormalize>(
          {.name = "renormalize",
           .help = "Divide each probability row by its sum instead of rejecting rows that do not sum to 1",
           .example = "true"}),
      describe<&O::execution, &X::threads>(
          {.name = "threads", .help = "Worker threads; 0 = every hardware thread", .example = "1"}),
      describe<&O::execution, &X::block_size>(
          {.name = "block_size",
           .help = "Rows and centres per block of the pairwise sweep; 0 = automatic (results do not depend on it)",
           .example = "7"}),
      describe<&O::execution, &X::isa>(
          {.name = "isa",
           .help = "Force a kernel variant: avx512, avx2 or baseline (default: the best this CPU supports)",
           .example = "baseline"}),
      describe<&O::execution, &X::full_sweep>(
          {.name = "full_sweep",
           .help = "Sum every pair of the one-dimensional types' kernels (binary, top-label, marginal) instead of "
                   "the score tree's expansions, which agree to 1e-12 in near-linear time (for checking)",
           .example = "true"}),
      describe<&O::execution, &X::precision>(
          {.name = "precision",
           .help = "Arithmetic of the pairwise sweeps at a given bandwidth: double, or float (about twice as fast "
                   "for canonical; within 1e-5 relative plus 1e-6 of double for h >= 0.002, a warning below; the paper's "
                   "bandwidth selection, the gradient, bootstrap and test replicates stay double)",
           .example = "float"}),
      describe<&O::execution, &X::own_rows>(
          {.name = "own_rows",
           .help = "Distributed runs: each rank passes only its own rows (consecutive slices in rank order; the CLI "
                   "under mpirun reads each rank's rows itself) and blocks of centres pass around the ranks, so no "
                   "rank holds the whole input; canonical agrees with one process to 1e-12 relative in double, to float's "
                   "rounding in float (paper: plug-in form, a likelihood criterion), the other types bitwise. Read by "
                   "estimate, select_bandwidth, kernel_regression, bootstrap_kde, calibration_test_kde and (canonical) "
                   "estimate_with_gradient; the other entry points refuse it",
           .example = "true",
           .used_by = uses::all}),
  };
  return table;
}

std::string unread_option_message(std::string_view function, std::string_view option) {
  const Option<EstimateOptions>* o = find(estimate_options(), option);
  ECEKDE_ASSERT(o != nullptr);
  std::vector<std::string_view> readers;
  if (o->used_by & uses::estimate) readers.push_back("estimate()");
  if (o->used_by & uses::paper_entries)
    readers.insert(readers.end(), {"estimate_with_gradient()", "kernel_regression()", "bootstrap_kde()",
                                   "calibration_test_kde()"});
  if (o->used_by & uses::select_bandwidth) readers.push_back("select_bandwidth()");
  std::string listed;
  for (std::size_t i = 0; i < readers.size(); ++i)
    listed += ecekde::detail::concat(i == 0 ? "" : i + 1 == readers.size() ? " and " : ", ", readers[i]);
  return ecekde::detail::concat(function, "() does not read option ", option, ": only ", listed,
                                readers.size() == 1 ? " reads" : " read", " it");
}

void refuse_unread_options(const EstimateOptions& options, unsigned reader, std::string_view function) {
  EstimateOptions paper;
  paper.estimator = Estimator::paper;
  for (const Option<EstimateOptions>& o : estimate_options()) {
    if (o.used_by & reader) continue;
    const Value value = o.get(options);
    if (value != o.default_value() && value != o.get(paper)) fail(unread_option_message(function, o.name));
  }
}

const std::vector<Option<BootstrapOptions>>& bootstrap_options() {
  using O = BootstrapOptions;
  static const std::vector<Option<O>> table{
      describe<&O::replicates>({.name = "replicates", .help = "Bootstrap replicates B", .example = "20"}),
      describe<&O::level>(
          {.name = "level", .help = "Probability of the central percentile interval", .example = "0.9"}),
      describe<&O::seed>(
          {.name = "seed", .help = "Seed of the resampling: replicate b uses stream (seed, b)", .example = "7"}),
      describe<&O::copies>(
          {.name = "copies",
           .help = "How the leave-one-out sums treat copies of a sample within one resample: leave-copies-out "
                   "(copies act as one weighted sample) or plain (equal to resample, then estimate)",
           .example = "plain"}),
  };
  return table;
}

const std::vector<Option<CalibrationTestOptions>>& calibration_test_options() {
  using O = CalibrationTestOptions;
  static const std::vector<Option<O>> table{
      describe<&O::replicates>(
          {.name = "replicates", .help = "Relabelled copies B of the consistency-resampling test", .example = "20"}),
      describe<&O::seed>(
          {.name = "seed", .help = "Seed of the relabelling: copy b uses stream (seed, b)", .example = "7"}),
  };
  return table;
}

}  // namespace ecekde::options
