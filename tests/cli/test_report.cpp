// End-to-end tests of `ecekde report`: the built binary runs on files the tests write. Its JSON must equal
// the library's functions called directly with the same options (estimates, bandwidths, bins, bootstrap
// intervals, p-values); the table, the progress display and the figures are checked for content and
// structure; bad input gives exactly one line on stderr.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "ecekde/binned.hpp"
#include "ecekde/bootstrap.hpp"
#include "ecekde/calibration_test.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/report.hpp"
#include "files.hpp"
#include "prediction_files.hpp"
#include "generate.hpp"
#include "xml_check.hpp"

namespace {

using clitest::ecekde_cli;
using clitest::PredictionFiles;
using clitest::write_predictions;
using clitest::lines_of;
using clitest::Output;
using clitest::words_of;
using ecekde::BinnedForm;
using ecekde::Binning;
using ecekde::CalibrationType;
using ecekde::LabelsView;
using ecekde::ProbsView;
using nlohmann::json;

constexpr std::size_t kReplicates = 20;  // small: these tests also run under the sanitizers

ProbsView view(const oracle::Data& d) {
  return d.k == 1 ? ProbsView(d.f.data(), d.n, 1, 1, 1) : ProbsView::row_major(d.f.data(), d.n, d.k);
}

json report_json(const testfiles::ScratchDir& dir, const PredictionFiles& f, std::vector<std::string> more) {
  std::vector<std::string> args{"report", "--probs", f.probs, "--labels", f.labels, "--json"};
  args.insert(args.end(), more.begin(), more.end());
  const Output o = ecekde_cli(dir, args);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
  return o.status == 0 ? json::parse(o.out) : json::object();
}

// The rows `index` of d, in that order (a bootstrap resample).
oracle::Data rows_of(const oracle::Data& d, std::span<const std::size_t> index) {
  oracle::Data r;
  r.n = index.size();
  r.k = d.k;
  for (std::size_t i : index) {
    for (std::size_t c = 0; c < d.k; ++c) r.f.push_back(d.at(i, c));
    r.y.push_back(d.y[i]);
  }
  return r;
}

using Statistic = std::function<double(ProbsView, LabelsView)>;

// The resampling a report was asked for: B and the seed.
struct Resampling {
  std::size_t replicates = kReplicates;
  std::uint64_t seed = 0;
};

// What the report documents for every non-KDE estimator: a percentile bootstrap over resampled rows and
// the consistency-resampling test, both with B replicates and the given seed.
struct Resampled {
  ecekde::Interval interval;
  ecekde::CalibrationTestResult test;
};

Resampled resampled(const oracle::Data& d, const Statistic& statistic, const Resampling& rs) {
  ecekde::BootstrapOptions b;
  b.replicates = rs.replicates;
  b.seed = rs.seed;
  const auto on_rows = [&](std::span<const std::size_t> index) {
    const oracle::Data r = rows_of(d, index);
    return statistic(view(r), LabelsView(r.y));
  };
  return {ecekde::bootstrap(d.n, on_rows, b),
          ecekde::calibration_test(view(d), LabelsView(d.y), statistic, {rs.replicates, rs.seed})};
}

void expect_interval(const json& j, const char* root, const char* pow, double lower_pow, double upper_pow,
                     const std::function<double(double)>& map, const Resampling& rs) {
  const json& i = j.at("interval");
  EXPECT_EQ(i.at("level").get<double>(), 0.95);
  EXPECT_EQ(i.at("replicates").get<std::size_t>(), rs.replicates);
  EXPECT_EQ(i.at("seed").get<std::uint64_t>(), rs.seed);
  EXPECT_EQ(i.at(pow).at("lower").get<double>(), lower_pow);
  EXPECT_EQ(i.at(pow).at("upper").get<double>(), upper_pow);
  EXPECT_EQ(i.at(root).at("lower").get<double>(), map(lower_pow));
  EXPECT_EQ(i.at(root).at("upper").get<double>(), map(upper_pow));
}

void expect_test(const json& j, const ecekde::CalibrationTestResult& t, const Resampling& rs) {
  const json& c = j.at("calibration_test");
  EXPECT_EQ(c.at("replicates").get<std::size_t>(), rs.replicates);
  EXPECT_EQ(c.at("seed").get<std::uint64_t>(), rs.seed);
  EXPECT_EQ(c.at("statistic").get<double>(), t.statistic);
  EXPECT_EQ(c.at("p_value").get<double>(), t.p_value);
}

// ECE^KDE of one type: bootstrap_kde for the estimate and intervals, calibration_test_kde (automatic
// bandwidth, chosen again) for the p-value; with resampling off, plain estimate().
void expect_kde(const json& j, const oracle::Data& d, CalibrationType type, double p, std::optional<Resampling> rs) {
  SCOPED_TRACE("ECE^KDE " + std::string(ecekde::to_string(type)));
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  o.type = type;
  o.p = p;
  const ecekde::Result r = ecekde::estimate(view(d), LabelsView(d.y), o);
  EXPECT_EQ(j.at("type").get<std::string>(), ecekde::to_string(type));
  EXPECT_EQ(j.at("p").get<double>(), p);
  EXPECT_EQ(j.at("ce").get<double>(), r.ce);
  EXPECT_EQ(j.at("ce_pow_p").get<double>(), r.ce_pow_p);
  EXPECT_EQ(j.at("bandwidth").get<double>(), r.bandwidth);
  EXPECT_EQ(j.at("bandwidth_rule").get<std::string>(), "auto");
  EXPECT_EQ(j.at("bandwidth_selection").at("score").get<std::vector<double>>(), r.selection->score);
  if (type == CalibrationType::marginal) {
    EXPECT_EQ(j.at("class_ce_pow_p").get<std::vector<double>>(), r.class_ce_pow_p);
  }
  EXPECT_EQ(j.contains("interval"), rs.has_value());
  EXPECT_EQ(j.contains("calibration_test"), rs.has_value());
  if (!rs) return;
  ecekde::BootstrapOptions b;
  b.replicates = rs->replicates;
  b.seed = rs->seed;
  const ecekde::KdeBootstrap boot = ecekde::bootstrap_kde(view(d), LabelsView(d.y), o, b);
  EXPECT_EQ(boot.result.ce, r.ce);
  expect_interval(j, "ce", "ce_pow_p", boot.ce_pow_p.lower, boot.ce_pow_p.upper,
                  [p](double v) { return std::pow(v, 1 / p); }, *rs);
  EXPECT_EQ(j.at("interval").at("ce").at("lower").get<double>(), boot.ce.lower);
  const ecekde::CalibrationTestResult t = ecekde::calibration_test_kde(view(d), LabelsView(d.y), o, {rs->replicates, rs->seed});
  EXPECT_EQ(t.statistic, r.ce_pow_p);
  expect_test(j, t, *rs);
}

// The default estimator's row: estimate() with the crossfit estimator, its interval inside, named in the JSON.
void expect_crossfit(const json& j, const oracle::Data& d, CalibrationType type, double p) {
  SCOPED_TRACE("crossfit " + std::string(ecekde::to_string(type)));
  ecekde::EstimateOptions o;
  o.type = type;
  o.p = p;
  const ecekde::Result r = ecekde::estimate(view(d), LabelsView(d.y), o);
  EXPECT_EQ(j.at("estimator").get<std::string>(), "crossfit");
  EXPECT_EQ(j.at("type").get<std::string>(), ecekde::to_string(type));
  EXPECT_EQ(j.at("ce").get<double>(), r.ce);
  EXPECT_EQ(j.at("standard_error").get<double>(), r.standard_error);
  EXPECT_EQ(j.at("ce_interval").at("lower").get<double>(), r.ce_interval->lower);
  EXPECT_EQ(j.at("ce_interval").at("upper").get<double>(), r.ce_interval->upper);
  EXPECT_LE(r.ce_interval->lower, r.ce);
  EXPECT_GE(r.ce_interval->upper, r.ce);
  EXPECT_EQ(j.at("warnings").get<std::vector<std::string>>(), r.warnings);
}

// The binned estimates the report documents, written out independently of its code.
struct BinnedCase {
  CalibrationType type;
  Binning binning;
  std::optional<std::size_t> bins;
  BinnedForm form;
  bool maximum;
};

std::vector<BinnedCase> binned_cases(std::size_t k, std::size_t bins) {
  const CalibrationType one = k == 1 ? CalibrationType::binary : CalibrationType::top_label;
  std::vector<BinnedCase> cases{{one, Binning::equal_width, bins, BinnedForm::per_bin, false},
                                {one, Binning::equal_width, bins, BinnedForm::per_bin, true},
                                {one, Binning::equal_mass, bins, BinnedForm::per_bin, false},
                                {one, Binning::equal_mass, bins, BinnedForm::per_bin, true},
                                {one, Binning::equal_mass, bins, BinnedForm::debiased, false}};
  if (k >= 2) {
    cases.push_back({CalibrationType::marginal, Binning::equal_width, std::nullopt, BinnedForm::per_bin, false});
    cases.push_back({CalibrationType::canonical, Binning::equal_width, std::nullopt, BinnedForm::per_sample, false});
  }
  if (k == 2) cases.push_back({CalibrationType::binary, Binning::equal_width, bins, BinnedForm::per_bin, false});
  return cases;
}

void expect_binned(const json& j, const oracle::Data& d, const BinnedCase& c, double p, std::optional<Resampling> rs) {
  ecekde::BinnedOptions o;
  o.type = c.type;
  o.binning = c.binning;
  o.bins = c.bins;
  o.form = c.form;
  o.maximum = c.maximum;
  o.p = c.form == BinnedForm::debiased ? 2 : p;
  SCOPED_TRACE(std::string(ecekde::to_string(c.type)) + " " + std::string(ecekde::to_string(c.binning)) + " " +
               std::string(ecekde::to_string(c.form)) + (c.maximum ? " max" : ""));
  const ecekde::BinnedResult r = ecekde::binned_calibration_error(view(d), LabelsView(d.y), o);
  EXPECT_EQ(j.at("type").get<std::string>(), ecekde::to_string(c.type));
  EXPECT_EQ(j.at("binning").get<std::string>(), ecekde::to_string(c.binning));
  EXPECT_EQ(j.at("form").get<std::string>(), ecekde::to_string(c.form));
  EXPECT_EQ(j.at("maximum").get<bool>(), c.maximum);
  EXPECT_EQ(j.at("p").get<double>(), o.p);
  EXPECT_EQ(j.at("bins_rule").get<std::string>(), c.bins ? "fixed" : "doane");
  std::vector<std::size_t> bins;
  for (const auto& e : r.edges) bins.push_back(e.size() - 1);
  EXPECT_EQ(j.at("bins").get<std::vector<std::size_t>>(), bins);
  EXPECT_EQ(j.at("ce").get<double>(), r.ce);
  EXPECT_EQ(j.at("ce_pow_p").get<double>(), r.ce_pow_p);
  EXPECT_EQ(j.contains("interval"), rs.has_value());
  if (!rs) return;
  const Resampled s = resampled(d, [&o](ProbsView f, LabelsView y) { return ecekde::binned_calibration_error(f, y, o).ce_pow_p; }, *rs);
  std::function<double(double)> map = [&o](double v) { return std::pow(v, 1 / o.p); };
  if (c.maximum) map = [](double v) { return v; };
  if (c.form == BinnedForm::debiased) map = [](double v) { return std::sqrt(std::max(v, 0.0)); };
  expect_interval(j, "ce", "ce_pow_p", s.interval.lower, s.interval.upper, map, *rs);
  expect_test(j, s.test, *rs);
}

void expect_mmce(const json& j, const oracle::Data& d, std::optional<Resampling> rs) {
  SCOPED_TRACE("MMCE");
  ecekde::MmceOptions o;
  o.gradient = false;
  const ecekde::MmceResult m = ecekde::mmce(view(d), LabelsView(d.y), o);
  EXPECT_EQ(j.at("weighted").get<bool>(), false);
  EXPECT_EQ(j.at("kernel_width").get<double>(), 0.4);
  EXPECT_EQ(j.at("mmce").get<double>(), m.mmce);
  EXPECT_EQ(j.at("mmce_squared").get<double>(), m.mmce_squared);
  if (!rs) return;
  const Resampled s = resampled(d, [&o](ProbsView f, LabelsView y) { return ecekde::mmce(f, y, o).mmce_squared; }, *rs);
  expect_interval(j, "mmce", "mmce_squared", s.interval.lower, s.interval.upper,
                  [](double v) { return std::sqrt(std::max(v, 0.0)); }, *rs);
  expect_test(j, s.test, *rs);
}

void expect_summary(const json& j, const oracle::Data& d) {
  double accuracy = 0, confidence = 0, nll = 0, brier = 0;
  const std::size_t classes = d.k == 1 ? 2 : d.k;
  for (std::size_t r = 0; r < d.n; ++r) {
    std::vector<double> f(classes);
    for (std::size_t c = 0; c < classes; ++c) f[c] = d.k == 1 ? (c == 1 ? d.at(r, 0) : 1 - d.at(r, 0)) : d.at(r, c);
    std::size_t top = 0;
    for (std::size_t c = 1; c < classes; ++c)
      if (f[c] > f[top]) top = c;
    const auto y = static_cast<std::size_t>(d.y[r]);
    accuracy += top == y;
    confidence += f[top];
    nll -= std::log(std::max(f[y], DBL_MIN));
    double row = 0;  // the row's Brier score, then their mean
    for (std::size_t c = 0; c < classes; ++c) row += (f[c] - (c == y)) * (f[c] - (c == y));
    brier += row;
  }
  const double n = static_cast<double>(d.n);
  EXPECT_EQ(j.at("n").get<std::size_t>(), d.n);
  EXPECT_EQ(j.at("k").get<std::size_t>(), d.k);
  EXPECT_DOUBLE_EQ(j.at("accuracy").get<double>(), accuracy / n);
  EXPECT_DOUBLE_EQ(j.at("mean_confidence").get<double>(), confidence / n);
  EXPECT_DOUBLE_EQ(j.at("nll").get<double>(), nll / n);
  EXPECT_DOUBLE_EQ(j.at("brier").get<double>(), brier / n);
}

void expect_report(const json& doc, const oracle::Data& d, double p, std::size_t bins, std::optional<Resampling> rs) {
  expect_summary(doc.at("summary"), d);
  std::vector<CalibrationType> types{CalibrationType::canonical, CalibrationType::marginal, CalibrationType::top_label};
  if (d.k == 1) types.clear();
  if (d.k <= 2) types.push_back(CalibrationType::binary);
  ASSERT_EQ(doc.at("kde").size(), types.size());
  for (std::size_t i = 0; i < types.size(); ++i) expect_kde(doc.at("kde")[i], d, types[i], p, rs);
  ASSERT_EQ(doc.at("crossfit").size(), types.size());
  for (std::size_t i = 0; i < types.size(); ++i) expect_crossfit(doc.at("crossfit")[i], d, types[i], p);
  const std::vector<BinnedCase> cases = binned_cases(d.k, bins);
  ASSERT_EQ(doc.at("binned").size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) expect_binned(doc.at("binned")[i], d, cases[i], p, rs);
  EXPECT_EQ(doc.contains("mmce"), d.k >= 2);
  if (d.k >= 2) expect_mmce(doc.at("mmce"), d, rs);
}

TEST(Report, JsonEqualsTheLibrary) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 120, 4, 31);
  const json doc = report_json(dir, f, {"--replicates", std::to_string(kReplicates), "--seed", "5", "--p", "1.5", "--bins", "10"});
  EXPECT_EQ(doc.at("command"), "report");
  EXPECT_EQ(doc.at("input").at("probs"), f.probs);
  EXPECT_EQ(doc.at("input").at("labels"), f.labels);
  EXPECT_EQ(doc.at("input").at("n"), 120);
  EXPECT_EQ(doc.at("input").at("k"), 4);
  EXPECT_EQ(doc.at("input").at("probs_dtype"), "float64");
  EXPECT_EQ(doc.at("settings").at("p"), 1.5);
  EXPECT_EQ(doc.at("settings").at("replicates"), kReplicates);
  EXPECT_EQ(doc.at("settings").at("seed"), 5);
  EXPECT_EQ(doc.at("settings").at("bins"), 10);
  EXPECT_TRUE(doc.at("plots").empty());
  expect_report(doc, f.data, 1.5, 10, Resampling{kReplicates, 5});
}

