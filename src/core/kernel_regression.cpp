// kernel_regression(): a sweep whose rows are query points and whose centres are the samples. With own rows
// (ExecutionOptions::own_rows), canonical sweeps the queries against this rank's centres and merges the
// ranks' max-shifted sums in rank order; the one-dimensional types take their problems as the ring's
// estimate does (gathered or owned) and then run as alone.
#include "ecekde/kernel_regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/distributed.hpp"
#include "core/estimate_steps.hpp"
#include "core/reducers.hpp"
#include "core/messages.hpp"
#include "core/ring.hpp"
#include "core/ring_estimate.hpp"

namespace ecekde {

namespace detail {
namespace {

// The queries checked and as the sweep's rows: Q x K points (canonical) or Q scores s as (s, 1 - s).
KernelPoints query_points(ProbsView queries, CalibrationType type, std::size_t k) {
  const bool canonical = type == CalibrationType::canonical;
  const std::size_t want_cols = canonical ? k : 1;
  if (queries.cols() != want_cols)
    fail_with("queries for type ", to_string(type), " need ", want_cols, " column", want_cols == 1 ? "" : "s", ", got ",
              queries.cols());
  const std::size_t Q = queries.rows();
  std::vector<double> x(Q * (canonical ? k : 2));
  for (std::size_t q = 0; q < Q; ++q) {
    double sum = 0;
    for (std::size_t c = 0; c < want_cols; ++c) {
      const double v = queries(q, c);
      if (!(std::isfinite(v) && v >= 0 && v <= 1))
        fail_with("queries row ", q, ", column ", c, ": value ", v, " is not a probability");
      sum += v;
    }
    if (canonical && std::fabs(sum - 1) > kRowSumTolerance)
      fail_with("queries row ", q, " sums to ", sum, ", not 1 (tolerance ", kRowSumTolerance, ")");
    if (canonical) {
      for (std::size_t c = 0; c < k; ++c) x[q * k + c] = queries(q, c);
    } else {
      x[2 * q] = queries(q, 0);
      x[2 * q + 1] = 1 - queries(q, 0);
    }
  }
  return KernelPoints::from_rows(x.data(), Q, canonical ? k : 2);
}

// Stops every rank, with check_same_input's message, unless every rank passes the same queries.
void check_same_queries(Communicator* comm, std::size_t n, std::size_t k, const KernelPoints& rows) {
  const double what[] = {static_cast<double>(n), static_cast<double>(k), static_cast<double>(rows.n),
                         checksum(rows.x_t, {})};
  check_same_input(comm, what);
}

KernelRegression empty_regression(CalibrationType type, std::size_t Q, std::size_t k, double h) {
  KernelRegression out;
  out.type = type;
  out.queries = Q;
  out.bandwidth = h;
  out.columns = type == CalibrationType::canonical || type == CalibrationType::marginal ? k : 1;
  out.log_density.assign(Q * out.columns, 0.0);
  out.expectation.assign(Q * out.columns, 0.0);
  return out;
}

// Query q's log density and expectation in `problem` from its class sums over all n centres (scaled by
// exp(-m)).
void set_query(KernelRegression& out, std::size_t problem, std::size_t q, double m, const double* sums,
               std::size_t classes, std::size_t n) {
  double den = 0;
  for (std::size_t c = 0; c < classes; ++c) den += sums[c];
  const double log_density = m + std::log(den) - std::log(static_cast<double>(n));
  if (out.type == CalibrationType::canonical) {
    for (std::size_t c = 0; c < out.columns; ++c) {
      out.log_density[q * out.columns + c] = log_density;
      out.expectation[q * out.columns + c] = sums[c] / den;
    }
  } else {
    out.log_density[q * out.columns + problem] = log_density;
    out.expectation[q * out.columns + problem] = sums[1] / den;
  }
}

// The regression of prepared input: alone, with the queries split over the ranks, or with problems owned by
// ranks (own rows' marginal: each rank its classes' columns, the others zero until combined).
KernelRegression prepared_regression(const Prepared& in, const EstimateOptions& options, const KernelPoints& rows) {
  // the queries' sweep of each problem, planned ahead of the bandwidth search
  const PlannedWork planned(in.plan.control,
                            leave_one_out_work(in, static_cast<double>(rows.n) / static_cast<double>(in.pred.n), true));
  KernelRegression out = empty_regression(options.type, rows.n, in.pred.k, start_result(options, in).bandwidth);
  const double h = out.bandwidth;
  const auto [mine, plan] = own_problems(in.plan, in.problems.size());
  for (std::size_t problem = mine.begin; problem < mine.end; ++problem) {
    const LabelledPoints& lp = in.problems[problem];
    std::vector<double> offsets(lp.points.n);
    lp.points.centre_offsets(h, offsets, plan.threads);
    auto finish = [&](std::size_t q, double m, const double* sums) {
      set_query(out, problem, q, m, sums, lp.classes, lp.points.n);
    };
    sweep(rows, lp.points, plan, ClassSums(lp, *plan.kernels, offsets, 1 / h, finish, false));
  }
  if (in.plan.owned_problems) {  // each column from its owner: x + 0 = x
    combine_shares(in.plan.communicator, out.log_density);
    combine_shares(in.plan.communicator, out.expectation);
  }
  return out;
}

// Canonical with own rows: the queries against this rank's centres, each query's max-shifted class sums
// merged over the ranks in rank order.
KernelRegression own_rows_regression(ProbsView probs, LabelsView labels, ProbsView queries,
                                     const EstimateOptions& given) {
  EstimateOptions options = given;
  options.estimator = Estimator::paper;  // the paper's bandwidth, as alone
  RingInput ring = ring_input(probs, labels, options);
  const KernelPoints rows = query_points(queries, options.type, probs.cols());
  check_same_queries(ring.at.comm, ring.at.n, probs.cols(), rows);
  if (options.type != CalibrationType::canonical)
    return prepared_regression(one_dimensional_ring(ring, options, false).in, options, rows);
  const RingLayout& at = ring.at;
  Prepared& in = ring.in;
  in.problems = make_problems(in.pred, options.type, in.plan.threads);
  const LabelledPoints& lp = in.problems.front();
  const double h = ring_paper_result(ring, options).bandwidth;
  const std::size_t Q = rows.n, L = lp.classes, width = L + 1;
  std::vector<double> mine(Q * width, 0.0);  // per query: m, then the class sums scaled by exp(-m)
  for (std::size_t q = 0; q < Q; ++q) mine[q * width] = -std::numeric_limits<double>::infinity();
  if (lp.points.n > 0) {
    std::vector<double> offsets(lp.points.n);
    lp.points.centre_offsets(h, offsets, in.plan.threads);
    auto finish = [&](std::size_t q, double m, const double* sums) {
      mine[q * width] = m;
      std::copy_n(sums, L, mine.begin() + static_cast<std::ptrdiff_t>(q * width + 1));
    };
    sweep(rows, lp.points, in.plan, ClassSums(lp, *in.plan.kernels, offsets, 1 / h, finish, false));
  }
  const bool first_rank = !at.comm || at.comm->rank() == 0;
  const std::vector<double> all = in_rank_order(at.comm, Q * width, [&](std::span<double> running) {
    for (std::size_t q = 0; q < Q; ++q) {
      double* acc = running.data() + q * width;
      if (first_rank) acc[0] = -std::numeric_limits<double>::infinity();  // the zeros in_rank_order starts from
      add_shifted(acc[0], acc + 1, mine[q * width], mine.data() + q * width + 1, L);
    }
  });
  KernelRegression out = empty_regression(options.type, Q, probs.cols(), h);
  for (std::size_t q = 0; q < Q; ++q) set_query(out, 0, q, all[q * width], all.data() + q * width + 1, L, at.n);
  return out;
}

}  // namespace
}  // namespace detail

KernelRegression kernel_regression(ProbsView probs, LabelsView labels, ProbsView queries,
                                   const EstimateOptions& options) {
  check_options(options);
  detail::check_paper_entry(options, "kernel_regression");
  if (options.execution.own_rows) return detail::own_rows_regression(probs, labels, queries, options);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  const detail::KernelPoints rows = detail::query_points(queries, options.type, in.pred.k);
  detail::check_same_queries(in.plan.communicator, in.pred.n, in.pred.k, rows);
  return detail::prepared_regression(in, options, rows);
}

}  // namespace ecekde
