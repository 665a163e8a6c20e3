// End-to-end tests of the ecekde command: the built binary is run on files the tests write; its JSON must
// equal direct ecekde::estimate calls exactly, and every bad input must give a non-zero exit and exactly
// one line on stderr.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/io.hpp"
#include "cli_process.hpp"
#include "files.hpp"
#include "prediction_files.hpp"
#include "generate.hpp"

namespace {

using ecekde::CalibrationType;
using nlohmann::json;

using clitest::ecekde_cli;
using clitest::PredictionFiles;
using clitest::write_predictions;
using clitest::Output;
using clitest::lines_of;
using clitest::run_program;
using clitest::words_of;

ecekde::Result direct(const oracle::Data& d, ecekde::EstimateOptions o) {
  return ecekde::estimate(ecekde::ProbsView::row_major(d.f.data(), d.n, d.k), ecekde::LabelsView(d.y), o);
}

json parse_results(const Output& o) {
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
  return json::parse(o.out).at("results");
}

// Every number of the JSON result equals the library's, exactly.
void expect_same(const json& j, const ecekde::Result& r) {
  SCOPED_TRACE(std::string(ecekde::to_string(r.type)));
  EXPECT_EQ(j.at("type").get<std::string>(), ecekde::to_string(r.type));
  EXPECT_EQ(j.at("p").get<double>(), r.p);
  EXPECT_EQ(j.at("bandwidth").get<double>(), r.bandwidth);
  EXPECT_EQ(j.at("ce").get<double>(), r.ce);
  EXPECT_EQ(j.at("ce_pow_p").get<double>(), r.ce_pow_p);
  EXPECT_EQ(j.at("n").get<std::size_t>(), r.n);
  EXPECT_EQ(j.at("k").get<std::size_t>(), r.k);
  EXPECT_EQ(j.at("bandwidth_rule").get<std::string>(), r.selection ? "auto" : "fixed");
  EXPECT_EQ(j.contains("bandwidth_selection"), r.selection.has_value());
  if (r.selection) {
    const json& s = j.at("bandwidth_selection");
    EXPECT_EQ(s.at("criterion").get<std::string>(), ecekde::to_string(r.selection->criterion));
    EXPECT_EQ(s.at("grid").get<std::vector<double>>(), r.selection->grid);
    EXPECT_EQ(s.at("score").get<std::vector<double>>(), r.selection->score);
    EXPECT_EQ(s.at("refined_grid").get<std::vector<double>>(), r.selection->refined_grid);
    EXPECT_EQ(s.at("refined_score").get<std::vector<double>>(), r.selection->refined_score);
    EXPECT_EQ(s.at("chosen").get<double>(), r.selection->bandwidth);
    EXPECT_EQ(s.at("chosen_score").get<double>(), r.selection->best_score);
    EXPECT_EQ(s.contains("criterion_choice"), r.selection->criterion_choice > 0);
    if (r.selection->criterion_choice > 0) {
      EXPECT_EQ(s.at("criterion_choice").get<double>(), r.selection->criterion_choice);
    }
  }
  EXPECT_EQ(j.contains("class_ce_pow_p"), r.type == CalibrationType::marginal);
  if (r.type == CalibrationType::marginal) {
    EXPECT_EQ(j.at("class_ce_pow_p").get<std::vector<double>>(), r.class_ce_pow_p);
  }
  EXPECT_EQ(j.contains("pilot"), !r.pilot.empty());
  if (!r.pilot.empty()) {
    EXPECT_EQ(j.at("pilot").get<std::string>(), r.pilot);
  }
}

TEST(Cli, JsonEqualsTheLibraryForEveryType) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 150, 4, 11);
  const Output o = ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type", "all", "--json"});
  const json doc = json::parse(o.out);
  EXPECT_EQ(doc.at("command"), "estimate");
  EXPECT_EQ(doc.at("input").at("probs"), f.probs);
  EXPECT_EQ(doc.at("input").at("n"), 150);
  EXPECT_EQ(doc.at("input").at("k"), 4);
  EXPECT_EQ(doc.at("input").at("probs_dtype"), "float64");
  const json results = parse_results(o);
  const std::vector<CalibrationType> types{CalibrationType::canonical, CalibrationType::marginal,
                                           CalibrationType::top_label};
  ASSERT_EQ(results.size(), types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    ecekde::EstimateOptions opt;
    opt.type = types[i];
    expect_same(results[i], direct(f.data, opt));
  }
}

