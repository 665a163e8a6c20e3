// The ECE^KDE autograd operator: tensors in, the core's estimate and analytic gradient out. The only
// translation unit that includes LibTorch's heavy headers (they compile slowly).
#include "ecekde/torch.hpp"

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/Functions.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "ecekde/error.hpp"
#include "ecekde/gradient.hpp"
#include "ecekde/options.hpp"

namespace ecekde::torch {

namespace {

using ::torch::autograd::AutogradContext;
using ::torch::autograd::variable_list;

// Runs a core call, turning ecekde::Error into c10::Error (Python: RuntimeError) with the same text.
template <class Call>
auto translate_errors(Call&& call) {
  try {
    return call();
  } catch (const ecekde::Error& e) {
    C10_THROW_ERROR(Error, e.what());
  }
}

ProbsView probs_view(const at::Tensor& probs) {
  TORCH_CHECK(probs.defined(), "probs is an undefined tensor");
  TORCH_CHECK(probs.device().is_cpu(), "probs must be a CPU tensor, got device ", probs.device());
  TORCH_CHECK(probs.layout() == at::kStrided, "probs must be a dense (strided) tensor, got layout ",
              probs.layout());
  TORCH_CHECK(probs.dim() == 1 || probs.dim() == 2,
              "probs must be an n x K matrix (or a vector of n values P(y = 1)), got ", probs.dim(),
              " dimensions");
  const auto rows = static_cast<std::size_t>(probs.size(0));
  const auto cols = static_cast<std::size_t>(probs.dim() == 2 ? probs.size(1) : 1);
  const std::ptrdiff_t row_stride = probs.stride(0), col_stride = probs.dim() == 2 ? probs.stride(1) : 1;
  switch (probs.scalar_type()) {
    case at::kDouble: return ProbsView(probs.data_ptr<double>(), rows, cols, row_stride, col_stride);
    case at::kFloat: return ProbsView(probs.data_ptr<float>(), rows, cols, row_stride, col_stride);
    default: TORCH_CHECK(false, "probs must be a float32 or float64 tensor, got ", probs.scalar_type());
  }
}

LabelsView labels_view(const at::Tensor& labels) {
  TORCH_CHECK(labels.defined(), "labels is an undefined tensor");
  TORCH_CHECK(labels.device().is_cpu(), "labels must be a CPU tensor, got device ", labels.device());
  TORCH_CHECK(labels.layout() == at::kStrided, "labels must be a dense (strided) tensor, got layout ",
              labels.layout());
  TORCH_CHECK(labels.dim() == 1, "labels must be a 1-D tensor of class indices, got ", labels.dim(),
              " dimensions");
  const auto n = static_cast<std::size_t>(labels.size(0));
  switch (labels.scalar_type()) {
    case at::kLong: return LabelsView(labels.data_ptr<std::int64_t>(), n, labels.stride(0));
    case at::kInt: return LabelsView(labels.data_ptr<std::int32_t>(), n, labels.stride(0));
    default: TORCH_CHECK(false, "labels must be an int64 or int32 tensor, got ", labels.scalar_type());
  }
}

EstimateOptions estimate_options(const CalibrationErrorOptions& o) {
  EstimateOptions e = o.estimate;
  e.estimator = Estimator::paper;  // the operator is the paper's differentiable estimator
  return e;
}

// A 0-d tensor of probs' dtype holding CE_p^p or CE_p.
at::Tensor value_tensor(const Result& r, const CalibrationErrorOptions& o, const at::Tensor& probs) {
  return at::scalar_tensor(o.root ? r.ce : r.ce_pow_p, at::TensorOptions().dtype(probs.scalar_type()));
}

// The core's row-major gradient as a tensor shaped like probs (no copy in double precision).
at::Tensor gradient_tensor(std::vector<double>&& grad, const at::Tensor& probs) {
  auto owner = std::make_unique<std::vector<double>>(std::move(grad));
  double* data = owner->data();
  at::Tensor g = at::from_blob(data, probs.sizes(), [keep = owner.get()](void*) { delete keep; },
                               at::TensorOptions().dtype(at::kDouble));
  owner.release();  // now owned by g's deleter
  return probs.scalar_type() == at::kDouble ? g : g.to(probs.scalar_type());
}

// Identity on `grad` whose backward refuses. calibration_error's gradient is a constant saved by forward,
// so differentiating it again would silently give 0; under create_graph its backward returns this node,
// connected to probs (and the incoming gradient) so that any later differentiation reaches it and fails.
struct FirstOrderOnly : ::torch::autograd::Function<FirstOrderOnly> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& grad, const at::Tensor& /*probs*/) {
    return grad.clone();
  }
  static variable_list backward(AutogradContext*, const variable_list&) {
    TORCH_CHECK(false, "ecekde calibration_error: second derivatives are not implemented");
  }
};