// Defaults (B = 100, seed 0, 15 bins, p = 1) on two columns: every type including binary.
TEST(Report, DefaultsOnTwoColumns) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 80, 2, 32);
  const json doc = report_json(dir, f, {});
  EXPECT_EQ(doc.at("settings").at("replicates"), 100);
  EXPECT_EQ(doc.at("settings").at("level"), 0.95);
  const json& interval = doc.at("kde")[0].at("interval");
  EXPECT_EQ(interval.at("replicates"), 100);
  EXPECT_EQ(interval.at("seed"), 0);
  expect_report(doc, f.data, 1, 15, Resampling{100, 0});
}

// The paper's ECE^KDE is resampled only where its work (n^2 B K canonical, 2 n^2 B K marginal, 2 n^2 B
// top-label) is within the limit; beyond it the row keeps its estimate and says why it has no interval.
TEST(Report, PaperResamplingAboveTheLimitIsLeftOut) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 120, 4, 34);
  const double pairs_b = 120.0 * 120.0 * kReplicates;  // canonical 4 pairs_b, marginal 8, top-label 2
  EXPECT_EQ(ecekde::report::paper_resampling_work(CalibrationType::canonical, 120, 4, kReplicates), 4 * pairs_b);
  EXPECT_EQ(ecekde::report::paper_resampling_work(CalibrationType::marginal, 120, 4, kReplicates), 8 * pairs_b);
  EXPECT_EQ(ecekde::report::paper_resampling_work(CalibrationType::top_label, 120, 4, kReplicates), 2 * pairs_b);
  const std::vector<std::string> flags{"--replicates", std::to_string(kReplicates), "--paper-resampling-limit",
                                       std::to_string(4 * pairs_b)};
  const json doc = report_json(dir, f, flags);
  ASSERT_EQ(doc.at("kde").size(), 3u);
  EXPECT_EQ(doc.at("settings").at("paper_resampling_limit").get<double>(), 4 * pairs_b);
  ecekde::EstimateOptions o;
  o.estimator = ecekde::Estimator::paper;
  for (const json& e : doc.at("kde")) {
    const std::string type = e.at("type");
    SCOPED_TRACE(type);
    o.type = ecekde::parse_name<CalibrationType>(type);
    EXPECT_EQ(e.at("ce").get<double>(), ecekde::estimate(view(f.data), LabelsView(f.data.y), o).ce);
    const bool over = type == "marginal";  // canonical sits exactly at the limit, which is allowed
    EXPECT_EQ(e.contains("interval"), !over);
    EXPECT_EQ(e.contains("calibration_test"), !over);
    EXPECT_EQ(e.contains("resampling_skipped"), over);
    if (over) {
      EXPECT_EQ(e.at("resampling_skipped").at("work").get<double>(), 8 * pairs_b);
      EXPECT_EQ(e.at("resampling_skipped").at("limit").get<double>(), 4 * pairs_b);
    }
  }
  std::vector<std::string> args{"report", "--probs", f.probs, "--labels", f.labels};
  args.insert(args.end(), flags.begin(), flags.end());
  const Output text = ecekde_cli(dir, args);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("  marginal: no interval or test: they would form 2.3e+06 replicate sums, above the limit "
                          "of 1.2e+06 (--paper-resampling-limit)\n"),
            std::string::npos)
      << text.out;
}

