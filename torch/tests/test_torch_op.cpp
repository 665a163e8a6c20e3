// The LibTorch operator against the core library (values and gradients), finite differences through
// the op and through softmax, robustness, layouts, the dispatcher registration and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>

#include "ecekde/error.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/options.hpp"
#include "ecekde/torch.hpp"

namespace {

using ecekde::CalibrationType;
using ecekde::torch::CalibrationErrorOptions;

const CalibrationType kTypes[] = {CalibrationType::canonical, CalibrationType::marginal,
                                  CalibrationType::top_label, CalibrationType::binary};

struct Batch {
  at::Tensor logits, probs, labels;
};

// n softmax predictions over k classes (k = 1: sigmoid, one column) with labels drawn independently.
Batch make_batch(std::int64_t n, std::int64_t k, std::uint64_t seed, at::ScalarType dtype = at::kDouble) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  Batch b;
  b.logits = at::randn({n, k}, gen, at::TensorOptions().dtype(dtype)).mul_(2);
  b.probs = k == 1 ? b.logits.sigmoid() : b.logits.softmax(1);
  b.labels = at::randint(k == 1 ? 2 : k, {n}, gen, at::TensorOptions().dtype(at::kLong));
  return b;
}

// The batch's class count for `type` (binary uses two columns unless one is asked for).
std::int64_t classes_for(CalibrationType type) { return type == CalibrationType::binary ? 2 : 4; }

CalibrationErrorOptions options(CalibrationType type, double p, std::optional<double> h, bool root = false) {
  CalibrationErrorOptions o;
  o.estimate.type = type;
  o.estimate.p = p;
  o.estimate.bandwidth = h;
  o.root = root;
  return o;
}

CalibrationErrorOptions with_threads(int threads) {
  CalibrationErrorOptions o = options(CalibrationType::canonical, 1, 0.1);
  o.estimate.execution.threads = threads;
  return o;
}

ecekde::EstimateOptions core_options(const CalibrationErrorOptions& o) {
  ecekde::EstimateOptions e = o.estimate;
  e.estimator = ecekde::Estimator::paper;
  return e;
}

// The core library on the same (contiguous) data.
template <class T>
ecekde::GradientResult core(const at::Tensor& probs, const at::Tensor& labels, const CalibrationErrorOptions& o) {
  const at::Tensor p = probs.detach().contiguous();
  const at::Tensor y = labels.contiguous();
  const auto n = static_cast<std::size_t>(p.size(0)), k = static_cast<std::size_t>(p.dim() == 2 ? p.size(1) : 1);
  return ecekde::estimate_with_gradient(ecekde::ProbsView::row_major(p.data_ptr<T>(), n, k),
                                        ecekde::LabelsView(y.data_ptr<std::int64_t>(), n), core_options(o));
}

// The op's value and d value / d x for a leaf x that requires grad.
struct ValueGrad {
  at::Tensor value, grad;
};

ValueGrad value_and_grad(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& f) {
  const at::Tensor leaf = x.detach().requires_grad_();
  const at::Tensor v = f(leaf);
  return {v.detach(), torch::autograd::grad({v}, {leaf})[0]};
}

at::Tensor as_tensor(const std::vector<double>& v, at::IntArrayRef sizes) {
  return at::tensor(v, at::TensorOptions().dtype(at::kDouble)).reshape(sizes);
}

// Central differences of f at x, entry by entry.
at::Tensor finite_differences(const at::Tensor& x, const std::function<at::Tensor(const at::Tensor&)>& f,
                              double step) {
  at::Tensor fd = at::zeros_like(x);
  at::Tensor xf = x.detach().clone().reshape({-1}), out = fd.view({-1});
  for (std::int64_t i = 0; i < xf.numel(); ++i) {
    const double x0 = xf[i].item<double>();
    xf[i] = x0 + step;
    const double up = f(xf.view(x.sizes())).item<double>();
    xf[i] = x0 - step;
    const double down = f(xf.view(x.sizes())).item<double>();
    xf[i] = x0;
    out[i] = (up - down) / (2 * step);
  }
  return fd;
}

