// ecekde report: the library's calibration report (include/ecekde/report.hpp) of predictions read from
// files, printed as tables or JSON, with the figures written on request.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "ecekde/io.hpp"
#include "ecekde/report.hpp"
#include "input_flags.hpp"
#include "interrupt.hpp"
#include "option_flags.hpp"
#include "distributed.hpp"
#include "progress.hpp"
#include "report_plots.hpp"

namespace ecekde::cli {

namespace {

// Above this many samples the report warns that the pairwise estimators take a while.
constexpr std::size_t kLargeN = 20000;

struct ReportCommand {
  InputFlags input;
  OptionFlags flags;
  bool json = false, progress = false;
  std::string plot_directory;
  std::size_t simplex_bins = 10;

  void run() const {
    report::Settings settings;
    flags.apply(report::options(), settings);
    settings.control = &run_control();
    settings.communicator = communicator();
    if (settings.own_rows && communicator() && !plot_directory.empty())
      throw UsageError("--plot needs every row on one rank: it is not offered with --own-rows under mpirun");
    const io::Predictions in = load_inputs(input);
    // With --own-rows each rank passes its share of the rows (an .npy file is mapped: it reads their pages).
    const RowShare share = own_share(in.probs.view(), in.labels.view(), settings.own_rows);
    const std::optional<report::PreparedInput> owned = report::prepare(share.probs, share.labels, settings);
    const ProbsView probs = owned ? owned->probs_view() : share.probs;
    const LabelsView labels = owned ? owned->labels_view() : share.labels;
    if (probs.rows() > kLargeN && prints())
      std::cerr << "ecekde: warning: n = " << probs.rows()
                << " samples: ECE^KDE costs O(n^2) per sweep and the report runs dozens of sweeps; this may "
                   "take minutes (--replicates 0 skips the intervals and tests)\n";

    Progress shown(prints() && (progress || Progress::stderr_is_terminal()), run_control());
    const auto stage = [&shown](std::string_view name, const std::function<void()>& work) { shown.stage(name, work); };
    const std::string dtype = in.probs.view().dtype() == ProbsView::DType::float32 ? "float32" : "float64";
    const report::Report r = report::compute_prepared(probs, labels, settings, dtype, stage);

    stop_if_interrupted();
    if (!prints()) return;
    report::Provenance provenance;
    provenance.files = inputs_json(input);
    if (!plot_directory.empty()) {
      std::vector<std::string> names;
      for (std::size_t c = 0; c < probs.cols(); ++c)
        names.push_back(std::to_string(settings.classes.empty() ? static_cast<std::int64_t>(c) : settings.classes[c]));
      shown.stage("plots", [&] {
        provenance.plots = write_report_plots(probs, labels, r, names, plot_directory, simplex_bins);
      });
    }
    stop_if_interrupted();
    if (json) {
      std::cout << report::to_json(r, provenance).dump(2) << '\n';
    } else {
      report::print_text(std::cout, r, provenance);
    }
  }
};

}  // namespace

void register_report(CLI::App& app) {
  auto cmd = std::make_shared<ReportCommand>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Every calibration estimator on one set of predictions: ECE^KDE (canonical, marginal, top-label, binary), "
      "binned ECE and MCE, the debiased binned L2, MMCE, with bootstrap intervals and calibration-test p-values; "
      "optional figures");
  add_input_flags(*sub, cmd->input);
  cmd->flags.add(*sub, report::options());
  sub->add_option("--plot", cmd->plot_directory,
                  "Write the figures (SVG) into this directory: reliability diagrams (top-label, per class) and, "
                  "for 3 classes, the simplex view")
      ->type_name("DIR");
  sub->add_option("--simplex-bins", cmd->simplex_bins,
                  "Equal-width bins per class of the simplex histogram (3 classes)")
      ->capture_default_str();
  sub->add_flag("--json", cmd->json, "Print one JSON document (full double precision) instead of the tables");
  sub->add_flag("--progress", cmd->progress,
                "Show one line per stage on stderr with its time, and the fraction done and time left while it "
                "runs (the default when stderr is a terminal)");
  sub->callback([cmd] { cmd->run(); });
}

}  // namespace ecekde::cli
