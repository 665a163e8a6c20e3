// The objectives against the library and against plain implementations written from the formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/generated/variable_factories.h>

#include "debias.hpp"
#include "ecekde/error.hpp"
#include "ecekde/estimate.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/train/objectives.hpp"

namespace {

using namespace ecekde::train;

at::Tensor random_logits(std::int64_t n, std::int64_t k, std::uint64_t seed, double scale = 2) {
  at::manual_seed(seed);
  return at::randn({n, k}, at::kDouble) * scale;
}

at::Tensor random_labels(std::int64_t n, std::int64_t k, std::uint64_t seed) {
  at::manual_seed(seed);
  return at::randint(k, {n}, at::kLong);
}

ObjectiveOptions objective(Objective kind, double lambda = 0) {
  ObjectiveOptions o;
  o.objective = kind;
  o.lambda = lambda;
  return o;
}

std::vector<double> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

// Central differences of f at x along each of the first `count` coordinates, against autograd.
template <class F>
void expect_gradient_matches(F&& f, const at::Tensor& x0, int count, double tolerance) {
  at::Tensor x = x0.clone().set_requires_grad(true);
  f(x).backward();
  const std::vector<double> grad = to_vector(x.grad());
  const double eps = 1e-6;
  for (int i = 0; i < count; ++i) {
    at::Tensor up = x0.clone(), down = x0.clone();
    up.view({-1})[i] += eps;
    down.view({-1})[i] -= eps;
    const double fd = (f(up).template item<double>() - f(down).template item<double>()) / (2 * eps);
    EXPECT_NEAR(grad[static_cast<std::size_t>(i)], fd, tolerance * (1 + std::fabs(fd))) << "coordinate " << i;
  }
}

TEST(Objectives, KdeXeIsCrossEntropyPlusTheLibraryEstimate) {
  const at::Tensor logits = random_logits(60, 4, 1), labels = random_labels(60, 4, 2);
  const at::Tensor probs = logits.softmax(1).contiguous();
  const std::vector<double> p = to_vector(probs);
  const std::vector<std::int64_t> y(labels.data_ptr<std::int64_t>(), labels.data_ptr<std::int64_t>() + 60);
  const auto view = ecekde::ProbsView::row_major(p.data(), 60, 4);
  const double xe = at::cross_entropy_loss(logits, labels).item<double>();

  ObjectiveOptions o = objective(Objective::kde_xe, 0.5);
  o.bandwidth = 0.1;
  Loss fixed = compute_loss(logits, labels, o);
  ecekde::EstimateOptions e;
  e.estimator = ecekde::Estimator::paper;
  e.bandwidth = 0.1;
  const double ce = ecekde::estimate(view, y, e).ce_pow_p;
  EXPECT_NEAR(fixed.regularizer, ce, 1e-12);
  EXPECT_DOUBLE_EQ(fixed.bandwidth, 0.1);
  EXPECT_NEAR(fixed.total.item<double>(), xe + 0.5 * ce, 1e-12);

  o.bandwidth.reset();
  o.p = 2;
  const Loss loo = compute_loss(logits, labels, o);
  const ecekde::BandwidthSelection h = ecekde::select_bandwidth(view, ecekde::CalibrationType::canonical);
  EXPECT_DOUBLE_EQ(loo.bandwidth, h.bandwidth);
  e.bandwidth = h.bandwidth;
  e.p = 2;
  EXPECT_NEAR(loo.regularizer, ecekde::estimate(view, y, e).ce_pow_p, 1e-12);

  // The gradient reaches the logits through the softmax: central differences agree.
  o.bandwidth = 0.1;
  expect_gradient_matches([&](const at::Tensor& z) { return compute_loss(z, labels, o).total; }, logits, 12, 1e-5);
}

TEST(Objectives, MmceIsTheLibraryValueWithItsGradient) {
  const at::Tensor logits = random_logits(40, 3, 3), labels = random_labels(40, 3, 4);
  const std::vector<double> p = to_vector(logits.softmax(1));
  const std::vector<std::int64_t> y(labels.data_ptr<std::int64_t>(), labels.data_ptr<std::int64_t>() + 40);
  ecekde::MmceOptions m;
  m.weighted = true;
  const double expected = ecekde::mmce(ecekde::ProbsView::row_major(p.data(), 40, 3), y, m).mmce;
  EXPECT_NEAR(mmce_weighted(logits.softmax(1), labels).item<double>(), expected, 1e-14);
  const ObjectiveOptions o = objective(Objective::mmce, 2.0);
  const Loss loss = compute_loss(logits, labels, o);
  EXPECT_NEAR(loss.regularizer, expected, 1e-14);
  EXPECT_NEAR(loss.total.item<double>(), at::cross_entropy_loss(logits, labels).item<double>() + 2 * expected, 1e-12);
  expect_gradient_matches([&](const at::Tensor& z) { return compute_loss(z, labels, o).total; }, logits, 12, 1e-5);
}

TEST(Objectives, FocalLossesFromTheFormula) {
  // Row 0: p_y = 0.1 (< 0.2, FL-53 uses gamma 5); row 1: p_y = 0.7 (gamma 3).
  const at::Tensor probs = at::tensor({0.1, 0.9, 0.7, 0.3}, at::kDouble).reshape({2, 2});
  const at::Tensor logits = probs.log(), labels = at::tensor({0, 0}, at::kLong);
  const double fl53 = -(std::pow(0.9, 5) * std::log(0.1) + std::pow(0.3, 3) * std::log(0.7)) / 2;
  const double fl2 = -(std::pow(0.9, 2) * std::log(0.1) + std::pow(0.3, 2) * std::log(0.7)) / 2;
  EXPECT_NEAR(compute_loss(logits, labels, objective(Objective::focal53)).total.item<double>(), fl53, 1e-14);
  ObjectiveOptions o = objective(Objective::focal);
  o.gamma = 2;
  EXPECT_NEAR(compute_loss(logits, labels, o).total.item<double>(), fl2, 1e-14);
  o.gamma = 0;  // plain cross-entropy
  EXPECT_NEAR(compute_loss(logits, labels, o).total.item<double>(), -(std::log(0.1) + std::log(0.7)) / 2, 1e-14);
}

// Eq. 7 with fully normalised Beta densities written from the paper, each row's ratio by the library's
// ecekde::sharpness_at.
double sharpness_oracle(const std::vector<double>& f, const std::vector<std::int64_t>& y, double h) {
  const std::size_t n = f.size();
  double total = 0;
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> kernel;
    std::vector<std::int64_t> others;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == j) continue;
      const double a = f[i] / h + 1, b = (1 - f[i]) / h + 1;
      kernel.push_back(std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + (a - 1) * std::log(f[j]) +
                                (b - 1) * std::log(1 - f[j])));
      others.push_back(y[i]);
    }
    total += ecekde::sharpness_at(kernel, others);
  }
  return total / static_cast<double>(n);
}