// max |a - b| <= tolerance * max(1, max |b|)
void expect_close(const at::Tensor& a, const at::Tensor& b, double tolerance, const std::string& what) {
  const double scale = std::max(1.0, b.abs().max().item<double>());
  const double err = (a - b).abs().max().item<double>();
  EXPECT_LE(err, tolerance * scale) << what << ": max |difference| " << err << ", scale " << scale;
}

std::string describe(CalibrationType type, double p, const CalibrationErrorOptions& o) {
  return std::string(ecekde::to_string(type)) + " p=" + std::to_string(p) +
         (o.estimate.bandwidth ? " h=" + std::to_string(*o.estimate.bandwidth) : " h=auto") + (o.root ? " root" : "");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.msg();
  }
  return "(no error)";
}

TEST(TorchOp, ValuesAndGradientsEqualTheCoreInDouble) {
  for (CalibrationType type : kTypes)
    for (double p : {1.0, 1.5, 2.0, 3.0})
      for (std::optional<double> h : {std::optional<double>(0.05), std::optional<double>()})
        for (bool root : {false, true}) {
          const Batch b = make_batch(40, classes_for(type), 7);
          const CalibrationErrorOptions o = options(type, p, h, root);
          const std::string what = describe(type, p, o);
          const ecekde::GradientResult ref = core<double>(b.probs, b.labels, o);
          const double expected = root ? ref.result.ce : ref.result.ce_pow_p;
          const ValueGrad vg = value_and_grad(b.probs, [&](const at::Tensor& x) {
            return ecekde::torch::calibration_error(x, b.labels, o);
          });
          EXPECT_EQ(vg.value.dim(), 0) << what;
          EXPECT_EQ(vg.value.scalar_type(), at::kDouble) << what;
          EXPECT_EQ(vg.value.item<double>(), expected) << what;
          EXPECT_TRUE(at::equal(vg.grad, as_tensor(root ? ref.grad_ce : ref.grad_ce_pow_p, b.probs.sizes()))) << what;
          // the forward-only path (no input requires grad) gives the same number
          EXPECT_EQ(ecekde::torch::calibration_error(b.probs, b.labels, o).item<double>(), expected) << what;
        }
}

TEST(TorchOp, Float32ValuesAreTheCoreValuesRounded) {
  for (CalibrationType type : kTypes)
    for (double p : {1.0, 2.0}) {
      const Batch b = make_batch(50, classes_for(type), 11, at::kFloat);
      const CalibrationErrorOptions o = options(type, p, 0.1);
      const ecekde::GradientResult ref = core<float>(b.probs, b.labels, o);
      const ValueGrad vg = value_and_grad(b.probs, [&](const at::Tensor& x) {
        return ecekde::torch::calibration_error(x, b.labels, o);
      });
      EXPECT_EQ(vg.value.scalar_type(), at::kFloat);
      EXPECT_EQ(vg.value.item<float>(), static_cast<float>(ref.result.ce_pow_p)) << describe(type, p, o);
      EXPECT_EQ(vg.grad.scalar_type(), at::kFloat);
      EXPECT_TRUE(at::equal(vg.grad, as_tensor(ref.grad_ce_pow_p, b.probs.sizes()).to(at::kFloat)));
    }
}

TEST(TorchOp, OneColumnBinaryInputAsMatrixOrVector) {
  const Batch b = make_batch(30, 1, 5);
  const CalibrationErrorOptions o = options(CalibrationType::binary, 2, 0.1);
  const ecekde::GradientResult ref = core<double>(b.probs, b.labels, o);
  for (const at::Tensor& probs : {b.probs, b.probs.reshape({30})}) {
    const ValueGrad vg = value_and_grad(probs, [&](const at::Tensor& x) {
      return ecekde::torch::calibration_error(x, b.labels, o);
    });
    EXPECT_EQ(vg.value.item<double>(), ref.result.ce_pow_p);
    EXPECT_EQ(vg.grad.sizes(), probs.sizes());
    EXPECT_TRUE(at::equal(vg.grad, as_tensor(ref.grad_ce_pow_p, probs.sizes())));
  }
}