// The paper's bandwidth search averages its criterion over fewer rows where its work (rows n K canonical and
// marginal, rows n top-label) is above the limit: the most rows within it, never fewer than 1,000.
TEST(Report, PaperSearchRowsFollowTheLimit) {
  using ecekde::report::paper_search_rows;
  const ecekde::report::Settings defaults;
  EXPECT_EQ(paper_search_rows(CalibrationType::canonical, 10000, 10, defaults), 10000u);  // `make run`: at the limit
  EXPECT_EQ(paper_search_rows(CalibrationType::marginal, 10000, 100, defaults), 1000u);
  EXPECT_EQ(paper_search_rows(CalibrationType::canonical, 5000, 100, defaults), 2000u);
  EXPECT_EQ(paper_search_rows(CalibrationType::top_label, 10000, 100, defaults), 10000u);
  EXPECT_EQ(paper_search_rows(CalibrationType::top_label, 100000, 10, defaults), 10000u);  // usual: 20,000
  EXPECT_EQ(paper_search_rows(CalibrationType::marginal, 50000, 1000, defaults), 1000u);  // at least 1,000
  EXPECT_EQ(paper_search_rows(CalibrationType::canonical, 900, 1000, defaults), 900u);    // never more than n
  EXPECT_EQ(ecekde::report::paper_search_work(CalibrationType::marginal, 50000, 1000, 20000), 1e12);

  testfiles::ScratchDir dir;
  constexpr std::size_t n = 1200, k = 4, rows = 1100;
  const PredictionFiles f = write_predictions(dir, n, k, 35);
  const double limit = static_cast<double>(rows * n * k), usual_work = static_cast<double>(n * n * k);
  const std::vector<std::string> flags{"--replicates", "0", "--paper-search-limit", std::to_string(limit)};
  const json doc = report_json(dir, f, flags);
  EXPECT_EQ(doc.at("settings").at("paper_search_limit").get<double>(), limit);
  ASSERT_EQ(doc.at("kde").size(), 3u);
  for (const json& e : doc.at("kde")) {
    const std::string type = e.at("type");
    SCOPED_TRACE(type);
    const bool reduced = type != "top-label";  // top-label's work, n^2, is within the limit
    ecekde::EstimateOptions o;
    o.estimator = ecekde::Estimator::paper;
    o.type = ecekde::parse_name<CalibrationType>(type);
    if (reduced) o.bandwidth_selection.max_rows = rows;
    EXPECT_EQ(e.at("ce").get<double>(), ecekde::estimate(view(f.data), LabelsView(f.data.y), o).ce);
    EXPECT_EQ(e.at("bandwidth_selection").at("rows"), reduced ? rows : n);
    ASSERT_EQ(e.contains("search_reduced"), reduced);
    if (reduced) {
      EXPECT_EQ(e.at("search_reduced").at("rows"), rows);
      EXPECT_EQ(e.at("search_reduced").at("work").get<double>(), usual_work);
      EXPECT_EQ(e.at("search_reduced").at("limit").get<double>(), limit);
    }
  }
  std::vector<std::string> args{"report", "--probs", f.probs, "--labels", f.labels};
  args.insert(args.end(), flags.begin(), flags.end());
  const Output text = ecekde_cli(dir, args);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("  marginal: bandwidth chosen by a criterion averaged over 1100 of the 1200 rows (each "
                          "against every sample): over the usual rows it would form 5.8e+06 kernel sums per "
                          "bandwidth, above the limit of 5.3e+06 (--paper-search-limit)\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("top-label: bandwidth chosen"), std::string::npos);
}

TEST(Report, ReplicatesZeroSkipsIntervalsAndTests) {
  testfiles::ScratchDir dir;
  for (std::size_t k : {1, 3}) {
    SCOPED_TRACE(k);
    const PredictionFiles f = write_predictions(dir, 90, k, 33);
    const json doc = report_json(dir, f, {"--replicates", "0"});
    expect_report(doc, f.data, 1, 15, std::nullopt);
    for (const json& e : doc.at("binned")) EXPECT_FALSE(e.contains("calibration_test"));
  }
}

// --classes keeps the samples of the listed classes and renormalises their probabilities over them;
// labels become positions in the list.
TEST(Report, ClassSubset) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 150, 5, 34);
  const std::vector<std::int64_t> classes{3, 1, 4};
  oracle::Data sub;
  sub.k = 3;
  for (std::size_t r = 0; r < f.data.n; ++r) {
    const auto it = std::find(classes.begin(), classes.end(), f.data.y[r]);
    if (it == classes.end()) continue;
    double sum = 0;
    for (std::int64_t c : classes) sum += f.data.at(r, static_cast<std::size_t>(c));
    for (std::int64_t c : classes) sub.f.push_back(f.data.at(r, static_cast<std::size_t>(c)) / sum);
    sub.y.push_back(it - classes.begin());
  }
  sub.n = sub.y.size();
  const json doc = report_json(dir, f, {"--classes", "3,1,4", "--replicates", "0"});
  EXPECT_EQ(doc.at("input").at("classes"), classes);
  EXPECT_EQ(doc.at("input").at("renormalized"), true);
  EXPECT_EQ(doc.at("input").at("n"), sub.n);
  EXPECT_EQ(doc.at("input").at("k"), 3);
  expect_report(doc, sub, 1, 15, std::nullopt);
}

