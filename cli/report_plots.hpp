// The figures of `ecekde report --plot` (SVG).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ecekde/report.hpp"

namespace ecekde::cli {

/// Writes the figures into `directory` (created if missing) and returns their paths: the top-label
/// (binary for one column) reliability diagram, the per-class diagrams (K >= 2), and for K = 3 the
/// simplex view. class_names name the columns.
std::vector<std::string> write_report_plots(ProbsView probs, LabelsView labels, const report::Report& report,
                                            const std::vector<std::string>& class_names, const std::string& directory,
                                            std::size_t simplex_bins);

}  // namespace ecekde::cli