// gradcheck in C++: every entry of probs is a free variable (steps of 1e-7 keep rows within the core's
// 1e-6 row-sum tolerance).
TEST(TorchOp, BackwardMatchesFiniteDifferencesOnProbabilities) {
  for (CalibrationType type : kTypes)
    for (double p : {1.0, 2.0, 3.0})
      for (double h : {0.05, 0.3})
        for (bool root : {false, true}) {
          const Batch b = make_batch(12, type == CalibrationType::binary ? 1 : 3, 3);
          const CalibrationErrorOptions o = options(type, p, h, root);
          auto f = [&](const at::Tensor& x) { return ecekde::torch::calibration_error(x, b.labels, o); };
          const ValueGrad vg = value_and_grad(b.probs, f);
          expect_close(vg.grad, finite_differences(b.probs, f, 1e-7), 1e-6, describe(type, p, o));
        }
}

TEST(TorchOp, BackwardThroughSoftmaxMatchesFiniteDifferencesOnLogits) {
  for (CalibrationType type : kTypes)
    for (double p : {1.0, 2.0})
      for (std::optional<double> h : {std::optional<double>(0.1), std::optional<double>()}) {
        const Batch b = make_batch(16, classes_for(type), 13);
        const CalibrationErrorOptions o = options(type, p, h);
        // the automatic bandwidth is a constant of the backward: fix it at the batch's choice for the FD
        CalibrationErrorOptions fixed = o;
        fixed.estimate.bandwidth = ecekde::torch::select_bandwidth(b.probs, o);
        auto through_softmax = [&](const CalibrationErrorOptions& opt) {
          return [&b, opt](const at::Tensor& z) { return ecekde::torch::calibration_error(z.softmax(1), b.labels, opt); };
        };
        const ValueGrad vg = value_and_grad(b.logits, through_softmax(o));
        expect_close(vg.grad, finite_differences(b.logits, through_softmax(fixed), 1e-6), 1e-6, describe(type, p, o));
      }
}

TEST(TorchOp, MissingClassesSingletonsAndOneHotRowsGiveFiniteGradients) {
  // 4 classes: class 3 absent, class 2 once, two rows one-hot (log 0 inside the kernel)
  Batch b = make_batch(10, 4, 17);
  b.labels = at::tensor(std::vector<std::int64_t>{0, 1, 0, 1, 2, 0, 1, 1, 0, 0});
  b.logits.index_put_({0}, at::tensor(std::vector<double>{-1e3, 0, -1e3, -1e3}));
  b.logits.index_put_({5}, at::tensor(std::vector<double>{0, -1e3, -1e3, -1e3}));
  b.probs = b.logits.softmax(1);
  for (CalibrationType type : kTypes)
    for (double p : {1.0, 2.0})
      for (double h : {1e-6, 1e-2, 1.0}) {
        at::Tensor logits = b.logits, probs = b.probs;
        if (type == CalibrationType::binary) {  // two columns, labels {0, 1}
          logits = b.logits.narrow(1, 0, 2).contiguous();
          probs = logits.softmax(1);
        }
        const at::Tensor labels = type == CalibrationType::binary ? b.labels.clamp_max(1) : b.labels;
        const CalibrationErrorOptions o = options(type, p, h);
        const ValueGrad on_probs = value_and_grad(probs, [&](const at::Tensor& x) {
          return ecekde::torch::calibration_error(x, labels, o);
        });
        const ValueGrad on_logits = value_and_grad(logits, [&](const at::Tensor& z) {
          return ecekde::torch::calibration_error(z.softmax(1), labels, o);
        });
        const std::string what = describe(type, p, o);
        EXPECT_TRUE(std::isfinite(on_probs.value.item<double>())) << what;
        EXPECT_TRUE(on_probs.grad.isfinite().all().item<bool>()) << what;
        EXPECT_TRUE(on_logits.grad.isfinite().all().item<bool>()) << what;
      }
}

