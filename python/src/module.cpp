// The _ecekde extension module: the core library for Python (docs/python.md). The package ecekde
// (python/ecekde/__init__.py) re-exports it.
#include <pybind11/pybind11.h>

#include "arrays.hpp"
#include "ecekde/error.hpp"
#include "module.hpp"
#include "option_kwargs.hpp"
#include "results.hpp"

PYBIND11_MODULE(_ecekde, m) {
  namespace py = pybind11;
  m.doc() = "ecekde: the consistent, differentiable L_p calibration error estimator ECE^KDE (Popordanoska, "
            "Sayer & Blaschko, NeurIPS 2022) over NumPy arrays.";
  m.attr("__version__") = ECEKDE_VERSION;
  // Every ecekde::Error, with the core's message: a ValueError, since it is always about the input.
  py::register_exception<ecekde::Error>(m, "Error", PyExc_ValueError);
  ecekde::python::register_results(m);
  ecekde::python::register_kde(m);
  ecekde::python::register_metrics(m);
  ecekde::python::register_stats(m);
  ecekde::python::register_io(m);
  ecekde::python::register_report(m);
  ecekde::python::register_option_registry(m);  // last: what the others recorded
  ecekde::python::register_array_hooks(m);
}