TEST(Objectives, DebiasedSharpnessMatchesEquation7) {
  const at::Tensor z = random_logits(30, 1, 5, 1.5).reshape({-1}), labels = random_labels(30, 2, 6);
  const std::vector<double> f = to_vector(z.sigmoid());
  const std::vector<std::int64_t> y(labels.data_ptr<std::int64_t>(), labels.data_ptr<std::int64_t>() + 30);
  for (double h : {0.05, 0.2, 1.0})
    EXPECT_NEAR(debiased_sharpness(z, labels, h).item<double>(), sharpness_oracle(f, y, h), 1e-12) << "h = " << h;
  expect_gradient_matches([&](const at::Tensor& x) { return debiased_sharpness(x, labels, 0.1); }, z, 10, 1e-5);
  // Saturated predictions stay finite.
  const at::Tensor far = at::tensor({-60.0, -50.0, 45.0, 70.0, 0.0}, at::kDouble);
  const at::Tensor far_labels = at::tensor({0, 0, 1, 1, 1}, at::kLong);
  EXPECT_TRUE(std::isfinite(debiased_sharpness(far, far_labels, 0.01).item<double>()));
  EXPECT_THROW(debiased_sharpness(z.slice(0, 0, 2), labels.slice(0, 0, 2), 0.1), ecekde::Error);
}

TEST(Objectives, MseSharpnessIsMsePlusGammaTimesEquation7) {
  const at::Tensor z = random_logits(25, 1, 7), labels = random_labels(25, 2, 8);
  ObjectiveOptions o = objective(Objective::mse_sharpness);
  o.gamma = 0.4;
  o.bandwidth = 0.1;
  const Loss loss = compute_loss(z, labels, o);
  const double mse = (z.reshape({-1}).sigmoid() - labels.to(at::kDouble)).square().mean().item<double>();
  EXPECT_NEAR(loss.base, mse, 1e-14);
  EXPECT_NEAR(loss.regularizer, debiased_sharpness(z, labels, 0.1).item<double>(), 1e-14);
  EXPECT_NEAR(loss.total.item<double>(), mse + 0.4 * loss.regularizer, 1e-14);
}

// ecekde::estimate's debiased form (estimator paper, p = 2) at a fixed bandwidth, with its excluded rows.
ecekde::Result library_debiased(const at::Tensor& logits, const at::Tensor& labels, double h) {
  const std::vector<double> p = to_vector(logits.softmax(1));
  const auto n = static_cast<std::size_t>(logits.size(0)), k = static_cast<std::size_t>(logits.size(1));
  const std::vector<std::int64_t> y(labels.data_ptr<std::int64_t>(), labels.data_ptr<std::int64_t>() + n);
  ecekde::EstimateOptions e;
  e.estimator = ecekde::Estimator::paper;
  e.form = ecekde::KdeForm::debiased;
  e.p = 2;
  e.bandwidth = h;
  return ecekde::estimate(ecekde::ProbsView::row_major(p.data(), n, k), y, e);
}

