"""ecekde: the consistent, differentiable L_p calibration error estimator ECE^KDE (Popordanoska, Sayer &
Blaschko, NeurIPS 2022) for NumPy, over the C++ library.

Every function takes NumPy arrays (probabilities float32/float64 in any memory order, read in place;
labels int32/int64), releases the GIL while it computes, returns a small typed result object whose fields
are those of the CLI's JSON (``to_dict()`` gives that structure) and raises :class:`Error` (a
ValueError) with the library's one-line message on bad input. See docs/python.md.

``report`` returns a :class:`Report`: its str() is the text of `ecekde report`, to_json() its JSON.

Submodules, imported on their own: ``ecekde.torch`` (the differentiable estimator for PyTorch) and
``ecekde.plot`` (reliability diagrams and the simplex view, with matplotlib).
"""
import functools as _functools
import inspect as _inspect

from . import _ecekde
from ._report import Report  # noqa: F401
from ._ecekde import (  # noqa: F401
    BandwidthSelection,
    BinnedResult,
    CalibrationTestResult,
    Error,
    GradientResult,
    GroundTruth,
    Interval,
    KdeBootstrap,
    KernelRegression,
    MmceResult,
    ReliabilityBin,
    Result,
    SimplexCell,
    SyntheticData,
    TemperatureFit,
    TruthValue,
    __version__,
    apply_temperature,
    binned_calibration_error,
    bootstrap,
    bootstrap_indices,
    bootstrap_kde,
    calibration_test,
    calibration_test_kde,
    consistency_labels,
    default_bandwidth_grid,
    doane_bins,
    estimate,
    estimate_with_gradient,
    fit_temperature,
    generate_synthetic,
    kernel_regression,
    mmce,
    read_labels,
    read_predictions,
    read_predictions_csv,
    read_probabilities,
    report,
    select_bandwidth,
    synthetic_ground_truth,
    temperature_scale,
)



def _with_signature(name):
    """The extension's function `name`, which takes its options as keywords (**kwargs), with the signature
    of its option table (ecekde::options) so that help() and inspect show every option and its default."""
    native = getattr(_ecekde, name)
    parameters = [_inspect.Parameter(p, _inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in _ecekde._positional(name)]
    if name == "select_bandwidth":
        parameters[1] = parameters[1].replace(default=None)
    parameters += [_inspect.Parameter(o["name"], _inspect.Parameter.KEYWORD_ONLY, default=o["default"])
                   for o in _ecekde._options(name)]
    if name in _ecekde._watched_functions:  # long computations: progress display, Ctrl-C (docs/python.md)
        parameters.append(_inspect.Parameter("progress", _inspect.Parameter.KEYWORD_ONLY, default=None))

    @_functools.wraps(native)
    def call(*args, **kwargs):
        return native(*args, **kwargs)

    call.__signature__ = _inspect.Signature(parameters)
    call.__doc__ = native.__doc__.split("\n\n", 1)[1]  # without pybind11's (**kwargs) signature line
    call.__module__ = __name__
    return call


for _name in _ecekde._option_functions:
    globals()[_name] = _with_signature(_name)

for _name in dir(_ecekde):  # show the classes as ecekde.Result, ecekde.Error, ...
    if isinstance(getattr(_ecekde, _name), type):
        getattr(_ecekde, _name).__module__ = __name__
Report.__module__ = __name__

TYPES = ("canonical", "marginal", "top-label", "binary")
"""The calibration types, as the ``type`` argument spells them."""

__all__ = [name for name in dir() if not name.startswith("_") and name != "TYPES"] + ["TYPES"]
