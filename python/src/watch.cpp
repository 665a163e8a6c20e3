#include "watch.hpp"

#include <cstdio>
#include <string_view>

namespace ecekde::python {

namespace {

bool interactive_session() {
  const py::module_ sys = py::module_::import("sys");
  if (sys.attr("stderr").is_none()) return false;
  if (py::hasattr(sys, "ps1") || sys.attr("flags").attr("interactive").cast<int>() != 0) return true;
  if (sys.attr("modules").attr("__contains__")("ipykernel").cast<bool>()) return true;
  try {
    return sys.attr("stderr").attr("isatty")().cast<bool>();
  } catch (const py::error_already_set&) {
    return false;
  }
}

}  // namespace

ProgressReporter::ProgressReporter(py::object progress, std::string name) : name_(std::move(name)) {
  if (progress.is_none()) {
    mode_ = interactive_session() ? Mode::delayed_bar : Mode::off;
  } else if (PyBool_Check(progress.ptr())) {
    mode_ = progress.cast<bool>() ? Mode::bar : Mode::off;
  } else if (PyCallable_Check(progress.ptr())) {
    mode_ = Mode::callback;
    callback_ = std::move(progress);
  } else {
    throw py::type_error("progress must be None, True, False or a callable progress(fraction, seconds_left), got " +
                         py::repr(progress).cast<std::string>());
  }
}

void ProgressReporter::update(const RunControl::Progress& p, double elapsed) {
  if (mode_ == Mode::callback) {
    const std::optional<double> left = seconds_left(p, elapsed);
    callback_(p.fraction(), left ? py::object(py::float_(*left)) : py::object(py::none()));
    return;
  }
  if (mode_ == Mode::off || (mode_ == Mode::delayed_bar && !drawn_ && elapsed < 2)) return;
  draw(p, elapsed);
}

void ProgressReporter::draw(const RunControl::Progress& p, double elapsed) {
  constexpr int kWidth = 30;
  const auto filled = static_cast<std::size_t>(p.fraction() * kWidth);
  const std::string line = "\r" + name_ + " [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                           progress_text(p, elapsed) + "    ";
  const py::object err = py::module_::import("sys").attr("stderr");
  err.attr("write")(line);
  err.attr("flush")();
  drawn_ = true;
}

void ProgressReporter::finish(const char* outcome, const RunControl::Progress& p, double elapsed) {
  if (mode_ == Mode::callback) {
    if (std::string_view(outcome) == "done") callback_(1.0, py::float_(0.0));
    return;
  }
  if (mode_ == Mode::bar || drawn_) draw(p, elapsed);  // the last state; a short call's only one
  if (!drawn_) return;
  const py::object err = py::module_::import("sys").attr("stderr");
  err.attr("write")(" " + std::string(outcome) + "\n");
  err.attr("flush")();
}

}  // namespace ecekde::python
