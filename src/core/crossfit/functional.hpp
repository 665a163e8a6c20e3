// The functional (the estimator's stages: core/crossfit.cpp): CE_p^p as the row mean of
// (e_{y_j} - f_j) . phi_p(g_j - f_j), its influence terms, standard error and interval, and the warnings a
// reader must see.
#pragma once

#include <vector>

#include "core/crossfit/correction.hpp"
#include "core/crossfit/problem.hpp"
#include "core/estimate_steps.hpp"

namespace ecekde::detail {

struct RingLayout;

// The row terms of an estimate (this rank's averaged rows), for comparing two of them.
struct RowTerms {
  double raw = 0;  // the row mean before clamping at 0
  std::vector<double> term, influence;
};

// r's CE_p^p and CE_p (marginal: each class's CE_p^p too), their standard error and intervals at
// options.level, from the corrections of `problems` (r.n rows in all; on a ring, this rank's are in's).
// Returns its row terms.
RowTerms add_functional(Result& r, const std::vector<Problem>& problems, const Fit& fit, const Prepared& in,
                        const EstimateOptions& options, const RingLayout* ring);

// Whether estimate `b` exceeds estimate `a` (the same rows, fit.averaged_rows of r.n) by more than
// kNarrowingZ standard errors of their difference (correction.hpp).
bool reads_more(const RowTerms& a, const RowTerms& b, std::size_t averaged_rows, std::size_t n, const RingLayout* ring);

// What a reader must know before trusting the figure: r's warnings (r.k, r.n and r.bandwidth set).
void add_warnings(Result& r, const std::vector<Problem>& problems, const Fit& fit, const Prepared& in,
                  const EstimateOptions& options, const RingLayout* ring);

}  // namespace ecekde::detail