TEST(Objectives, DebiasedCanonicalErrorIsTheLibraryDebiasedForm) {
  for (const auto& [n, k, scale] : {std::tuple{50, 3, 1.0}, std::tuple{64, 10, 2.0}, std::tuple{128, 10, 4.0}}) {
    const at::Tensor logits = random_logits(n, k, 11 + n, scale), labels = random_labels(n, k, 12 + n);
    for (double h : {0.01, 0.1, 0.5}) {
      const ecekde::Result expected = library_debiased(logits, labels, h);
      std::int64_t used = -1;
      const double value = debiased_canonical_error(logits, labels, h, &used).item<double>();
      EXPECT_NEAR(value, expected.ce_pow_p, 1e-10 * (1 + std::fabs(expected.ce_pow_p))) << n << " x " << k << ", h = " << h;
      EXPECT_EQ(static_cast<std::size_t>(used), static_cast<std::size_t>(n) - expected.excluded_rows);
    }
  }
  // At a small bandwidth some rows rest on one neighbour and are left out, as by the library.
  const at::Tensor logits = random_logits(40, 4, 21, 3), labels = random_labels(40, 4, 22);
  const ecekde::Result small = library_debiased(logits, labels, 0.002);
  std::int64_t used = -1;
  EXPECT_NEAR(debiased_canonical_error(logits, labels, 0.002, &used).item<double>(), small.ce_pow_p,
              1e-9 * (1 + std::fabs(small.ce_pow_p)));
  EXPECT_EQ(static_cast<std::size_t>(used), 40 - small.excluded_rows);
  // The gradient in the logits: central differences.
  const at::Tensor z = random_logits(30, 4, 23, 1.5), y = random_labels(30, 4, 24);
  expect_gradient_matches([&](const at::Tensor& x) { return debiased_canonical_error(x, y, 0.2); }, z, 16, 1e-5);
  // Saturated rows stay finite.
  at::Tensor far = random_logits(20, 3, 25, 1);
  far.index_put_({0}, at::tensor({80.0, -80.0, 0.0}, at::kDouble));
  far.index_put_({1}, at::tensor({-90.0, 70.0, 60.0}, at::kDouble));
  EXPECT_TRUE(std::isfinite(debiased_canonical_error(far, random_labels(20, 3, 26), 0.05).item<double>()));
  EXPECT_THROW(debiased_canonical_error(z.slice(0, 0, 2), y.slice(0, 0, 2), 0.1), ecekde::Error);
  EXPECT_THROW(debiased_canonical_error(z, y, 0), ecekde::Error);
}

TEST(Objectives, KdeXeDebiasedIsCrossEntropyPlusTheDebiasedForm) {
  const at::Tensor logits = random_logits(60, 5, 31), labels = random_labels(60, 5, 32);
  const double xe = at::cross_entropy_loss(logits, labels).item<double>();
  ObjectiveOptions o = objective(Objective::kde_xe_debiased, 0.3);
  o.p = 2;
  o.bandwidth = 0.1;
  const Loss loss = compute_loss(logits, labels, o);
  const double ce = library_debiased(logits, labels, 0.1).ce_pow_p;
  EXPECT_NEAR(loss.regularizer, ce, 1e-10);
  EXPECT_NEAR(loss.total.item<double>(), xe + 0.3 * ce, 1e-10);
  EXPECT_DOUBLE_EQ(loss.used_share, 1.0);
  // The automatic bandwidth is the operator's LOO-likelihood choice on the batch.
  o.bandwidth.reset();
  const std::vector<double> p = to_vector(logits.softmax(1));
  const double h = ecekde::select_bandwidth(ecekde::ProbsView::row_major(p.data(), 60, 5),
                                            ecekde::CalibrationType::canonical).bandwidth;
  const Loss loo = compute_loss(logits, labels, o);
  EXPECT_DOUBLE_EQ(loo.bandwidth, h);
  EXPECT_NEAR(loo.regularizer, library_debiased(logits, labels, h).ce_pow_p, 1e-9);
  o.p = 1;
  try {
    compute_loss(logits, labels, o);
    FAIL() << "no error";
  } catch (const ecekde::Error& e) {
    EXPECT_STREQ(e.what(), "kde-xe-debiased estimates CE_2^2 and needs p = 2, got p = 1.000000");
  }
}

TEST(Objectives, ShapeErrors) {
  const at::Tensor logits = random_logits(8, 3, 9), labels = random_labels(8, 3, 10);
  try {
    compute_loss(logits, labels, objective(Objective::mse));
    FAIL() << "no error";
  } catch (const ecekde::Error& e) {
    EXPECT_STREQ(e.what(), "a binary objective needs n or n x 1 logits, got 8 x 3");
  }
  try {
    compute_loss(logits, labels.slice(0, 0, 5), objective(Objective::xe));
    FAIL() << "no error";
  } catch (const ecekde::Error& e) {
    EXPECT_STREQ(e.what(), "labels must be a vector of 8 class indices");
  }
}

}  // namespace