// float32 input is resampled as float32, so every resample meets the float32 row-sum tolerance
// max(1e-6, K 2^-24): rows off by 1.1e-6 at K = 20 pass as float32 but would fail as float64.
TEST(Report, Float32InputIsResampledAsFloat32) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 60, 20, 45);
  std::vector<float> narrow(f.data.f.begin(), f.data.f.end());
  for (std::size_t r = 0; r < 60; ++r) narrow[r * 20] += 1.1e-6f;
  ecekde::io::write_npy(dir.path("p32.npy"), narrow, {60, 20});
  const Output o = ecekde_cli(dir, {"report", "--probs", dir.path("p32.npy"), "--labels", f.labels, "--replicates", "5", "--json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const json doc = json::parse(o.out);
  EXPECT_EQ(doc.at("input").at("probs_dtype"), "float32");
  const ProbsView probs = ProbsView::row_major(narrow.data(), 60, 20);
  EXPECT_EQ(doc.at("binned")[0].at("ce").get<double>(), ecekde::binned_calibration_error(probs, LabelsView(f.data.y)).ce);
  ecekde::EstimateOptions paper;
  paper.estimator = ecekde::Estimator::paper;
  EXPECT_EQ(doc.at("kde")[0].at("ce").get<double>(), ecekde::estimate(probs, LabelsView(f.data.y), paper).ce);
  EXPECT_EQ(doc.at("crossfit")[0].at("ce").get<double>(), ecekde::estimate(probs, LabelsView(f.data.y)).ce);
  for (const json& e : doc.at("binned")) EXPECT_TRUE(e.contains("interval"));
  std::vector<double> widened(narrow.begin(), narrow.end());
  EXPECT_THROW(ecekde::binned_calibration_error(ProbsView::row_major(widened.data(), 60, 20), LabelsView(f.data.y)),
               ecekde::Error);
}

std::string g4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The line of `lines` whose first words are `start`.
std::vector<std::string> row_starting(const std::vector<std::string>& lines, const std::vector<std::string>& start) {
  for (const auto& line : lines) {
    const auto words = words_of(line);
    if (words.size() >= start.size() && std::equal(start.begin(), start.end(), words.begin())) return words;
  }
  ADD_FAILURE() << "no line starts with " << start[0];
  return {};
}

TEST(Report, TableShowsTheNumbersOfTheJson) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 100, 3, 35);
  const std::vector<std::string> args{"report", "--probs", f.probs, "--labels", f.labels, "--replicates", "20"};
  const Output text = ecekde_cli(dir, args);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.err, "");
  std::vector<std::string> with_json = args;
  with_json.push_back("--json");
  const json doc = json::parse(ecekde_cli(dir, with_json).out);
  const auto lines = lines_of(text.out);
  EXPECT_EQ(lines[1], "100 samples, 3 classes (float64)");
  EXPECT_EQ(row_starting(lines, {"accuracy"})[1], g4(doc.at("summary").at("accuracy")));
  EXPECT_EQ(row_starting(lines, {"Brier", "score"})[2], g4(doc.at("summary").at("brier")));
  for (const json& e : doc.at("crossfit")) {
    const json& ci = e.at("ce_interval");
    std::string lower = "[", upper = g4(ci.at("lower"));
    lower += upper;
    lower += ',';
    upper = g4(ci.at("upper"));
    upper += ']';
    const std::vector<std::string> expected{e.at("type"), g4(e.at("ce")), lower, upper, g4(e.at("bandwidth"))};
    EXPECT_EQ(row_starting(lines, {e.at("type").get<std::string>(), g4(e.at("ce"))}), expected);
  }
  for (const json& e : doc.at("kde")) {
    const auto row = row_starting(lines, {e.at("type").get<std::string>(), g4(e.at("ce"))});
    const json& ci = e.at("interval").at("ce");
    std::string lower = "[", upper = g4(ci.at("lower"));  // appended: GCC 12 warns falsely on "[" + string
    lower += upper;
    lower += ',';
    upper = g4(ci.at("upper"));
    upper += ']';
    char p_value[16];
    std::snprintf(p_value, sizeof p_value, "%.2g", e.at("calibration_test").at("p_value").get<double>());
    const std::vector<std::string> expected{e.at("type"), g4(e.at("ce")), lower, upper, p_value, g4(e.at("bandwidth"))};
    EXPECT_EQ(row, expected);
  }
  const auto mce = row_starting(lines, {"top-label", "15", "equal-mass", "max", "(MCE)"});
  EXPECT_EQ(mce[5], g4(doc.at("binned")[3].at("ce")));
  const auto debiased = row_starting(lines, {"top-label", "15", "equal-mass", "debiased", "L2"});
  EXPECT_EQ(debiased.back(), g4(doc.at("binned")[4].at("ce_pow_p")));
  const auto canonical = row_starting(lines, {"canonical", "Doane"});
  EXPECT_EQ(canonical[3], "equal-width");
  EXPECT_EQ(canonical[6], g4(doc.at("binned")[6].at("ce")));
  EXPECT_EQ(row_starting(lines, {"MMCE", g4(doc.at("mmce").at("mmce"))}).size(), 5u);  // value, interval, p-value
}

