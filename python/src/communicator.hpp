// The `communicator` keyword of the ECE^KDE functions: a Python object standing for the processes of a
// distributed run (ecekde/communicator.hpp), e.g. ecekde.torch's over torch.distributed.
#pragma once

#include <memory>
#include <span>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "ecekde/communicator.hpp"
#include "ecekde/error.hpp"

namespace ecekde::python {

namespace py = pybind11;

/// The help text of the keyword.
inline constexpr const char* kCommunicatorDoc =
    "None (this process alone), or the processes of a distributed run: an object with integer attributes "
    "rank and size and a method all_sum(values) that sums a float64 NumPy array over the processes in place "
    "(ecekde.torch.TorchCommunicator wraps torch.distributed). Every process passes the same data and "
    "options; each computes a share of the rows, and every process returns the same result, equal bitwise "
    "to the single-process one (the gradient to rounding)";

/// A Python object with rank, size and all_sum(array) as a Communicator. all_sum is called from the
/// library's calling thread (a worker of run_watched, without the GIL): it takes the GIL for the call.
class PyCommunicator : public Communicator {
 public:
  explicit PyCommunicator(py::object object) : object_(std::move(object)) {
    for (const char* name : {"rank", "size", "all_sum"})
      if (!py::hasattr(object_, name))
        throw py::type_error(std::string("communicator must have rank, size and all_sum; it has no ") + name);
    rank_ = object_.attr("rank").cast<int>();
    size_ = object_.attr("size").cast<int>();
    if (size_ < 1 || rank_ < 0 || rank_ >= size_)
      throw Error("communicator: rank " + std::to_string(rank_) + " is not in [0, size = " + std::to_string(size_) + ")");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void all_sum(std::span<double> values) override {
    py::gil_scoped_acquire gil;
    const py::capsule owner(values.data(), [](void*) {});  // a view of the library's buffer, not a copy
    py::array_t<double> array({static_cast<py::ssize_t>(values.size())}, {static_cast<py::ssize_t>(sizeof(double))},
                              values.data(), owner);
    const py::object returned = object_.attr("all_sum")(array);
    if (returned.is_none() || returned.is(array)) return;
    const auto sums = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(returned);
    if (!sums || static_cast<std::size_t>(sums.size()) != values.size())
      throw Error("communicator.all_sum must sum its array in place (or return the sums, of the same size)");
    std::copy_n(sums.data(), values.size(), values.data());
  }

  /// The ring's pass (own_rows): the object's start_pass(send, receive) and finish_pass() when it has
  /// them (send a read-only view, receive a writable one, both valid until finish_pass returns), else
  /// Communicator's, over all_sum.
  void start_pass(std::span<const double> send, std::span<double> receive) override {
    {
      py::gil_scoped_acquire gil;
      passes_ = py::hasattr(object_, "start_pass") && py::hasattr(object_, "finish_pass");
      if (passes_) {
        const py::capsule owner(send.data(), [](void*) {});
        py::array_t<double> out({static_cast<py::ssize_t>(send.size())}, {static_cast<py::ssize_t>(sizeof(double))},
                                send.data(), owner);
        out.attr("setflags")(py::arg("write") = false);
        py::array_t<double> in({static_cast<py::ssize_t>(receive.size())},
                               {static_cast<py::ssize_t>(sizeof(double))}, receive.data(), owner);
        object_.attr("start_pass")(out, in);
        return;
      }
    }
    Communicator::start_pass(send, receive);  // its finish_pass calls all_sum, which takes the GIL itself
  }

  void finish_pass() override {
    if (!passes_) return Communicator::finish_pass();
    py::gil_scoped_acquire gil;
    object_.attr("finish_pass")();
  }

 private:
  py::object object_;
  int rank_ = 0, size_ = 1;
  bool passes_ = false;
};

/// Takes `communicator` from the keywords: null for None or absent.
inline std::unique_ptr<PyCommunicator> take_communicator(py::dict& kwargs) {
  const py::object value = kwargs.attr("pop")("communicator", py::none());
  return value.is_none() ? nullptr : std::make_unique<PyCommunicator>(value);
}

}  // namespace ecekde::python
