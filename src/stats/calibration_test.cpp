// Consistency-resampling calibration test. For ECE^KDE only the labels change between relabelled copies,
// so all copies share the kernel weights of one sweep and each adds one add per pair.
#include "ecekde/calibration_test.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "core/estimate_steps.hpp"
#include "core/label_draws.hpp"
#include "stats/resampling.hpp"
#include "core/distributed.hpp"
#include "core/numeric.hpp"
#include "core/messages.hpp"
#include "ecekde/random.hpp"
#include "core/replicate_reducers.hpp"
#include "core/ring.hpp"
#include "core/ring_estimate.hpp"

namespace ecekde {

namespace detail {

double p_value(double statistic, const std::vector<double>& null_values) {
  std::size_t at_least = 0;
  for (double v : null_values) at_least += v >= statistic;
  return static_cast<double>(1 + at_least) / static_cast<double>(null_values.size() + 1);
}

std::vector<double> copy_uniforms(std::size_t n, std::uint64_t seed, std::size_t replicate) {
  Rng rng = Rng::stream(seed, replicate);
  std::vector<double> u(n);
  for (double& v : u) v = rng.uniform();
  return u;
}

std::vector<std::uint8_t> hits_of(std::span<const double> uniforms, std::span<const double> lower,
                                  std::span<const double> upper) {
  std::vector<std::uint8_t> hits(uniforms.size());
  for (std::size_t r = 0; r < hits.size(); ++r) hits[r] = lower[r] <= uniforms[r] && uniforms[r] < upper[r];
  return hits;
}

CalibrationTestResult test_of_copies(const std::function<double()>& statistic, const CalibrationTestOptions& test,
                                     const ExecutionOptions& execution, std::size_t n, std::size_t k,
                                     const std::function<double(std::size_t)>& copy) {
  CalibrationTestResult out;
  WorkLedger::plan(execution.control, static_cast<double>(test.replicates + 1));  // one unit per statistic
  out.statistic = statistic();
  WorkLedger::done(execution.control, 1);
  out.null_values.assign(test.replicates, 0.0);
  // Split across ranks, each computes its share of the copies (as bootstrap()).
  Communicator* comm = split_across(execution.communicator);
  check_same_replicates(comm, n, k, test.replicates, test.seed);
  const Share mine = share_of(test.replicates, comm);
  const double counted = static_cast<double>(test.replicates) / static_cast<double>(std::max<std::size_t>(mine.size(), 1));
  parallel_for(
      mine.size(), execution.threads,
      [&](std::size_t own, int) {
        out.null_values[mine.begin + own] = copy(mine.begin + own);
        WorkLedger::done(execution.control, counted);
      },
      execution.control);
  combine_shares(comm, out.null_values);
  out.p_value = p_value(out.statistic, out.null_values);
  return out;
}

namespace {

void check_test(const CalibrationTestOptions& o) {
  if (o.replicates < 1) fail("calibration test replicates must be at least 1, got 0");
}

// Relabelled copies of validated predictions (n x k), each row's running sums formed once.
class LabelDraws {
 public:
  LabelDraws(std::vector<double> f, std::size_t k) : running_(std::move(f)), k_(k) {
    for (std::size_t r = 0; r < running_.size() / k_; ++r) running_sums(&running_[r * k_], k_, &running_[r * k_]);
  }

  // Relabelled copy `replicate`: each row's label drawn from its prediction.
  std::vector<std::int64_t> copy(std::uint64_t seed, std::size_t replicate) const {
    Rng rng = Rng::stream(seed, replicate);
    std::vector<std::int64_t> y(running_.size() / k_);
    for (std::size_t r = 0; r < y.size(); ++r) y[r] = draw_label(&running_[r * k_], k_, rng);
    return y;
  }