// float32 softmax rows over many classes miss 1 by more than 1e-6; the core's float32 tolerance,
// max(1e-6, K 2^-24), accepts them.
TEST(TorchOp, ManyClassesInFloat32) {
  const Batch b = make_batch(16, 10000, 53, at::kFloat);
  auto probs_of = [](const at::Tensor& z) { return z.mul(2.5).softmax(1); };
  const double worst = probs_of(b.logits).to(at::kDouble).sum(1).sub(1).abs().max().item<double>();
  ASSERT_GT(worst, 1e-6);  // the case in point
  const ValueGrad vg = value_and_grad(b.logits, [&](const at::Tensor& z) {
    return ecekde::torch::calibration_error(probs_of(z), b.labels, options(CalibrationType::top_label, 1, 0.05));
  });
  EXPECT_EQ(vg.grad.scalar_type(), at::kFloat);
  EXPECT_TRUE(vg.grad.isfinite().all().item<bool>());
  EXPECT_GT(vg.grad.abs().max().item<float>(), 0);
}

TEST(TorchOp, AnyStridesAndInt32LabelsGiveTheContiguousResult) {
  const Batch b = make_batch(25, 4, 19);
  const CalibrationErrorOptions o = options(CalibrationType::marginal, 2, 0.1);
  const ValueGrad ref = value_and_grad(b.probs, [&](const at::Tensor& x) {
    return ecekde::torch::calibration_error(x, b.labels, o);
  });
  const at::Tensor column_major = b.probs.t().contiguous().t();
  const at::Tensor wide = at::zeros({25, 9}, b.probs.options());
  wide.narrow(1, 2, 4).copy_(b.probs);
  const at::Tensor strided_labels = b.labels.repeat_interleave(3).slice(0, 0, 75, 3);
  ASSERT_TRUE(at::equal(strided_labels, b.labels));
  for (const at::Tensor& probs : {column_major, wide.narrow(1, 2, 4)})
    for (const at::Tensor& labels : {b.labels.to(at::kInt), strided_labels}) {
      const at::Tensor leaf = probs.detach().requires_grad_();
      const at::Tensor v = ecekde::torch::calibration_error(leaf, labels, o);
      const at::Tensor g = torch::autograd::grad({v}, {leaf})[0];
      EXPECT_EQ(v.item<double>(), ref.value.item<double>());
      EXPECT_TRUE(at::equal(g, ref.grad));
    }
}

TEST(TorchOp, BackwardScalesTheIncomingGradient) {
  const Batch b = make_batch(20, 3, 23);
  const CalibrationErrorOptions o = options(CalibrationType::canonical, 2, 0.2);
  auto f = [&](const at::Tensor& x) { return ecekde::torch::calibration_error(x, b.labels, o); };
  const ValueGrad once = value_and_grad(b.probs, f);
  const ValueGrad scaled = value_and_grad(b.probs, [&](const at::Tensor& x) { return f(x).mul(-3); });
  EXPECT_TRUE(at::allclose(scaled.grad, once.grad.mul(-3), 0, 0));
}

TEST(TorchOp, NoGraphWithoutGradMode) {
  const Batch b = make_batch(20, 3, 29);
  const CalibrationErrorOptions o = options(CalibrationType::canonical, 1, 0.2);
  const at::Tensor leaf = b.probs.detach().requires_grad_();
  EXPECT_TRUE(ecekde::torch::calibration_error(leaf, b.labels, o).requires_grad());
  EXPECT_FALSE(ecekde::torch::calibration_error(b.probs, b.labels, o).requires_grad());
  at::NoGradGuard no_grad;
  EXPECT_FALSE(ecekde::torch::calibration_error(leaf, b.labels, o).requires_grad());
}

