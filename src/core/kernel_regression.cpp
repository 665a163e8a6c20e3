// kernel_regression(): a sweep whose rows are query points and whose centres are the samples.
#include "ecekde/kernel_regression.hpp"

#include <cmath>

#include "core/estimate_steps.hpp"
#include "core/reducers.hpp"
#include "core/messages.hpp"

namespace ecekde {

KernelRegression kernel_regression(ProbsView probs, LabelsView labels, ProbsView queries,
                                   const EstimateOptions& options) {
  check_options(options);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  const bool canonical = options.type == CalibrationType::canonical;
  const std::size_t k = in.pred.k, want_cols = canonical ? k : 1;
  if (queries.cols() != want_cols)
    detail::fail_with("queries for type ", to_string(options.type), " need ", want_cols, " column",
                      want_cols == 1 ? "" : "s", ", got ", queries.cols());
  const std::size_t Q = queries.rows();
  std::vector<double> x(Q * (canonical ? k : 2));
  for (std::size_t q = 0; q < Q; ++q) {
    double sum = 0;
    for (std::size_t c = 0; c < want_cols; ++c) {
      const double v = queries(q, c);
      if (!(std::isfinite(v) && v >= 0 && v <= 1))
        detail::fail_with("queries row ", q, ", column ", c, ": value ", v, " is not a probability");
      sum += v;
    }
    if (canonical && std::fabs(sum - 1) > detail::kRowSumTolerance)
      detail::fail_with("queries row ", q, " sums to ", sum, ", not 1 (tolerance ", detail::kRowSumTolerance, ")");
    if (canonical) {
      for (std::size_t c = 0; c < k; ++c) x[q * k + c] = queries(q, c);
    } else {
      x[2 * q] = queries(q, 0);
      x[2 * q + 1] = 1 - queries(q, 0);
    }
  }
  const auto rows = detail::KernelPoints::from_rows(x.data(), Q, canonical ? k : 2);

  // the queries' sweep of each problem, planned ahead of the bandwidth search
  const detail::PlannedWork planned(in.plan.control,
                                    detail::leave_one_out_work(in, static_cast<double>(Q) / static_cast<double>(in.pred.n), true));
  KernelRegression out;
  out.type = options.type;
  out.queries = Q;
  out.bandwidth = detail::start_result(options, in).bandwidth;
  out.columns = options.type == CalibrationType::marginal ? k : canonical ? k : 1;
  out.log_density.assign(Q * out.columns, 0.0);
  out.expectation.assign(Q * out.columns, 0.0);
  const double h = out.bandwidth;
  for (std::size_t problem = 0; problem < in.problems.size(); ++problem) {
    const detail::LabelledPoints& lp = in.problems[problem];
    const std::size_t n = lp.points.n, L = lp.classes;
    std::vector<double> offsets(n);
    lp.points.centre_offsets(h, offsets);
    const double log_n = std::log(static_cast<double>(n));
    auto finish = [&](std::size_t q, double m, const double* sums) {
      double den = 0;
      for (std::size_t c = 0; c < L; ++c) den += sums[c];
      const double log_density = m + std::log(den) - log_n;
      if (canonical) {
        for (std::size_t c = 0; c < k; ++c) {
          out.log_density[q * k + c] = log_density;
          out.expectation[q * k + c] = sums[c] / den;
        }
      } else {
        out.log_density[q * out.columns + problem] = log_density;
        out.expectation[q * out.columns + problem] = sums[1] / den;
      }
    };
    detail::sweep(rows, lp.points, in.plan, detail::ClassSums(lp, *in.plan.kernels, offsets, 1 / h, finish, false));
  }
  return out;
}

}  // namespace ecekde