TEST(Report, ProgressShowsOneLinePerStage) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 60, 3, 36);
  const Output o = ecekde_cli(dir, {"report", "--probs", f.probs, "--labels", f.labels, "--replicates", "0", "--progress",
                                    "--plot", dir.path("plots")});
  ASSERT_EQ(o.status, 0) << o.err;
  const auto lines = lines_of(o.err);
  ASSERT_EQ(lines.size(), 7u + 3u + 3u + 1u + 1u);  // binned, crossfit, ECE^KDE, MMCE, plots
  // "[%7.1f s] <stage> ... %.2f s"
  const auto is_stage = [](const std::string& line) {
    const std::size_t close = line.find(" s] "), dots = line.rfind(" ... ");
    if (line.size() < 12 || line[0] != '[' || close != 8 || dots == std::string::npos || dots < close + 4) return false;
    const std::string elapsed = line.substr(1, 7), took = line.substr(dots + 5);
    return elapsed.find_first_not_of(" 0123456789.") == std::string::npos && elapsed[5] == '.' &&
           took.size() >= 6 && took.compare(took.size() - 2, 2, " s") == 0 && took[took.size() - 5] == '.' &&
           took.find_first_not_of("0123456789.", 0) == took.size() - 2;
  };
  for (const auto& line : lines) EXPECT_TRUE(is_stage(line)) << line;
  EXPECT_NE(lines[7].find("crossfit canonical"), std::string::npos);
  EXPECT_NE(lines[10].find("ECE^KDE (paper) canonical"), std::string::npos);
  EXPECT_NE(lines.back().find("plots"), std::string::npos);
}