TEST(TorchOp, SecondDerivativesRaise) {
  const Batch b = make_batch(20, 3, 31);
  const CalibrationErrorOptions o = options(CalibrationType::canonical, 1, 0.2);
  // through softmax (autograd.grad skips nodes that do not lead to the inputs asked for) and on probs
  for (const at::Tensor& x : {b.logits, b.probs}) {
    const at::Tensor leaf = x.detach().requires_grad_();
    const at::Tensor probs = x.is_same(b.logits) ? leaf.softmax(1) : leaf;
    const at::Tensor v = ecekde::torch::calibration_error(probs, b.labels, o);
    const at::Tensor g = torch::autograd::grad({v}, {leaf}, {}, true, true)[0];
    ASSERT_TRUE(g.requires_grad());
    EXPECT_EQ(error_of([&] { torch::autograd::grad({g.square().sum()}, {leaf}); }),
              "ecekde calibration_error: second derivatives are not implemented");
  }
}

TEST(TorchOp, AutomaticBandwidthIsSelectBandwidthAndTheCoresChoice) {
  for (CalibrationType type : kTypes) {
    const Batch b = make_batch(60, classes_for(type), 37);
    const CalibrationErrorOptions o = options(type, 1, {});
    const double h = ecekde::torch::select_bandwidth(b.probs, o);
    EXPECT_EQ(h, core<double>(b.probs, b.labels, o).result.bandwidth);
    CalibrationErrorOptions fixed = o;
    fixed.estimate.bandwidth = h;
    EXPECT_EQ(ecekde::torch::select_bandwidth(b.probs, fixed), h);
    EXPECT_EQ(ecekde::torch::calibration_error(b.probs, b.labels, o).item<double>(),
              ecekde::torch::calibration_error(b.probs, b.labels, fixed).item<double>());
  }
}

TEST(TorchOp, ThreadCountDoesNotChangeTheResult) {
  const Batch b = make_batch(300, 10, 41);
  CalibrationErrorOptions one = options(CalibrationType::canonical, 2, 0.05);
  one.estimate.execution.threads = 1;
  CalibrationErrorOptions two = one;
  two.estimate.execution.threads = 2;
  auto run = [&](const CalibrationErrorOptions& o) {
    return value_and_grad(b.probs, [&](const at::Tensor& x) { return ecekde::torch::calibration_error(x, b.labels, o); });
  };
  const ValueGrad a = run(one), c = run(two);
  EXPECT_EQ(a.value.item<double>(), c.value.item<double>());
  EXPECT_TRUE(at::equal(a.grad, c.grad));
}

using DispatchedOp = at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, double,
                                c10::optional<double>, bool, int64_t, c10::string_view);

TEST(TorchOp, DispatcherRegistrationMatchesTheCppApi) {
  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("ecekde::calibration_error", "").typed<DispatchedOp>();
  const Batch b = make_batch(30, 4, 43);
  const CalibrationErrorOptions o = options(CalibrationType::top_label, 2, 0.1, true);
  const ValueGrad direct = value_and_grad(b.probs, [&](const at::Tensor& x) {
    return ecekde::torch::calibration_error(x, b.labels, o);
  });
  const ValueGrad dispatched = value_and_grad(b.probs, [&](const at::Tensor& x) {
    return op.call(x, b.labels, "top-label", 2.0, 0.1, true, 0, "loo-likelihood");
  });
  EXPECT_EQ(dispatched.value.item<double>(), direct.value.item<double>());
  EXPECT_TRUE(at::equal(dispatched.grad, direct.grad));

  const auto select = c10::Dispatcher::singleton()
                          .findSchemaOrThrow("ecekde::select_bandwidth", "")
                          .typed<double(const at::Tensor&, c10::string_view, int64_t, c10::string_view)>();
  CalibrationErrorOptions reference = options(CalibrationType::marginal, 1, {});
  reference.estimate.bandwidth_selection.criterion = ecekde::BandwidthCriterion::reference;
  EXPECT_EQ(select.call(b.probs, "marginal", 1, "reference"), ecekde::torch::select_bandwidth(b.probs, reference));
}