TEST(Cli, EveryOptionReachesTheLibrary) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 120, 3, 12);
  ecekde::EstimateOptions opt;
  opt.type = CalibrationType::marginal;
  opt.p = 2.5;
  opt.bandwidth = 0.05;
  opt.execution.threads = 1;
  opt.execution.block_size = 16;
  expect_same(parse_results(ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type",
                                             "marginal", "--p", "2.5", "--bandwidth", "0.05", "--threads", "1",
                                             "--block-size", "16", "--json"}))[0],
              direct(f.data, opt));

  ecekde::EstimateOptions sel;
  sel.type = CalibrationType::top_label;
  sel.bandwidth_selection.criterion = ecekde::BandwidthCriterion::reference;
  sel.bandwidth_selection.refine = false;
  sel.bandwidth_selection.grid = {0.3, 0.01, 0.1};
  const json j = parse_results(ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type",
                                                "top-label", "--criterion", "reference", "--no-refine", "--grid",
                                                "0.3,0.01,0.1", "--json"}))[0];
  const ecekde::Result r = direct(f.data, sel);
  expect_same(j, r);
  EXPECT_EQ(j.at("bandwidth_selection").at("grid"), (std::vector<double>{0.01, 0.1, 0.3}));
  EXPECT_TRUE(j.at("bandwidth_selection").at("refined_grid").empty());

  // --renormalize: rows summing to 0.9 are rescaled instead of rejected.
  oracle::Data scaled = f.data;
  for (double& v : scaled.f) v *= 0.9;
  const std::string p = dir.path("scaled.npy");
  ecekde::io::write_npy(p, scaled.f, {scaled.n, scaled.k});
  ecekde::EstimateOptions renorm;
  renorm.renormalize = true;
  renorm.bandwidth = 0.1;
  expect_same(parse_results(ecekde_cli(dir, {"estimate", "--probs", p, "--labels", f.labels, "--bandwidth", "0.1",
                                             "--renormalize", "--json"}))[0],
              direct(scaled, renorm));
}