 private:
  std::vector<double> running_;  // n x k
  std::size_t k_;
};

// calibration_test_kde() of prepared input: alone, with rows split over the ranks, or with problems owned
// by ranks (own rows' marginal), each then swept alone on its owner. relabel(problem, r, classes) gives
// input row r's class in the problem in each copy (classes[b]).
template <class Relabel>
CalibrationTestResult prepared_test(const Prepared& in, const EstimateOptions& options,
                                    const CalibrationTestOptions& test, Relabel relabel) {
  const std::size_t n = in.pred.n, k = in.pred.k, B = test.replicates, Q = in.problems.size();
  // the statistic's sweep and the relabelled copies' sweep of each problem
  const bool own_sweep = !replicates_give_estimate(in.problems.front(), in.plan);
  const PlannedWork planned(in.plan.control, leave_one_out_work(in, own_sweep + replicate_pair_work(B)));
  check_same_replicates(in.plan.communicator, n, k, B, test.seed);
  CalibrationTestResult out;
  out.bandwidth = start_result(options, in).bandwidth;
  const double h = out.bandwidth, p = options.p, weight = problem_weight(options.type);

  const auto [mine, plan] = own_problems(in.plan, Q);
  std::vector<std::vector<double>> per_problem(Q);  // the statistic's term, then each copy's
  for (std::size_t problem = mine.begin; problem < mine.end; ++problem) {
    const LabelledPoints& lp = in.problems[problem];
    // each centre's class in each copy, in the problem's (sorted) order
    std::vector<std::uint16_t> relabelled(n * B);
    for (std::size_t j = 0; j < n; ++j) relabel(problem, lp.original[j], relabelled.data() + j * B);
    const std::size_t L = lp.classes;
    std::vector<double> offsets(n), contrib(n * B), terms(n);
    lp.points.centre_offsets(h, offsets, plan.threads);
    auto finish = [&](std::size_t j, const double* acc, std::size_t stride, const double* own_sums) {
      terms[lp.original[j]] = row_error(lp, j, own_sums, p);
      std::vector<double> num(L);
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t c = 0; c < L; ++c) num[c] = acc[(b * L + c) * stride];
        contrib[lp.original[j] * B + b] = row_error(lp, j, num.data(), p);
      }
    };
    sweep(lp.points, plan, RelabelledClassSums(lp, *plan.kernels, offsets, 1 / h, relabelled.data(), B, plan.block, finish));
    std::vector<double>& values = per_problem[problem];
    values.push_back(weight * (own_sweep ? mean_error(lp, h, p, plan) : accurate_sum(terms) / static_cast<double>(n)));
    std::vector<double> column(n);
    for (std::size_t b = 0; b < B; ++b) {
      for (std::size_t r = 0; r < n; ++r) column[r] = contrib[r * B + b];
      values.push_back(weight * accurate_sum(column) / static_cast<double>(n));
    }
  }
  out.null_values = sum_over_problems(in.plan, per_problem, 1 + B);
  out.statistic = out.null_values.front();
  out.null_values.erase(out.null_values.begin());
  out.p_value = p_value(out.statistic, out.null_values);
  return out;
}

}  // namespace