TEST(TorchOp, BadInputRaisesWithTheCoresMessage) {
  const Batch b = make_batch(6, 3, 47);
  const at::Tensor y = b.labels;
  auto ce = [&](const at::Tensor& probs, const at::Tensor& labels, CalibrationErrorOptions o = options(CalibrationType::canonical, 1, 0.1)) {
    return [=] {
      ecekde::torch::calibration_error(probs, labels, o);
      ecekde::torch::calibration_error(probs.detach().requires_grad_(), labels, o);  // both paths
    };
  };
  at::Tensor off = b.probs.clone();
  off[2][1] = off[2][1].item<double>() + 0.25;
  {  // the core's own message, word for word
    const at::Tensor c = off.contiguous();
    std::string core_message;
    try {
      ecekde::estimate(ecekde::ProbsView::row_major(c.data_ptr<double>(), 6, 3), ecekde::LabelsView(y.data_ptr<std::int64_t>(), 6));
    } catch (const ecekde::Error& e) {
      core_message = e.what();
    }
    EXPECT_EQ(error_of(ce(off, y)), core_message);
    EXPECT_EQ(core_message.rfind("probs row 2 sums to 1.2", 0), 0u) << core_message;
  }
  at::Tensor nan = b.probs.clone();
  nan[1][0] = std::nan("");
  EXPECT_EQ(error_of(ce(nan, y)), "probs row 1, column 0: value nan is not finite");
  EXPECT_EQ(error_of(ce(b.probs, y.narrow(0, 0, 5))), "labels has 5 entries but probs has 6 rows");
  EXPECT_EQ(error_of(ce(b.probs, y.add(3))), "labels row 0: value " + std::to_string(y[0].item<std::int64_t>() + 3) +
                                                 " is outside [0, 3)");
  EXPECT_EQ(error_of(ce(b.probs.narrow(0, 0, 1), y.narrow(0, 0, 1))), "need at least 2 samples, got 1");
  EXPECT_EQ(error_of(ce(b.probs, y, options(CalibrationType::canonical, 0.5, 0.1))), "p must be a finite number >= 1, got 0.5");
  EXPECT_EQ(error_of(ce(b.probs, y, options(CalibrationType::canonical, 1, 0.0))), "bandwidth must be a finite number > 0, got 0");
  EXPECT_EQ(error_of(ce(b.probs, y, with_threads(-1))), "threads must be >= 0 (0 = all cores), got -1");
  EXPECT_EQ(error_of(ce(b.probs.narrow(1, 0, 1), y.clamp_max(1), options(CalibrationType::marginal, 1, 0.1))),
            "type marginal needs at least 2 classes, probs has 1 column");
  EXPECT_EQ(error_of(ce(b.probs.to(at::kHalf), y)), "probs must be a float32 or float64 tensor, got Half");
  EXPECT_EQ(error_of(ce(b.probs.unsqueeze(0), y)),
            "probs must be an n x K matrix (or a vector of n values P(y = 1)), got 3 dimensions");
  EXPECT_EQ(error_of(ce(b.probs, y.to(at::kFloat))), "labels must be an int64 or int32 tensor, got Float");
  EXPECT_EQ(error_of(ce(b.probs, y.unsqueeze(1))), "labels must be a 1-D tensor of class indices, got 2 dimensions");
  EXPECT_EQ(error_of([&] { ecekde::torch::select_bandwidth(b.probs, options(CalibrationType::canonical, 1, -1.0)); }),
            "bandwidth must be a finite number > 0, got -1");

  const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("ecekde::calibration_error", "").typed<DispatchedOp>();
  EXPECT_EQ(error_of([&] { op.call(b.probs, y, "foo", 1.0, 0.1, false, 0, "loo-likelihood"); }),
            "unknown calibration type 'foo' (expected canonical, marginal, top-label or binary)");
  EXPECT_EQ(error_of([&] { op.call(b.probs, y, "canonical", 1.0, {}, false, 0, "bar"); }),
            "unknown bandwidth criterion 'bar' (expected loo-likelihood, reference or loo-regression)");
}