// Forward computes the estimate and its gradient in one call to the core; backward scales the saved
// gradient by the incoming one.
struct CalibrationErrorFunction : ::torch::autograd::Function<CalibrationErrorFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& probs, const at::Tensor& labels,
                            const CalibrationErrorOptions& options) {
    GradientResult r = translate_errors(
        [&] { return estimate_with_gradient(probs_view(probs), labels_view(labels), estimate_options(options)); });
    ctx->saved_data["grad"] = gradient_tensor(std::move(options.root ? r.grad_ce : r.grad_ce_pow_p), probs);
    ctx->save_for_backward({probs});  // only read under create_graph (FirstOrderOnly)
    return value_tensor(r.result, options, probs);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    at::Tensor grad = ctx->saved_data["grad"].toTensor().mul(grad_outputs[0]);
    if (::torch::autograd::GradMode::is_enabled())  // create_graph
      grad = FirstOrderOnly::apply(grad, ctx->get_saved_variables()[0]);
    return {grad, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor calibration_error(const at::Tensor& probs, const at::Tensor& labels,
                             const CalibrationErrorOptions& options) {
  if (::torch::autograd::GradMode::is_enabled() && probs.defined() && probs.requires_grad())
    return CalibrationErrorFunction::apply(probs, labels, options);
  const Result r = translate_errors(
      [&] { return estimate(probs_view(probs), labels_view(labels), estimate_options(options)); });
  return value_tensor(r, options, probs);
}

double select_bandwidth(const at::Tensor& probs, const CalibrationErrorOptions& options) {
  return translate_errors([&] {
    const EstimateOptions& e = options.estimate;
    if (e.bandwidth) {
      check_options(estimate_options(options));
      return *e.bandwidth;
    }
    return ecekde::select_bandwidth(probs_view(probs), e.type, e.bandwidth_selection, e.execution).bandwidth;
  });
}

}  // namespace ecekde::torch

// The dispatcher registration: torch.ops.ecekde.calibration_error / select_bandwidth in Python (after
// torch.ops.load_library), or c10::Dispatcher in C++. The kernels are CompositeImplicitAutograd: they run
// above the autograd key, so the autograd Function above records the graph.
namespace ecekde::torch {

namespace {

// The operator's option arguments written into the library's options through the option table, the
// source of the schema (bad values give the library's messages).
CalibrationErrorOptions op_options(c10::string_view type, int64_t threads, c10::string_view criterion) {
  CalibrationErrorOptions o;
  translate_errors([&] {
    const auto set = [&](std::string_view name, const options::Value& value) {
      options::find(options::estimate_options(), name)->assign(o.estimate, value);
    };
    set("type", std::string(type.data(), type.size()));
    set("criterion", std::string(criterion.data(), criterion.size()));
    set("threads", static_cast<std::int64_t>(threads));
    return 0;
  });
  return o;
}

at::Tensor calibration_error_op(const at::Tensor& probs, const at::Tensor& labels, c10::string_view type,
                                double p, c10::optional<double> bandwidth, bool root, int64_t threads,
                                c10::string_view criterion) {
  CalibrationErrorOptions o = op_options(type, threads, criterion);
  o.estimate.p = p;
  o.estimate.bandwidth = bandwidth ? std::optional<double>(*bandwidth) : std::nullopt;
  o.root = root;
  return calibration_error(probs, labels, o);
}

double select_bandwidth_op(const at::Tensor& probs, c10::string_view type, int64_t threads,
                           c10::string_view criterion) {
  return select_bandwidth(probs, op_options(type, threads, criterion));
}

// A schema literal of an option's value.
std::string schema_literal(const options::Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "None";
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "True" : "False";
  if (const auto* s = std::get_if<std::string>(&value)) return "\"" + *s + "\"";
  std::string text = options::to_text(value);
  if (std::holds_alternative<double>(value) && text.find_first_of(".en") == std::string::npos) text += ".";
  return text;
}

// The schema's option arguments in the order of `names`, typed and defaulted from the library's option
// table (`root`, the operator's own, is a bool defaulting to False).
std::string schema_options(std::initializer_list<std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (name == "root") {
      out += ", bool root=False";
      continue;
    }
    const options::Option<EstimateOptions>* o = options::find(options::estimate_options(), name);
    TORCH_CHECK(o, "internal error: no estimate option ", std::string(name));
    const char* type = nullptr;
    switch (o->kind) {
      case options::Kind::flag: type = "bool"; break;
      case options::Kind::integer:
      case options::Kind::count: type = "int"; break;
      case options::Kind::real: type = o->nullable ? "float?" : "float"; break;
      case options::Kind::choice:
      case options::Kind::text: type = "str"; break;
      default: TORCH_CHECK(false, "internal error: option ", std::string(name), " has no schema type");
    }
    out += ", " + std::string(type) + " " + std::string(name) + "=" + schema_literal(o->default_value());
  }
  return out;
}

}  // namespace

std::string operator_schema(std::string_view name) {
  if (name == "calibration_error")
    return "calibration_error(Tensor probs, Tensor labels" +
           schema_options({"type", "p", "bandwidth", "root", "threads", "criterion"}) + ") -> Tensor";
  if (name == "select_bandwidth")
    return "select_bandwidth(Tensor probs" + schema_options({"type", "threads", "criterion"}) + ") -> float";
  TORCH_CHECK(false, "no ecekde operator ", std::string(name));
}

}  // namespace ecekde::torch

TORCH_LIBRARY(ecekde, m) {
  // The option arguments come from the library's option table (names, types, defaults).
  m.def(ecekde::torch::operator_schema("calibration_error").c_str(), &ecekde::torch::calibration_error_op);
  m.def(ecekde::torch::operator_schema("select_bandwidth").c_str(), &ecekde::torch::select_bandwidth_op);
}