// The plots' directory path inside the scratch directory, and the SVG text of one file.
std::string svg_text(const std::string& path) {
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << path;
  const std::string text = testfiles::slurp(path);
  EXPECT_EQ(xmlcheck::problem(text), "") << path;
  EXPECT_EQ(text.rfind("<?xml", 0), 0u);
  EXPECT_NE(text.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  return text;
}

// The text of the group that starts with `opening` (up to its matching close; groups in it are counted).
std::string group(const std::string& text, const std::string& opening) {
  const std::size_t start = text.find(opening);
  if (start == std::string::npos) return "";
  std::size_t depth = 0, i = start;
  while ((i = text.find("<", i + 1)) != std::string::npos) {
    if (text.compare(i, 3, "<g ") == 0 || text.compare(i, 3, "<g>") == 0) ++depth;
    if (text.compare(i, 4, "</g>") == 0 && depth-- == 0) break;
  }
  return text.substr(start, i - start);
}

TEST(Report, PlotsForThreeClasses) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 150, 3, 37);
  const std::string plots = dir.path("out/figures");  // created with its parent
  const json doc = report_json(dir, f, {"--replicates", "0", "--plot", plots, "--simplex-bins", "6"});
  const std::vector<std::string> files{plots + "/reliability_top_label.svg", plots + "/reliability_classes.svg",
                                       plots + "/simplex.svg"};
  EXPECT_EQ(doc.at("plots").get<std::vector<std::string>>(), files);
  const ProbsView probs = view(f.data);
  const LabelsView labels(f.data.y);

  const std::string top = svg_text(files[0]);
  ecekde::BinnedOptions tl;  // top-label, 15 equal-width bins
  const ecekde::BinnedResult top_bins = ecekde::binned_calibration_error(probs, labels, tl);
  EXPECT_EQ(xmlcheck::count(top, "class=\"panel\""), 1u);
  EXPECT_EQ(xmlcheck::count(top, "class=\"bin-marker\""), top_bins.diagrams[0].size());
  EXPECT_EQ(xmlcheck::count(group(top, "<g class=\"band\""), "<rect"), top_bins.diagrams[0].size());
  EXPECT_EQ(xmlcheck::count(group(top, "<g class=\"counts\""), "<rect"), top_bins.diagrams[0].size());
  EXPECT_EQ(xmlcheck::count(top, "class=\"kde-curve\""), 1u);
  EXPECT_EQ(xmlcheck::count(top, "class=\"diagonal\""), 1u);
  EXPECT_NE(top.find(">accuracy</text>"), std::string::npos);
  EXPECT_NE(top.find("95% Wilson interval"), std::string::npos);

  const std::string classes = svg_text(files[1]);
  ecekde::BinnedOptions marginal;
  marginal.type = CalibrationType::marginal;
  marginal.bins = std::nullopt;
  const ecekde::BinnedResult m = ecekde::binned_calibration_error(probs, labels, marginal);
  std::size_t markers = 0;
  for (const auto& d : m.diagrams) markers += d.size();
  EXPECT_EQ(xmlcheck::count(classes, "class=\"panel\""), 3u);
  EXPECT_EQ(xmlcheck::count(classes, "class=\"bin-marker\""), markers);
  EXPECT_EQ(xmlcheck::count(classes, "class=\"kde-curve\""), 3u);
  for (const char* name : {">class 0, Doane: ", ">class 1, Doane: ", ">class 2, Doane: "})
    EXPECT_NE(classes.find(name), std::string::npos) << name;

  const std::string simplex = svg_text(files[2]);
  ecekde::BinnedOptions canonical;
  canonical.type = CalibrationType::canonical;
  canonical.bins = 6;
  const ecekde::BinnedResult cells = ecekde::binned_calibration_error(probs, labels, canonical);
  EXPECT_EQ(xmlcheck::count(simplex, "class=\"cell\""), cells.cells.size());
  EXPECT_EQ(xmlcheck::count(group(simplex, "<g class=\"scatter\""), "<circle"), f.data.n);
  EXPECT_EQ(xmlcheck::count(group(simplex, "<g class=\"density\""), "<polygon"), 48u * 48u);
  EXPECT_EQ(xmlcheck::count(group(simplex, "<g class=\"bin-grid\""), "<line"), 3u * 5u);  // inner edges
  for (const char* corner : {">class 0<", ">class 1<", ">class 2<"}) EXPECT_EQ(xmlcheck::count(simplex, corner), 3u) << corner;
}

