// The parts of the _ecekde module, each registering its functions (module.cpp calls them in turn).
#pragma once

#include <pybind11/pybind11.h>

namespace ecekde::python {

namespace py = pybind11;

void register_kde(py::module_& m);        // kde.cpp: ECE^KDE, bootstrap, calibration test
void register_metrics(py::module_& m);    // metrics.cpp: binned ECE, MMCE, temperature scaling
void register_stats(py::module_& m);      // stats.cpp: synthetic data and ground truth, debiasing
void register_io(py::module_& m);         // io.cpp: NPY / CSV readers
void register_report(py::module_& m);     // report.cpp: the calibration report

}  // namespace ecekde::python