// Canonical: each rank draws its own rows' labels in every copy (a copy's stream first skips the rows before them, one
// uniform each, so the draws are the lone ones), and these travel with its block of centres. A row's sums
// over the blocks are merged max-shifted, as the ring's estimate merges them.
CalibrationTestResult own_rows_calibration_test(ProbsView probs, LabelsView labels, const EstimateOptions& given,
                                                const CalibrationTestOptions& test, std::size_t sums_bytes) {
  EstimateOptions options = given;
  options.estimator = Estimator::paper;  // the test's statistic and bandwidth are the paper's, whatever the estimator
  RingInput ring = ring_input(probs, labels, options);
  if (options.type != CalibrationType::canonical) {
    // One-dimensional problems: every rank draws every row's uniform in every copy (n x B values), and a
    // problem row's class in a copy is whether its uniform draws the positive class: bitwise the lone draws.
    if (probs.cols() > 65535) fail_with("the calibration test supports at most 65535 classes, got ", probs.cols());
    const OneDimensionalRing problems = one_dimensional_ring(ring, options, true);
    const std::size_t n = ring.at.n, B = test.replicates;
    std::vector<double> uniforms(n * B);  // input row r, copy b -> uniforms[r*B + b]
    for (std::size_t b = 0; b < B; ++b) {
      Rng rng = Rng::stream(test.seed, b);
      for (std::size_t r = 0; r < n; ++r) uniforms[r * B + b] = rng.uniform();
    }
    return prepared_test(problems.in, options, test, [&](std::size_t problem, std::size_t r, std::uint16_t* classes) {
      const double lower = problems.lower[problem][r], upper = problems.upper[problem][r];
      for (std::size_t b = 0; b < B; ++b) classes[b] = lower <= uniforms[r * B + b] && uniforms[r * B + b] < upper;
    });
  }
  const RingLayout& at = ring.at;
  Prepared& in = ring.in;
  const std::size_t k = probs.cols(), B = test.replicates;
  if (k > 65535) fail_with("the calibration test supports at most 65535 classes, got ", k);
  check_same_replicates(at.comm, at.n, k, B, test.seed);
  in.problems = make_problems(in.pred, options.type, in.plan.threads);
  const LabelledPoints& lp = in.problems.front();
  const KernelPoints& x = lp.points;
  const SweepPlan& plan = in.plan;
  CalibrationTestResult out;
  out.bandwidth = ring_paper_bandwidth(at, in.problems, options, plan).bandwidth;
  const double h = out.bandwidth, p = options.p, weight = problem_weight(options.type);

  // This rank's centres' classes in each copy, centre-major in the problem's order: the block's payload.
  std::vector<double> payload(x.n * B);
  {
    std::vector<Rng> streams;
    for (std::size_t b = 0; b < B; ++b) {
      streams.push_back(Rng::stream(test.seed, b));
      for (std::size_t r = 0; r < at.first; ++r) streams.back().uniform();  // the other ranks' rows before these
    }
    std::vector<double> running(k);
    for (std::size_t r = 0; r < at.own; ++r) {
      running_sums(in.pred.f.data() + r * k, k, running.data());
      for (std::size_t b = 0; b < B; ++b) payload[r * B + b] = static_cast<double>(draw_label(running.data(), k, streams[b]));
    }
    std::vector<double> by_centre(payload.size());
    for (std::size_t j = 0; j < x.n; ++j)
      std::copy_n(payload.begin() + static_cast<std::ptrdiff_t>(lp.original[j] * B), B,
                  by_centre.begin() + static_cast<std::ptrdiff_t>(j * B));
    payload.swap(by_centre);
  }
  std::vector<std::vector<double>> offsets(1, std::vector<double>(x.n));
  x.centre_offsets(h, offsets[0], plan.threads);
  const std::vector<double> packed = CentreBlock::pack(lp, offsets, at.largest, payload, B);
  payload = {};

  const std::size_t L = lp.classes, width = (B + 1) * L;
  const std::size_t group = std::max<std::size_t>(1, sums_bytes / (sizeof(double) * width));
  std::vector<double> terms(x.n), contrib(x.n * B);
  // Every rank takes as many groups as the rank with the most rows, so that every block goes round each time.
  for (std::size_t g0 = 0; g0 == 0 || g0 < at.largest; g0 += group) {
    const std::size_t rows = std::min(group, x.n - std::min(g0, x.n));
    std::vector<double> scale(rows, -std::numeric_limits<double>::infinity()), sums(rows * width, 0.0);
    std::vector<std::uint16_t> block_labels;
    around_the_ring(at, packed, {L, x.dim, 1, B}, [&](const CentreBlock& block, bool own) {
      block_labels.resize(block.payload().size());
      std::transform(block.payload().begin(), block.payload().end(), block_labels.begin(),
                     [](double c) { return static_cast<std::uint16_t>(c); });
      if (rows == 0 || block.count() == 0) return;
      auto merge = [&](std::size_t q, double m, const double* record) {
        add_shifted(scale[q], sums.data() + q * width, m, record, width);
      };
      auto unused = [](std::size_t, const double*, std::size_t, const double*) {};
      const WithScale reducer(RelabelledClassSums(block.runs(), *plan.kernels, block.offsets()[0], 1 / h,
                                                  block_labels.data(), B, plan.block, unused, own, g0),
                              merge);
      sweep_points(x.log_x.data() + g0 * x.dim, block.x_t(), rows, block.count(), x.dim, plan, reducer);
    });
    std::vector<double> num(L);
    for (std::size_t q = 0; q < rows; ++q) {
      const std::size_t j = g0 + q;
      const double* row = sums.data() + q * width;
      terms[lp.original[j]] = row_error(lp, j, row + B * L, p);
      for (std::size_t b = 0; b < B; ++b) {
        for (std::size_t c = 0; c < L; ++c) num[c] = row[b * L + c];
        contrib[lp.original[j] * B + b] = row_error(lp, j, num.data(), p);
      }
    }
  }
  const double n = static_cast<double>(at.n);
  // The statistic from the copies' sweep where that is estimate()'s (in double), as alone.
  out.statistic = weight * (replicates_give_estimate(lp, plan) ? total_over_ranks(at.comm, terms) / n
                                                                : ring_mean_error(at, lp, h, p, plan));
  out.null_values.assign(B, 0.0);
  std::vector<double> column(x.n);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t r = 0; r < x.n; ++r) column[r] = contrib[r * B + b];
    out.null_values[b] = accurate_sum(column);
  }
  combine_shares(at.comm, out.null_values);
  for (double& v : out.null_values) v = weight * v / n;
  out.p_value = p_value(out.statistic, out.null_values);
  return out;
}

}  // namespace detail

