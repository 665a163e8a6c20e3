#include "ecekde/train/objectives.hpp"

#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "ecekde/error.hpp"
#include "ecekde/mmce.hpp"
#include "ecekde/torch.hpp"

namespace ecekde::train {

namespace {

using ::torch::autograd::AutogradContext;
using ::torch::autograd::variable_list;

// MMCE_w with the library's analytic gradient (with respect to every entry of probs).
class MmceFunction : public ::torch::autograd::Function<MmceFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& probs, const at::Tensor& labels, double width) {
    const at::Tensor p = probs.detach().to(at::kDouble).contiguous();
    const at::Tensor y = labels.to(at::kLong).contiguous();
    const auto n = static_cast<std::size_t>(p.size(0)), k = static_cast<std::size_t>(p.size(1));
    MmceOptions options;
    options.weighted = true;
    options.kernel_width = width;
    MmceResult r = mmce(ProbsView::row_major(p.data_ptr<double>(), n, k), LabelsView(y.data_ptr<std::int64_t>(), n),
                        options);
    at::Tensor gradient = at::from_blob(r.gradient.data(), {p.size(0), p.size(1)}, at::kDouble).clone();
    ctx->save_for_backward({gradient.to(probs.scalar_type())});
    return at::scalar_tensor(r.mmce, probs.options());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_output) {
    return {ctx->get_saved_variables()[0] * grad_output[0], at::Tensor(), at::Tensor()};
  }
};

std::string shape(const at::Tensor& t) {
  std::string s;
  for (std::int64_t d = 0; d < t.dim(); ++d) s += (d ? " x " : "") + std::to_string(t.size(d));
  return t.dim() == 0 ? "a scalar" : s;
}

void check_batch(const at::Tensor& logits, const at::Tensor& labels, bool binary) {
  if (binary ? !(logits.dim() == 1 || (logits.dim() == 2 && logits.size(1) == 1))
             : logits.dim() != 2 || logits.size(1) < 2)
    fail(std::string(binary ? "a binary objective needs n or n x 1 logits" : "a multiclass objective needs n x K logits, K >= 2") +
         ", got " + shape(logits));
  if (labels.dim() != 1 || labels.size(0) != logits.size(0))
    fail("labels must be a vector of " + std::to_string(logits.size(0)) + " class indices");
}

}  // namespace

at::Tensor mmce_weighted(const at::Tensor& probs, const at::Tensor& labels, double width) {
  return MmceFunction::apply(probs, labels, width);
}

at::Tensor debiased_sharpness(const at::Tensor& logits, const at::Tensor& labels, double h) {
  if (!(h > 0 && std::isfinite(h))) fail("bandwidth must be a finite number > 0, got " + std::to_string(h));
  const at::Tensor z = logits.reshape({-1}).to(at::kDouble);
  if (z.size(0) < 3) fail("the debiased sharpness needs at least 3 samples, got " + std::to_string(z.size(0)));
  const at::Tensor y = labels.to(at::kDouble);
  const at::Tensor f = z.sigmoid();
  const at::Tensor log_f = at::log_sigmoid(z), log_1mf = at::log_sigmoid(-z);
  // log Beta(f_j; f_i / h + 1, (1 - f_i) / h + 1) up to lgamma(1/h + 2), a constant that cancels in the
  // ratio (both sides are of degree 2 in the kernel values of row j). Rows j, centres i.
  const at::Tensor a = -at::lgamma(f / h + 1) - at::lgamma((1 - f) / h + 1);
  at::Tensor scores = a.unsqueeze(0) + (log_f.unsqueeze(1) * f.unsqueeze(0) + log_1mf.unsqueeze(1) * (1 - f).unsqueeze(0)) / h;
  scores = scores.masked_fill(at::eye(z.size(0), scores.options().dtype(at::kBool)), -INFINITY);
  // A per-row factor also cancels: shift by the (detached) row maximum so that the largest weight is 1.
  const at::Tensor w = (scores - std::get<0>(scores.detach().max(1, true))).exp();
  const at::Tensor w2 = w * w;
  const at::Tensor s1 = w.sum(1), t1 = (w * y).sum(1);
  const at::Tensor numerator = t1 * t1 - (w2 * y).sum(1);
  const at::Tensor denominator = s1 * s1 - w2.sum(1);
  return (numerator / denominator.clamp_min(1e-300)).mean();
}

