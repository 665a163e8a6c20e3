// End-to-end tests of `ecekde fit-temperature`: on synthetic logits whose labels come from a known
// temperature, the fitted T recovers it and equals ecekde::fit_temperature exactly; --apply writes
// exactly apply_temperature's probabilities; bad input gives one line on stderr.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "ecekde/error.hpp"
#include "ecekde/io.hpp"
#include "ecekde/random.hpp"
#include "ecekde/temperature.hpp"
#include "files.hpp"

namespace {

using clitest::ecekde_cli;
using clitest::Output;
using nlohmann::json;

// n x k logits z = spread * N(0, 1) and labels drawn from softmax(z / temperature).
struct Logits {
  std::size_t n = 0, k = 0;
  std::vector<double> z;
  std::vector<std::int64_t> y;
  ecekde::ProbsView view() const { return ecekde::ProbsView::row_major(z.data(), n, k); }
};

Logits synthetic_logits(std::size_t n, std::size_t k, double temperature, std::uint64_t seed) {
  ecekde::Rng rng(seed);
  Logits l{n, k, std::vector<double>(n * k), std::vector<std::int64_t>(n)};
  std::vector<double> p(k);
  for (std::size_t r = 0; r < n; ++r) {
    double m = -INFINITY, sum = 0;
    for (std::size_t c = 0; c < k; ++c) m = std::max(m, l.z[r * k + c] = 3 * rng.normal());
    for (std::size_t c = 0; c < k; ++c) sum += p[c] = std::exp((l.z[r * k + c] - m) / temperature);
    for (double& v : p) v /= sum;
    l.y[r] = static_cast<std::int64_t>(rng.categorical(p));
  }
  return l;
}

struct Written {
  std::string logits, labels;
};

Written write(const testfiles::ScratchDir& dir, const Logits& l) {
  Written w{dir.path("logits.npy"), dir.path("labels.npy")};
  ecekde::io::write_npy(w.logits, l.z, {l.n, l.k});
  ecekde::io::write_npy(w.labels, l.y, {l.n});
  return w;
}

TEST(FitTemperature, RecoversAKnownTemperature) {
  testfiles::ScratchDir dir;
  const Logits l = synthetic_logits(4000, 5, 2.5, 41);
  const Written w = write(dir, l);
  const Output o = ecekde_cli(dir, {"fit-temperature", "--logits", w.logits, "--labels", w.labels, "--json"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
  const json doc = json::parse(o.out);
  const ecekde::TemperatureFit fit = ecekde::fit_temperature(l.view(), ecekde::LabelsView(l.y));
  EXPECT_EQ(doc.at("command"), "fit-temperature");
  EXPECT_EQ(doc.at("input").at("n"), 4000);
  EXPECT_EQ(doc.at("input").at("k"), 5);
  EXPECT_EQ(doc.at("input").at("logits_dtype"), "float64");
  EXPECT_EQ(doc.at("fitted"), true);
  EXPECT_EQ(doc.at("temperature").get<double>(), fit.temperature);
  EXPECT_EQ(doc.at("nll").get<double>(), fit.nll);
  EXPECT_EQ(doc.at("nll_at_one").get<double>(), fit.nll_at_one);
  EXPECT_EQ(doc.at("iterations").get<int>(), fit.iterations);
  EXPECT_EQ(doc.at("at_bound"), false);
  EXPECT_NEAR(fit.temperature, 2.5, 0.15);  // the truth, within sampling error at n = 4000
  EXPECT_LT(fit.nll, fit.nll_at_one);

  const Output text = ecekde_cli(dir, {"fit-temperature", "--logits", w.logits, "--labels", w.labels});
  ASSERT_EQ(text.status, 0) << text.err;
  char line[64];
  std::snprintf(line, sizeof line, "temperature  %.6g\n", fit.temperature);
  EXPECT_EQ(text.out.substr(0, text.out.find('\n') + 1), line);
}

TEST(FitTemperature, ApplyWritesTheScaledProbabilities) {
  testfiles::ScratchDir dir;
  const Logits l = synthetic_logits(300, 4, 0.7, 42);
  const Written w = write(dir, l);
  const double t = ecekde::fit_temperature(l.view(), ecekde::LabelsView(l.y)).temperature;
  const std::vector<double> expected = ecekde::apply_temperature(l.view(), t);

  const Output npy = ecekde_cli(dir, {"fit-temperature", "--logits", w.logits, "--labels", w.labels, "--apply", dir.path("out.npy")});
  ASSERT_EQ(npy.status, 0) << npy.err;
  const ecekde::io::NpyArray a = ecekde::io::read_npy(dir.path("out.npy"));
  EXPECT_EQ(a.shape(), (std::vector<std::size_t>{300, 4}));
  EXPECT_EQ(a.descr(), "<f8");
  const auto* values = static_cast<const double*>(a.data());
  EXPECT_EQ(std::vector<double>(values, values + a.size()), expected);

  // CSV logits with a header, CSV output (shortest round-trip numbers: read back exactly).
  std::vector<double> labels(l.y.begin(), l.y.end());
  ecekde::io::write_csv(dir.path("logits.csv"), {"a", "b", "c", "d"}, l.z);
  ecekde::io::write_csv(dir.path("labels.csv"), {"y"}, labels);
  const Output csv = ecekde_cli(dir, {"fit-temperature", "--logits", dir.path("logits.csv"), "--labels",
                                      dir.path("labels.csv"), "--apply", dir.path("out.csv"), "--json"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(json::parse(csv.out).at("temperature").get<double>(), t);
  EXPECT_EQ(json::parse(csv.out).at("applied"), dir.path("out.csv"));
  const ecekde::io::CsvTable table = ecekde::io::read_csv(dir.path("out.csv"));
  EXPECT_EQ(table.names, (std::vector<std::string>{"p0", "p1", "p2", "p3"}));
  EXPECT_EQ(table.values, expected);

  // A given T (fitted elsewhere) applied without labels.
  const Output given = ecekde_cli(dir, {"fit-temperature", "--logits", w.logits, "--temperature", "1.75", "--apply",
                                        dir.path("given.npy"), "--json"});
  ASSERT_EQ(given.status, 0) << given.err;
  EXPECT_EQ(json::parse(given.out).at("fitted"), false);
  const ecekde::io::NpyArray g = ecekde::io::read_npy(dir.path("given.npy"));
  const auto* gv = static_cast<const double*>(g.data());
  EXPECT_EQ(std::vector<double>(gv, gv + g.size()), ecekde::apply_temperature(l.view(), 1.75));
}

TEST(FitTemperature, WarnsWhenTheBestTIsAtTheEndOfTheInterval) {
  testfiles::ScratchDir dir;
  const Logits l = synthetic_logits(500, 3, 2.5, 43);
  const Written w = write(dir, l);
  const Output o = ecekde_cli(dir, {"fit-temperature", "--logits", w.logits, "--labels", w.labels, "--max-temperature", "1.5"});
  ASSERT_EQ(o.status, 0);
  EXPECT_EQ(o.err, "ecekde: warning: the NLL is smallest at the end of the search interval (T = 1.5); the best T may lie "
                   "beyond it (see --min-temperature, --max-temperature)\n");
}

TEST(FitTemperature, BadInputGivesOneLine) {
  testfiles::ScratchDir dir;
  const Logits l = synthetic_logits(50, 3, 1, 44);
  const Written w = write(dir, l);
  const auto expect_failure = [&](const std::vector<std::string>& args, const std::string& message, int status) {
    SCOPED_TRACE(message);
    std::vector<std::string> all{"fit-temperature"};
    all.insert(all.end(), args.begin(), args.end());
    const Output o = ecekde_cli(dir, all);
    EXPECT_EQ(o.status, status);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, "ecekde: error: " + message + "\n");
  };
  expect_failure({}, "no input: give --logits (and --labels to fit T)", 2);
  expect_failure({"--logits", w.logits}, "--logits needs --labels (or --temperature with --apply)", 2);
  expect_failure({"--logits", w.logits, "--temperature", "2"}, "--temperature needs --apply", 2);
  expect_failure({"--logits", w.logits, "--labels", w.labels, "--temperature", "2", "--apply", dir.path("o.npy")},
                 "give either --labels (to fit T) or --temperature, not both", 2);
  expect_failure({"--logits", w.logits, "--labels", w.labels, "--apply", dir.path("o.txt")},
                 "--apply " + dir.path("o.txt") + ": unsupported extension (expected .npy or .csv)", 2);

  Logits nan = l;
  nan.z[4 * 3 + 2] = NAN;
  ecekde::io::write_npy(dir.path("nan.npy"), nan.z, {nan.n, nan.k});
  expect_failure({"--logits", dir.path("nan.npy"), "--labels", w.labels}, "logits row 4, column 2: value nan is not finite", 1);
  ecekde::io::write_npy(dir.path("column.npy"), std::vector<double>(50, 0.5), {50});
  expect_failure({"--logits", dir.path("column.npy"), "--labels", w.labels},
                 "temperature scaling needs logits with at least 2 columns (classes), got 1", 1);
  ecekde::io::write_npy(dir.path("short.npy"), std::vector<std::int64_t>(49, 0), {49});
  expect_failure({"--logits", w.logits, "--labels", dir.path("short.npy")}, "labels has 49 entries but logits has 50 rows", 1);
  expect_failure({"--logits", w.logits, "--labels", w.labels, "--min-temperature", "0"},
                 "min_temperature must be a finite number > 0, got 0", 1);
  expect_failure({"--logits", w.logits, "--temperature", "0", "--apply", dir.path("o.npy")},
                 "temperature must be a finite number > 0, got 0", 1);
  expect_failure({"--logits", dir.path("missing.npy"), "--labels", w.labels},
                 dir.path("missing.npy") + ": cannot open: No such file or directory", 1);
}

}  // namespace
