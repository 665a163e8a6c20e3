"""ECE^KDE for PyTorch: the calibration error of a batch as a differentiable function of the predicted
probabilities, for use as a training regulariser (the paper's KDE-XE: cross-entropy + lambda * CE_p^p).

Two backends compute the same numbers with the same C++ code (ecekde::estimate_with_gradient: the value
and the analytic gradient come out of one call to the core; backward multiplies the saved gradient):

* ``"op"``: the LibTorch operator ``torch.ops.ecekde.calibration_error`` (torch/src/operator.cpp), loaded
  from ``libecekde_torch.so`` next to this file (the CMake build puts it there when LibTorch is found) or
  from the path in the environment variable ECEKDE_TORCH_LIBRARY. It is also what C++ training uses.
* ``"python"``: a ``torch.autograd.Function`` over ``ecekde.estimate_with_gradient`` (the NumPy module),
  used when the operator library is absent (e.g. a pip build without LibTorch) or ECEKDE_TORCH_LIBRARY is
  set to the empty string.

``backend`` says which one is in use. Both take CPU tensors (float32 or float64, any strides) without
copying them, return a 0-d tensor of the probabilities' dtype, give no gradient to the labels, and refuse
second derivatives. Errors are :class:`ecekde.Error` with the library's message.
"""
import os
import warnings

import torch

from . import _ecekde
from ._ecekde import Error

__all__ = ["calibration_error", "CalibrationError", "backend"]

# The defaults of the library's option table (EstimateOptions{}), as the CLI and ecekde.estimate use them.
_DEFAULTS = {option["name"]: option["default"] for option in _ecekde._options("estimate_with_gradient")}
_LIBRARY_NAME = "libecekde_torch.so"


def _operator_library():
    """The path of the operator library to load, or None for the Python backend."""
    path = os.environ.get("ECEKDE_TORCH_LIBRARY")
    if path is not None:
        return path or None
    candidate = os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIBRARY_NAME)
    return candidate if os.path.exists(candidate) else None


def _load_operator():
    path = _operator_library()
    if path is None:
        return None
    if not hasattr(torch.ops.ecekde, "calibration_error"):  # not loaded by someone else already
        try:
            torch.ops.load_library(path)
        except OSError as e:  # e.g. built against another LibTorch than this torch
            if "ECEKDE_TORCH_LIBRARY" in os.environ:
                raise
            warnings.warn(f"ecekde.torch: cannot load {path} ({e}); using the Python backend")
            return None
    return torch.ops.ecekde.calibration_error


_operator = _load_operator()
backend = "op" if _operator is not None else "python"
"""Which implementation calibration_error uses: "op" (the LibTorch operator) or "python"."""


def _check_tensors(probs, labels):
    if not isinstance(probs, torch.Tensor) or not isinstance(labels, torch.Tensor):
        raise Error("probs and labels must be torch tensors")
    if probs.device.type != "cpu":
        raise Error(f"probs must be a CPU tensor, got device {probs.device}")
    if labels.device.type != "cpu":
        raise Error(f"labels must be a CPU tensor, got device {labels.device}")
    if probs.dtype not in (torch.float32, torch.float64):
        raise Error(f"probs must be a float32 or float64 tensor, got {probs.dtype}")
    if labels.dtype not in (torch.int32, torch.int64):
        raise Error(f"labels must be an int64 or int32 tensor, got {labels.dtype}")


class _FirstOrderOnly(torch.autograd.Function):
    """Identity on a gradient whose own backward refuses. The gradient of calibration_error is a constant
    from forward, so differentiating it again would silently miss the second-order terms; under
    create_graph the gradient passes through this node, connected to probs, and any later
    differentiation reaches it and fails (as the operator does)."""

    @staticmethod
    def forward(ctx, grad, probs):
        return grad.clone()

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError("ecekde calibration_error: second derivatives are not implemented")


class _CalibrationErrorFunction(torch.autograd.Function):
    """The python backend: forward asks the core for the value and the gradient at once."""

    @staticmethod
    def forward(ctx, probs, labels, root, options):
        result = _ecekde.estimate_with_gradient(probs.detach().numpy(), labels.numpy(), **options)
        grad = torch.from_numpy(result.grad_ce if root else result.grad_ce_pow_p)  # no copy
        ctx.save_for_backward(grad.to(probs.dtype), probs)
        value = result.result.ce if root else result.result.ce_pow_p
        return torch.tensor(value, dtype=probs.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad, probs = ctx.saved_tensors
        grad = grad * grad_output
        if torch.is_grad_enabled():  # create_graph
            grad = _FirstOrderOnly.apply(grad, probs)
        return grad, None, None, None


def _python_backend(probs, labels, root, options):
    if torch.is_grad_enabled() and probs.requires_grad:
        return _CalibrationErrorFunction.apply(probs, labels, root, options)
    result = _ecekde.estimate(probs.detach().numpy(), labels.numpy(), estimator="paper", **options)
    return torch.tensor(result.ce if root else result.ce_pow_p, dtype=probs.dtype)


def _op_backend(probs, labels, root, options):
    try:
        return _operator(probs, labels, options["type"], options["p"], options["bandwidth"], root,
                         options["threads"], options["criterion"])
    except RuntimeError as e:  # c10::Error carrying the library's message
        raise Error(str(e).splitlines()[0]) from None


def calibration_error(probs, labels, *, type=_DEFAULTS["type"], p=_DEFAULTS["p"],
                      bandwidth=_DEFAULTS["bandwidth"], root=False, criterion=_DEFAULTS["criterion"],
                      grid=_DEFAULTS["grid"], refine=_DEFAULTS["refine"], max_rows=_DEFAULTS["max_rows"],
                      threads=_DEFAULTS["threads"]):
    """ECE^KDE of a batch, differentiable with respect to ``probs``.

    Args:
        probs: n x K probabilities (rows summing to 1, e.g. a softmax), or n values P(y = 1) for the binary
            type; a float32 or float64 CPU tensor. Every entry is a free variable: the chain rule through
            the softmax is autograd's.
        labels: n class indices, an int64 or int32 CPU tensor (no gradient).
        type, p, bandwidth, criterion, grid, refine, max_rows, threads: as in :func:`ecekde.estimate`. An automatic
            bandwidth is chosen on the detached batch and held constant in the gradient.
        root: False gives CE_p^p (what the paper trains with), True gives CE_p.

    Returns:
        A 0-d tensor of probs' dtype.
    """
    _check_tensors(probs, labels)
    selection = dict(criterion=criterion, grid=grid, refine=refine, max_rows=max_rows)
    if bandwidth is None and backend == "op" and any(selection[k] != _DEFAULTS[k] for k in selection):
        # The operator's schema has the criterion but not the other selection options: choose h here.
        bandwidth = _ecekde.select_bandwidth(probs.detach().numpy(), type=type, threads=threads,
                                             **selection).chosen
    options = dict(type=type, p=p, bandwidth=bandwidth, threads=threads, **selection)
    run = _op_backend if backend == "op" else _python_backend
    return run(probs, labels, root, options)


class CalibrationError(torch.nn.Module):
    """calibration_error as a module: ``CalibrationError(type="canonical", p=2)(probs, labels)``."""

    def __init__(self, **options):
        super().__init__()
        unknown = sorted(set(options) - set(calibration_error.__kwdefaults__))
        if unknown:
            raise TypeError(f"CalibrationError got unknown options {unknown}")
        self.options = options

    def forward(self, probs, labels):
        return calibration_error(probs, labels, **self.options)

    def extra_repr(self):
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items())