at::Tensor debiased_canonical_error(const at::Tensor& logits, const at::Tensor& labels, double h,
                                    std::int64_t* used_rows) {
  if (!(h > 0 && std::isfinite(h))) fail("bandwidth must be a finite number > 0, got " + std::to_string(h));
  if (logits.dim() != 2 || logits.size(1) < 2) fail("the debiased canonical error needs n x K logits, K >= 2, got " + shape(logits));
  const std::int64_t n = logits.size(0), k = logits.size(1);
  if (n < 3) fail("the debiased canonical error needs at least 3 samples, got " + std::to_string(n));
  if (labels.dim() != 1 || labels.size(0) != n)
    fail("labels must be a vector of " + std::to_string(n) + " class indices");
  const at::Tensor z = logits.to(at::kDouble);
  const at::Tensor log_f = z.log_softmax(1), f = log_f.exp();
  const at::Tensor y = at::one_hot(labels.to(at::kLong), k).to(at::kDouble);
  // log Dir(f_j; f_i / h + 1) up to lgamma(1/h + K), a constant that cancels in the ratio (both sides are
  // of degree 2 in row j's weights). Rows j, centres i.
  const at::Tensor a = -at::lgamma(f / h + 1).sum(1);                    // per centre i
  at::Tensor scores = a.unsqueeze(0) + at::matmul(log_f, f.t()) / h;  // [j, i]: sum_c f_ic log f_jc / h
  scores = scores.masked_fill(at::eye(n, scores.options().dtype(at::kBool)), -INFINITY);
  // A per-row factor cancels too: shift by the (detached) row maximum so that the largest weight is 1.
  const at::Tensor w = (scores - std::get<0>(scores.detach().max(1, true))).exp();
  const at::Tensor w2 = w * w;
  const at::Tensor D = w.sum(1, true), S = w2.sum(1, true);  // n x 1
  const at::Tensor N = at::matmul(w, y), Q = at::matmul(w2, y);  // n x K
  const at::Tensor numerator = ((N - f * D).square() - Q * (1 - 2 * f) - f.square() * S).sum(1);
  const at::Tensor pairs = (D.square() - S).squeeze(1);
  const at::Tensor used = (pairs.detach() > 1e-6 * D.detach().square().squeeze(1));
  const std::int64_t count = used.sum().item<std::int64_t>();
  if (used_rows) *used_rows = count;
  if (count == 0) return (z * 0).sum();
  const at::Tensor terms = at::where(used, numerator / at::where(used, pairs, at::ones_like(pairs)), at::zeros_like(pairs));
  return terms.sum() / static_cast<double>(count);
}

Loss compute_loss(const at::Tensor& logits, const at::Tensor& labels, const ObjectiveOptions& o, int threads) {
  check_batch(logits, labels, is_binary(o.objective));
  Loss loss;
  at::Tensor regularizer;
  switch (o.objective) {
    case Objective::xe:
    case Objective::kde_xe:
    case Objective::kde_xe_debiased:
    case Objective::mmce: {
      loss.total = at::cross_entropy_loss(logits, labels);
      if (o.objective == Objective::kde_xe) {
        ecekde::torch::CalibrationErrorOptions kde;
        kde.estimate.p = o.p;
        kde.estimate.execution.threads = threads;
        const at::Tensor probs = logits.to(at::kDouble).softmax(1);
        kde.estimate.bandwidth = loss.bandwidth =
            o.bandwidth ? *o.bandwidth : ecekde::torch::select_bandwidth(probs, kde);
        regularizer = ecekde::torch::calibration_error(probs, labels, kde);
      } else if (o.objective == Objective::kde_xe_debiased) {
        if (o.p != 2) fail("kde-xe-debiased estimates CE_2^2 and needs p = 2, got p = " + std::to_string(o.p));
        ecekde::torch::CalibrationErrorOptions kde;
        kde.estimate.p = 2;
        kde.estimate.execution.threads = threads;
        loss.bandwidth = o.bandwidth ? *o.bandwidth
                                     : ecekde::torch::select_bandwidth(logits.detach().to(at::kDouble).softmax(1), kde);
        std::int64_t used = 0;
        regularizer = debiased_canonical_error(logits, labels, loss.bandwidth, &used);
        loss.used_share = static_cast<double>(used) / static_cast<double>(logits.size(0));
      } else if (o.objective == Objective::mmce) {
        regularizer = mmce_weighted(logits.to(at::kDouble).softmax(1), labels, o.mmce_width);
      }
      break;
    }
    case Objective::focal:
    case Objective::focal53: {
      const at::Tensor log_py = logits.log_softmax(1).gather(1, labels.unsqueeze(1)).squeeze(1);
      const at::Tensor py = log_py.exp();
      const at::Tensor gamma = o.objective == Objective::focal53
                                   ? at::where(py.detach() < 0.2, at::full_like(py, 5.0), at::full_like(py, 3.0))
                                   : at::full_like(py, o.gamma);
      loss.total = -((1 - py).pow(gamma) * log_py).mean();
      break;
    }
    case Objective::mse:
    case Objective::mse_sharpness: {
      const at::Tensor z = logits.reshape({-1});
      loss.total = (z.sigmoid() - labels.to(z.scalar_type())).square().mean();
      if (o.objective == Objective::mse_sharpness) {
        ecekde::torch::CalibrationErrorOptions kde;
        kde.estimate.type = CalibrationType::binary;
        kde.estimate.execution.threads = threads;
        loss.bandwidth = o.bandwidth ? *o.bandwidth
                                     : ecekde::torch::select_bandwidth(z.detach().to(at::kDouble).sigmoid(), kde);
        regularizer = debiased_sharpness(z, labels, loss.bandwidth);
      }
      break;
    }
  }
  loss.base = loss.total.item<double>();
  if (regularizer.defined()) {
    loss.regularizer = regularizer.item<double>();
    const double weight = o.objective == Objective::mse_sharpness ? o.gamma : o.lambda;
    loss.total = loss.total + weight * regularizer.to(loss.total.scalar_type());
  }
  return loss;
}

}  // namespace ecekde::train