// Which types --type all runs: K = 1: binary; K = 2: all four; K > 2: all but binary.
TEST(Cli, TypeAllFollowsTheNumberOfColumns) {
  testfiles::ScratchDir dir;
  const std::vector<std::pair<std::size_t, std::vector<std::string>>> cases{
      {1, {"binary"}}, {2, {"canonical", "marginal", "top-label", "binary"}}, {5, {"canonical", "marginal", "top-label"}}};
  for (const auto& [k, names] : cases) {
    SCOPED_TRACE(k);
    const PredictionFiles f = write_predictions(dir, 60, k, 13);
    const json results = parse_results(ecekde_cli(
        dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type", "all", "--bandwidth", "0.2", "--json"}));
    ASSERT_EQ(results.size(), names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
      ecekde::EstimateOptions opt;
      opt.type = ecekde::parse_name<ecekde::CalibrationType>(names[i]);
      opt.bandwidth = 0.2;
      expect_same(results[i], direct(f.data, opt));
    }
  }
}

// float32 in Fortran order gives the numbers of the same float32 matrix in C order.
TEST(Cli, Float32FortranInput) {
  testfiles::ScratchDir dir;
  const std::vector<float> rows{0.2f, 0.8f, 0.6f, 0.4f, 0.7f, 0.3f, 0.1f, 0.9f};
  const std::vector<float> cols{0.2f, 0.6f, 0.7f, 0.1f, 0.8f, 0.4f, 0.3f, 0.9f};
  std::string data(cols.size() * sizeof(float), '\0');
  std::memcpy(data.data(), cols.data(), data.size());
  const std::string p = dir.write("p.npy", testfiles::npy(testfiles::dict("<f4", true, "(4, 2)"), data));
  const std::vector<std::int64_t> y{1, 0, 0, 1};
  ecekde::io::write_npy(dir.path("y.npy"), y, {4});
  ecekde::EstimateOptions opt;
  opt.bandwidth = 0.3;
  const ecekde::Result r = ecekde::estimate(ecekde::ProbsView::row_major(rows.data(), 4, 2), y, opt);
  const Output o = ecekde_cli(dir, {"estimate", "--probs", p, "--labels", dir.path("y.npy"), "--bandwidth", "0.3", "--json"});
  expect_same(parse_results(o)[0], r);
  EXPECT_EQ(json::parse(o.out).at("input").at("probs_dtype"), "float32");
}

// CSV files (two files, or one with a label column) give exactly the numbers of the NPY files.
TEST(Cli, CsvFormsEqualNpy) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 80, 3, 14);
  const json expected =
      parse_results(ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type", "all", "--json"}));

  std::vector<double> labels(f.data.y.begin(), f.data.y.end());
  ecekde::io::write_csv(dir.path("probs.csv"), {"p0", "p1", "p2"}, f.data.f);
  ecekde::io::write_csv(dir.path("labels.csv"), {"label"}, labels);
  EXPECT_EQ(parse_results(ecekde_cli(dir, {"estimate", "--probs", dir.path("probs.csv"), "--labels",
                                           dir.path("labels.csv"), "--type", "all", "--json"})),
            expected);

  std::vector<double> table;
  for (std::size_t r = 0; r < f.data.n; ++r) {
    table.push_back(f.data.at(r, 0));
    table.push_back(f.data.at(r, 1));
    table.push_back(labels[r]);
    table.push_back(f.data.at(r, 2));
  }
  ecekde::io::write_csv(dir.path("data.csv"), {"p0", "p1", "y", "p2"}, table);
  for (const char* column : {"y", "2"}) {
    const Output o = ecekde_cli(
        dir, {"estimate", "--data", dir.path("data.csv"), "--label-column", column, "--type", "all", "--json"});
    EXPECT_EQ(parse_results(o), expected) << column;
    EXPECT_EQ(json::parse(o.out).at("input").at("label_column"), column);
  }
}

std::string g6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

TEST(Cli, TableShowsEveryResult) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 90, 2, 15);
  const Output o = ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--type", "all"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_TRUE(o.out.ends_with('\n')) << "output does not end with a newline";
  const auto lines = lines_of(o.out);
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(words_of(lines[0]), (std::vector<std::string>{"estimator", "type", "p", "h", "CE_p", "CE_p", "interval",
                                                          "CE_p^p", "n", "K", "bandwidth", "rule"}));
  const char* types[] = {"canonical", "marginal", "top-label", "binary"};
  std::size_t warnings = 0;  // after the table, one line each: "warning: TYPE (p = P): ..."
  for (std::size_t i = 0; i < 4; ++i) {
    ecekde::EstimateOptions opt;
    opt.type = ecekde::parse_name<ecekde::CalibrationType>(types[i]);
    const ecekde::Result r = direct(f.data, opt);
    for (const std::string& w : r.warnings) {
      ASSERT_LT(5 + warnings, lines.size()) << w;
      EXPECT_EQ(lines[5 + warnings++], "warning: " + std::string(types[i]) + " (p = 1): " + w);
    }
    ASSERT_TRUE(r.ce_interval);
    std::string lower = "[", upper = g6(r.ce_interval->upper);  // appended: GCC 12 warns falsely on "[" + string
    lower += g6(r.ce_interval->lower);
    lower += ',';
    upper += ']';
    const std::vector<std::string> expected{"crossfit", types[i], g6(r.p), g6(r.bandwidth), g6(r.ce), lower, upper,
                                            g6(r.ce_pow_p), "90", "2", "auto:", "loo-regression,", "9-point", "grid"};
    EXPECT_EQ(words_of(lines[i + 1]), expected);
    EXPECT_EQ(lines[i + 1].find("CE_p"), std::string::npos);
  }
  EXPECT_EQ(lines.size(), 5 + warnings);
  // Columns line up: every row is as long as the header up to the last column.
  EXPECT_EQ(lines[1].find("auto"), lines[0].find("bandwidth rule"));

  const Output fixed = ecekde_cli(dir, {"estimate", "--probs", f.probs, "--labels", f.labels, "--bandwidth", "0.25"});
  EXPECT_TRUE(fixed.out.ends_with('\n')) << "output does not end with a newline";
  ASSERT_EQ(lines_of(fixed.out).size(), 2u);
  EXPECT_EQ(words_of(lines_of(fixed.out)[1]).back(), "fixed");
  EXPECT_EQ(words_of(lines_of(fixed.out)[1])[3], "0.25");
}