TEST(Report, PlotsForOtherClassCounts) {
  testfiles::ScratchDir dir;
  {
    const PredictionFiles f = write_predictions(dir, 120, 10, 38);
    const json doc = report_json(dir, f, {"--replicates", "0", "--plot", dir.path("ten")});
    ASSERT_EQ(doc.at("plots").size(), 2u);
    EXPECT_EQ(xmlcheck::count(svg_text(dir.path("ten/reliability_classes.svg")), "class=\"panel\""), 10u);
    EXPECT_FALSE(std::filesystem::exists(dir.path("ten/simplex.svg")));
  }
  {
    const PredictionFiles f = write_predictions(dir, 120, 1, 39);
    const json doc = report_json(dir, f, {"--replicates", "0", "--plot", dir.path("one")});
    EXPECT_EQ(doc.at("plots").get<std::vector<std::string>>(), std::vector<std::string>{dir.path("one/reliability_binary.svg")});
    const std::string svg = svg_text(dir.path("one/reliability_binary.svg"));
    EXPECT_NE(svg.find(">frequency of y = 1</text>"), std::string::npos);
  }
}

// Above 20000 samples the report warns before it starts (checked cheaply: a bad --level stops it at the
// first estimator, after the warning).
TEST(Report, WarnsForLargeN) {
  testfiles::ScratchDir dir;
  for (std::size_t n : {20000, 20001}) {
    const PredictionFiles f = write_predictions(dir, n, 2, 46);
    const Output o = ecekde_cli(dir, {"report", "--probs", f.probs, "--labels", f.labels, "--level", "1.5"});
    EXPECT_EQ(o.status, 1);
    const std::string warning = "ecekde: warning: n = 20001 samples: ECE^KDE costs O(n^2) per sweep and the report runs "
                                "dozens of sweeps; this may take minutes (--replicates 0 skips the intervals and tests)\n";
    EXPECT_EQ(o.err, (n > 20000 ? warning : "") + "ecekde: error: bootstrap level must be in (0, 1), got 1.5\n");
  }
}

