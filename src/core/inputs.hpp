// Validation of user input, and conversion to the double-precision working copy every estimator uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ecekde/data.hpp"

namespace ecekde::detail {

/// Validated predictions: n x k probabilities (row-major, double) and labels in [0, k) (or {0, 1} for
/// one-column input).
struct CheckedPredictions {
  std::size_t n = 0, k = 0;
  std::vector<double> f;       // n x k
  std::vector<std::int32_t> y; // n

  double operator()(std::size_t r, std::size_t c) const { return f[r * k + c]; }
};

/// Where the rows being read sit in the whole input: a rank that holds only its own rows
/// (ExecutionOptions::own_rows) names rows in messages by their index in the whole input, and may hold
/// fewer than 2 of them.
struct RowsAt {
  std::size_t first = 0;  // the whole input's index of the first row
  bool slice = false;     // a slice of the input: no minimum number of rows
};

/// Checks and converts probabilities: finite, non-negative, rows summing to 1 within row_sum_tolerance
/// (or rescaled when renormalize), or one column of values in [0, 1]. At least 2 rows and 1 column.
std::vector<double> read_probabilities(ProbsView probs, bool renormalize, RowsAt at = {});

/// Checks that probs and labels agree in length and that labels are in [0, classes).
std::vector<std::int32_t> read_labels(LabelsView labels, std::size_t rows, std::size_t classes, RowsAt at = {});

/// Both of the above; one-column probabilities take labels in {0, 1}.
CheckedPredictions read_predictions(ProbsView probs, LabelsView labels, bool renormalize, RowsAt at = {});

/// Option checks shared by every estimator.
void check_p(double p);
void check_bandwidth(double h);

/// Tolerance on |row sum - 1| for float64 input.
inline constexpr double kRowSumTolerance = 1e-6;

/// The tolerance applied to `probs`: kRowSumTolerance, or max(1e-6, K * 2^-24) for float32 input, whose
/// entries each carry up to 2^-24 relative rounding.
double row_sum_tolerance(ProbsView probs);

}  // namespace ecekde::detail