TEST(Cli, HelpAndVersion) {
  testfiles::ScratchDir dir;
  const Output help = ecekde_cli(dir, {"estimate", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.err, "");
  for (const char* flag : {"--probs", "--labels", "--data", "--label-column", "--type", "--p", "--bandwidth",
                           "--criterion", "--grid", "--no-refine", "--renormalize", "--threads", "--block-size",
                           "--isa", "--json"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  // Defaults shown come from the library's option structs.
  EXPECT_NE(help.out.find("--type NAME=canonical"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--p FLOAT=1"), std::string::npos);
  EXPECT_NE(help.out.find("--criterion NAME=loo-likelihood"), std::string::npos);
  EXPECT_NE(help.out.find("--bandwidth auto|FLOAT=auto"), std::string::npos);

  const Output top = ecekde_cli(dir, {"--help"});
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("estimate"), std::string::npos);
  const Output version = ecekde_cli(dir, {"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_FALSE(version.out.empty());
}

// The message the library gives for these predictions and options (what the CLI must show).
std::string library_message(const oracle::Data& d, ecekde::EstimateOptions o = {}) {
  try {
    direct(d, o);
  } catch (const ecekde::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the library accepted the input";
  return "";
}

// Every kind of bad input: a non-zero exit, nothing on stdout, and exactly one line on stderr.
TEST(Cli, BadInputGivesOneLineAndNonZeroExit) {
  testfiles::ScratchDir dir;
  const PredictionFiles f = write_predictions(dir, 40, 3, 16);
  const auto write = [&](const std::string& name, const oracle::Data& d, bool one_column = false) {
    const std::string p = dir.path(name);
    if (one_column)
      ecekde::io::write_npy(p, d.f, {d.n});
    else
      ecekde::io::write_npy(p, d.f, {d.n, d.k});
    ecekde::io::write_npy(dir.path("y_" + name), d.y, {d.n});
    return p;
  };
  const auto expect_failure = [&](const std::vector<std::string>& args, const std::string& message, int status) {
    SCOPED_TRACE(message);
    const Output o = ecekde_cli(dir, args);
    EXPECT_EQ(o.status, status);
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(o.err, "ecekde: error: " + message + "\n");
  };
  const auto estimate_on = [&](const std::string& probs, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"estimate", "--probs", probs, "--labels", dir.path("y_" + probs.substr(probs.rfind('/') + 1))};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const std::vector<std::string> good{"estimate", "--probs", f.probs, "--labels", f.labels};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = good;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };

  // Values the library rejects: the CLI shows the library's message.
  oracle::Data short_labels = f.data;
  short_labels.y.pop_back();
  ecekde::io::write_npy(dir.path("short_labels.npy"), short_labels.y, {short_labels.y.size()});
  expect_failure({"estimate", "--probs", f.probs, "--labels", dir.path("short_labels.npy")},
                 "labels has 39 entries but probs has 40 rows", 1);
  oracle::Data nan = f.data;
  nan.f[3 * 3 + 1] = NAN;
  expect_failure(estimate_on(write("nan.npy", nan)), library_message(nan), 1);
  EXPECT_EQ(library_message(nan), "probs row 3, column 1: value nan is not finite");
  oracle::Data negative = f.data;
  negative.f[5 * 3 + 2] = -0.25;
  expect_failure(estimate_on(write("negative.npy", negative)), "probs row 5, column 2: value -0.25 is negative", 1);
  oracle::Data sum = f.data;
  sum.f[7 * 3] += 0.5;
  expect_failure(estimate_on(write("sum.npy", sum)), library_message(sum), 1);
  oracle::Data label = f.data;
  label.y[9] = 3;
  expect_failure(estimate_on(write("label.npy", label)), "labels row 9: value 3 is outside [0, 3)", 1);
  oracle::Data one = f.data;
  one.n = 1;
  one.f.resize(3);
  one.y.resize(1);
  expect_failure(estimate_on(write("one.npy", one)), "need at least 2 samples, got 1", 1);
  const PredictionFiles binary = write_predictions(dir, 30, 1, 17, "binary_");
  expect_failure({"estimate", "--probs", binary.probs, "--labels", binary.labels, "--type", "canonical"},
                 "type canonical needs at least 2 classes, probs has 1 column", 1);
  expect_failure(with({"--type", "binary"}), "type binary needs 1 column (P(y = 1)) or 2 columns, probs has 3 columns", 1);

  // Options.
  expect_failure(with({"--bandwidth", "0"}), "bandwidth must be a finite number > 0, got 0", 1);
  expect_failure(with({"--bandwidth=-1"}), "bandwidth must be a finite number > 0, got -1", 1);
  expect_failure(with({"--bandwidth", "wide"}), "--bandwidth must be 'auto' or a number, got 'wide' (see 'ecekde estimate --help')", 2);
  expect_failure(with({"--bandwidth", "nan"}), "bandwidth must be a finite number > 0, got nan", 1);
  expect_failure(with({"--p", "0.5"}), "p must be a finite number >= 1, got 0.5", 1);
  expect_failure(with({"--p", "two"}), "--p must be a number, got 'two' (see 'ecekde estimate --help')", 2);
  expect_failure(with({"--max-rows", "-3"}), "--max-rows must be an integer >= 0, got '-3' (see 'ecekde estimate --help')", 2);
  expect_failure(with({"--grid", "0.1,x"}), "--grid must be comma-separated numbers, got '0.1,x' (see 'ecekde estimate --help')", 2);
  expect_failure(with({"--estimator", "exact"}), "unknown estimator 'exact' (expected crossfit or paper)", 1);
  expect_failure(with({"--type", "classwise"}),
                 "unknown --type 'classwise' (expected canonical, marginal, top-label, binary or all)", 1);
  expect_failure(with({"--criterion", "mle"}), "unknown bandwidth criterion 'mle' (expected loo-likelihood, reference or loo-regression)", 1);
  expect_failure(with({"--grid", "0.1,-1"}), "bandwidth grid values must be finite numbers > 0, got -1", 1);
  expect_failure(with({"--threads", "-1"}), "threads must be >= 0 (0 = all cores), got -1", 1);

  // Files.
  const std::string missing = dir.path("missing.npy");
  expect_failure({"estimate", "--probs", missing, "--labels", f.labels}, missing + ": cannot open: No such file or directory", 1);
  const std::string corrupt = dir.write("corrupt.npy", "\x93NUMPX\x01\x00");
  expect_failure({"estimate", "--probs", corrupt, "--labels", f.labels},
                 corrupt + ": not an NPY file (it does not start with the magic string \\x93NUMPY)", 1);
  const std::string whole = testfiles::slurp(f.probs);
  const std::string cut = dir.write("cut.npy", whole.substr(0, whole.size() - 8));
  expect_failure({"estimate", "--probs", cut, "--labels", f.labels},
                 cut + ": truncated data: shape (40, 3) of '<f8' needs 960 bytes, the file has 952", 1);
  const std::string frac = dir.write("labels.csv", "label\n0\n1\n1\n2.5\n");
  expect_failure({"estimate", "--probs", f.probs, "--labels", frac}, frac + " line 5: '2.5' is not an integer label", 1);
  const std::string ragged = dir.write("ragged.csv", "a,b,y\n0.5,0.5,1\n0.5,1\n");
  expect_failure({"estimate", "--data", ragged, "--label-column", "y"}, ragged + " line 3: 2 columns, expected 3 (as in line 1)", 1);
  const std::string data = dir.write("data.csv", "a,b,y\n0.5,0.5,1\n0.5,0.5,0\n");
  expect_failure({"estimate", "--data", data, "--label-column", "label"}, data + ": no column named 'label' (columns: a, b, y)", 1);

  // The command line itself.
  expect_failure({"estimate"}, "no input: give --probs and --labels, or --data and --label-column", 2);
  expect_failure({"estimate", "--probs", f.probs}, "--probs needs --labels", 2);
  expect_failure({"estimate", "--data", ragged}, "--data needs --label-column", 2);
  expect_failure(with({"--data", ragged}), "give either --probs and --labels, or --data and --label-column, not both", 2);
  expect_failure(with({"--fast"}), "The following argument was not expected: --fast (see 'ecekde estimate --help')", 2);
  expect_failure({"estimat"}, "unknown command 'estimat' (expected estimate, report, fit-temperature, synth, options)", 2);
  expect_failure({}, "A subcommand is required (see 'ecekde --help')", 2);
}

// The bundled example data is what its generator writes, and `make run`'s command works on it.
TEST(Cli, ExampleDataIsReproducible) {
  testfiles::ScratchDir dir;
  const Output gen = run_program(dir, ECEKDE_MAKE_SYNTHETIC, {dir.path("p.npy"), dir.path("y.npy")});
  ASSERT_EQ(gen.status, 0) << gen.err;
  const std::string examples = ECEKDE_EXAMPLES_DIR;
  EXPECT_EQ(testfiles::slurp(dir.path("p.npy")), testfiles::slurp(examples + "/synthetic_probs.npy"));
  EXPECT_EQ(testfiles::slurp(dir.path("y.npy")), testfiles::slurp(examples + "/synthetic_labels.npy"));

  // A fixed bandwidth keeps this quick under the sanitizers; automatic selection is tested above.
  const Output run = ecekde_cli(dir, {"estimate", "--probs", examples + "/synthetic_probs.npy", "--labels",
                                      examples + "/synthetic_labels.npy", "--type", "all", "--bandwidth", "0.01",
                                      "--json"});
  const json results = parse_results(run);
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r.at("n"), 2000);
    EXPECT_EQ(r.at("k"), 10);
  }
  // The model is overconfident by construction: top-label CE_1 is near its confidence-accuracy gap (0.147).
  EXPECT_GT(results[2].at("ce").get<double>(), 0.1);
}

}  // namespace