// The library's message for an input it rejects.
std::string binned_message(const oracle::Data& d, ecekde::BinnedOptions o = {}) {
  try {
    ecekde::binned_calibration_error(view(d), LabelsView(d.y), o);
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(Report, BadInputGivesOneLine) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 40, 4, 40);
  const auto expect_failure = [&](const std::vector<std::string>& more, const std::string& message, int status,
                                  const std::string& probs = "", const std::string& labels = "") {
    SCOPED_TRACE(message);
    std::vector<std::string> args{"report", "--probs", probs.empty() ? f.probs : probs, "--labels", labels.empty() ? f.labels : labels};
    args.insert(args.end(), more.begin(), more.end());
    const Output o = ecekde_cli(dir, args);
    EXPECT_EQ(o.status, status);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, "ecekde: error: " + message + "\n");
  };
  oracle::Data bad = f.data;
  bad.y[9] = 4;
  ecekde::io::write_npy(dir.path("bad_labels.npy"), bad.y, {bad.n});
  expect_failure({}, binned_message(bad), 1, "", dir.path("bad_labels.npy"));
  EXPECT_EQ(binned_message(bad), "labels row 9: value 4 is outside [0, 4)");
  oracle::Data sum = f.data;
  sum.f[2 * 4] += 0.25;
  ecekde::io::write_npy(dir.path("sum.npy"), sum.f, {sum.n, sum.k});
  expect_failure({}, binned_message(sum), 1, dir.path("sum.npy"));

  expect_failure({"--classes", "0,7"}, "classes: class 7 is outside [0, 4)", 1);
  expect_failure({"--classes", "1,1"}, "classes: class 1 is listed twice", 1);
  expect_failure({"--classes", "2"}, "classes needs at least 2 classes", 1);
  expect_failure({"--replicates", "1"}, "bootstrap replicates must be at least 2, got 1", 1);
  expect_failure({"--level", "1.5"}, "bootstrap level must be in (0, 1), got 1.5", 1);
  expect_failure({"--p", "0.5"}, "p must be a finite number >= 1, got 0.5", 1);
  expect_failure({"--bins", "0"}, "bins must be between 1 and 65536, got 0", 1);
  expect_failure({"--paper-resampling-limit", "-1"}, "paper_resampling_limit must be a number >= 0, got -1", 1);
  expect_failure({"--paper-search-limit", "-1"}, "paper_search_limit must be a number >= 0, got -1", 1);
  expect_failure({"--replicates", "many"}, "--replicates must be an integer >= 0, got 'many' (see 'ecekde report --help')", 2);
  const std::string file = dir.write("not_a_directory", "x");
  expect_failure({"--replicates", "0", "--plot", file + "/figures"},
                 file + "/figures: cannot create the plot directory: Not a directory", 1);
  expect_failure({"--data", f.probs}, "give either --probs and --labels, or --data and --label-column, not both", 2);
}

// Where crossfit at p = 2 took a narrower bandwidth than its criterion's, the JSON names the criterion's
// (bandwidth_selection.criterion_choice) and the bandwidth rule says so in words; elsewhere neither.
TEST(Report, JsonNamesTheCriterionsChoiceWhereCE2TookANarrowerBandwidth) {
  ecekde::Result r;
  r.estimator = ecekde::Estimator::crossfit;
  r.p = 2;
  r.n = 100;
  r.selection = ecekde::BandwidthSelection{};
  r.selection->grid = {0.01, 0.1, 1.0};
  r.selection->rows = 100;
  r.selection->bandwidth = r.bandwidth = 0.01;
  r.selection->criterion_choice = 0.1;
  EXPECT_EQ(ecekde::report::result_json(r).at("bandwidth_selection").at("criterion_choice").get<double>(), 0.1);
  EXPECT_NE(ecekde::report::bandwidth_rule(r).find(", narrowed for CE_2^2 from 0.1"), std::string::npos);
  r.selection->criterion_choice = 0;
  EXPECT_FALSE(ecekde::report::result_json(r).at("bandwidth_selection").contains("criterion_choice"));
  EXPECT_EQ(ecekde::report::bandwidth_rule(r).find("narrowed"), std::string::npos);
}

}  // namespace