// A cancelled RunControl in the options stops the operator (forward with and without a graph, and the
// bandwidth choice) with c10::Error "interrupted", before the start or while it runs; nothing is left
// behind, and the next call computes as usual.
TEST(TorchOp, CancellationRaisesCleanly) {
  const Batch small = make_batch(40, 3, 5);
  ecekde::RunControl cancelled;
  cancelled.cancel();
  CalibrationErrorOptions o = options(CalibrationType::canonical, 1, std::nullopt);
  o.estimate.execution.control = &cancelled;
  EXPECT_EQ(error_of([&] { ecekde::torch::calibration_error(small.probs, small.labels, o); }), "interrupted");
  const at::Tensor leaf = small.probs.detach().requires_grad_();
  EXPECT_EQ(error_of([&] { ecekde::torch::calibration_error(leaf, small.labels, o); }), "interrupted");
  EXPECT_FALSE(leaf.grad().defined());
  EXPECT_EQ(error_of([&] { ecekde::torch::select_bandwidth(small.probs, o); }), "interrupted");

  const Batch big = make_batch(6000, 4, 6);
  ecekde::RunControl control;
  o.estimate.execution.control = &control;
  std::thread canceller([&] {
    while (control.progress().done == 0) std::this_thread::yield();
    control.cancel();
  });
  const at::Tensor big_leaf = big.probs.detach().requires_grad_();
  EXPECT_EQ(error_of([&] { ecekde::torch::calibration_error(big_leaf, big.labels, o); }), "interrupted");
  canceller.join();

  const CalibrationErrorOptions plain = options(CalibrationType::canonical, 1, 0.1);
  const at::Tensor again = small.probs.detach().requires_grad_();
  ecekde::torch::calibration_error(again, small.labels, plain).backward();
  EXPECT_TRUE(again.grad().defined());
}

}  // namespace

// The registered schemas' option arguments are the library's options: same names, and defaults equal to
// the option table's (which reads them from EstimateOptions{}).
TEST(TorchOp, SchemaOptionsComeFromTheOptionTable) {
  for (const char* name : {"ecekde::calibration_error", "ecekde::select_bandwidth"}) {
    const c10::FunctionSchema& schema = c10::Dispatcher::singleton().findSchemaOrThrow(name, "").schema();
    std::size_t options_seen = 0;
    for (const c10::Argument& a : schema.arguments()) {
      if (a.name() == "probs" || a.name() == "labels" || a.name() == "root") continue;
      const auto* o = ecekde::options::find(ecekde::options::estimate_options(), a.name());
      ASSERT_NE(o, nullptr) << a.name();
      ASSERT_TRUE(a.default_value().has_value()) << a.name();
      const c10::IValue d = *a.default_value();
      const ecekde::options::Value expected = o->default_value();
      if (d.isNone()) EXPECT_TRUE(std::holds_alternative<std::monostate>(expected)) << a.name();
      else if (d.isString()) EXPECT_EQ(d.toStringRef(), std::get<std::string>(expected)) << a.name();
      else if (d.isDouble()) EXPECT_EQ(d.toDouble(), std::get<double>(expected)) << a.name();
      else if (d.isInt()) EXPECT_EQ(d.toInt(), std::get<std::int64_t>(expected)) << a.name();
      else ADD_FAILURE() << "unexpected default of " << a.name();
      ++options_seen;
    }
    EXPECT_GE(options_seen, 3u) << name;
  }
  EXPECT_EQ(ecekde::torch::operator_schema("select_bandwidth"),
            "select_bandwidth(Tensor probs, str type=\"canonical\", int threads=0, str criterion=\"loo-likelihood\") -> float");
}