std::vector<std::int64_t> consistency_labels(ProbsView probs, std::uint64_t seed, std::size_t replicate) {
  return detail::LabelDraws(detail::read_probabilities(probs, false), probs.cols()).copy(seed, replicate);
}

CalibrationTestResult calibration_test_kde(ProbsView probs, LabelsView labels, const EstimateOptions& options,
                                           const CalibrationTestOptions& test) {
  check_options(options);
  detail::check_paper_entry(options, "calibration_test_kde");
  detail::check_test(test);
  if (options.execution.own_rows) return detail::own_rows_calibration_test(probs, labels, options, test);
  const auto in = detail::prepare(probs, labels, options.type, options.renormalize, options.execution, true);
  const std::size_t n = in.pred.n, k = in.pred.k, B = test.replicates;
  if (k > 65535) detail::fail_with("the calibration test supports at most 65535 classes, got ", k);

  // Row by row, with one stream per copy (each stream still draws its rows in order): a row's running
  // sums are formed once for all copies, without an n x K copy of the predictions.
  std::vector<std::uint16_t> drawn(n * B);  // input row r, copy b -> drawn[r*B + b]
  std::vector<Rng> streams;
  for (std::size_t b = 0; b < B; ++b) streams.push_back(Rng::stream(test.seed, b));
  std::vector<double> running(k);
  for (std::size_t r = 0; r < n; ++r) {
    detail::running_sums(in.pred.f.data() + r * k, k, running.data());
    for (std::size_t b = 0; b < B; ++b)
      drawn[r * B + b] = static_cast<std::uint16_t>(detail::draw_label(running.data(), k, streams[b]));
  }
  return detail::prepared_test(in, options, test, [&](std::size_t problem, std::size_t r, std::uint16_t* classes) {
    const std::size_t top = options.type == CalibrationType::top_label ? detail::top_index(in.pred, r) : 0;
    for (std::size_t b = 0; b < B; ++b) {
      const std::uint16_t y = drawn[r * B + b];
      std::uint16_t cls = y;
      if (options.type == CalibrationType::top_label) cls = y == top;
      if (options.type == CalibrationType::marginal) cls = y == problem;
      classes[b] = cls;
    }
  });
}

CalibrationTestResult calibration_test(ProbsView probs, LabelsView labels,
                                       const std::function<double(ProbsView, LabelsView)>& statistic,
                                       const CalibrationTestOptions& test, const ExecutionOptions& execution) {
  detail::check_test(test);
  if (execution.own_rows) detail::refuse_own_rows();
  // Read and checked once, not once per copy (an n x K copy each: at K = 1,000 most of a binned test's time).
  std::optional<detail::LabelDraws> draws;
  return detail::test_of_copies(
      [&] {
        const double value = statistic(probs, labels);
        draws.emplace(detail::read_probabilities(probs, false), probs.cols());
        return value;
      },
      test, execution, probs.rows(), probs.cols(),
      [&](std::size_t b) { return statistic(probs, LabelsView(draws->copy(test.seed, b))); });
}

}  // namespace ecekde
