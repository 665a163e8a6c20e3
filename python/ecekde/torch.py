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

import numpy as np
import torch
import torch.distributed as dist

from . import _ecekde
from ._ecekde import Error

__all__ = ["calibration_error", "CalibrationError", "CalibrationMetric", "TorchCommunicator", "backend"]

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


class TorchCommunicator:
    """The processes of a torch.distributed group as an ecekde communicator (the ``communicator`` keyword of
    :func:`ecekde.estimate` and the other ECE^KDE functions): ``all_sum`` is an all-reduce (sum) of a
    float64 CPU tensor sharing the array's memory. With a backend that reduces only device tensors (NCCL),
    pass ``device``: the values travel through it.

    Every process must call the same function with the same data and options; each computes a share of the
    rows, and all return the same result, bitwise equal to the single-process one."""

    def __init__(self, group=None, device=None):
        self.group = group
        self.device = device
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)

    def all_sum(self, values):
        tensor = torch.from_numpy(values)  # no copy: the library's buffer
        if self.device is None:
            dist.all_reduce(tensor, group=self.group)
        else:
            on_device = tensor.to(self.device)
            dist.all_reduce(on_device, group=self.group)
            tensor.copy_(on_device.cpu())

    def start_pass(self, send, receive):
        """The ring's pass (``own_rows``): sends ``send`` to the next rank and receives the previous rank's
        into ``receive`` (point to point, CPU tensors), completed by :meth:`finish_pass`."""
        def global_rank(r):
            return r if self.group is None else dist.distributed_c10d._get_global_rank(self.group, r)
        out = torch.from_numpy(np.array(send))  # a copy: torch refuses read-only arrays
        self._into = receive
        self._incoming = torch.empty(len(receive), dtype=torch.float64)
        if self.device is not None:
            out, self._incoming = out.to(self.device), self._incoming.to(self.device)
        self._pending = [dist.isend(out, global_rank((self.rank + 1) % self.size), group=self.group),
                         dist.irecv(self._incoming, global_rank((self.rank - 1) % self.size), group=self.group)]
        self._outgoing = out

    def finish_pass(self):
        for request in self._pending:
            request.wait()
        self._into[:] = self._incoming.cpu().numpy()
        self._pending, self._outgoing, self._incoming, self._into = [], None, None, None


def _as_numpy(x, what):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        return x
    raise TypeError(f"{what} must be a torch tensor or a NumPy array, got {type(x).__name__}")


class CalibrationMetric:
    """The calibration error of everything a model predicted in an evaluation, in the spirit of
    torchmetrics: ``update(probs, labels)`` per batch, ``compute()`` at the end, ``reset()`` to start over.
    Options are those of :func:`ecekde.estimate` (the default estimator is crossfit, with its interval).

    Under torch.distributed (initialised, more than one process in ``process_group``), ``compute()``
    covers every rank's predictions: the ranks exchange their batches (so each holds the whole evaluation
    set, in rank order), each sweeps its share of the rows against every centre, and the partial sums are
    combined with all-reduces; every rank returns the same :class:`ecekde.Result`, equal bitwise to
    ``ecekde.estimate`` of the concatenated predictions in one process. With ``own_rows=True`` no rank
    gathers the others' predictions: for canonical, blocks of centres pass from rank to rank instead
    (:meth:`TorchCommunicator.start_pass`) and the result agrees with one process to 1e-12 relative;
    top-label and binary gather their n scores, and marginal's ranks each keep a share of the classes,
    both bitwise. ``device`` is where the collectives' tensors go (None: CPU, as gloo needs; a CUDA device
    for NCCL).

    Bad input never raises in ``update()``: the first problem is kept and ``compute()`` raises it as
    :class:`ecekde.Error` on every rank, with the same message (naming the rank), so that no rank is left
    waiting for one that failed."""

    def __init__(self, process_group=None, device=None, **options):
        known = {option["name"] for option in _ecekde._options("estimate")}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"CalibrationMetric got unknown options {unknown}")
        self.options = options
        self.process_group = process_group
        self.device = device
        self.reset()

    def reset(self):
        """Forgets every batch (and any kept error)."""
        self._probs, self._labels, self._error = [], [], None

    def update(self, probs, labels):
        """Adds a batch: n x K probabilities (or n values P(y = 1)) and n labels, tensors on any device or
        NumPy arrays; copied to the CPU."""
        if self._error is not None:
            return
        try:
            p, y = np.array(_as_numpy(probs, "probs")), np.array(_as_numpy(labels, "labels"))
            if p.ndim not in (1, 2) or y.ndim != 1 or len(p) != len(y):
                raise Error(f"update: probs must be n x K (or n) and labels n, got shapes {p.shape} and {y.shape}")
            if self._probs and (p.shape[1:] != self._probs[0].shape[1:] or p.dtype != self._probs[0].dtype):
                raise Error(f"update: this batch's probs are {p.dtype} {p.shape}, earlier ones "
                            f"{self._probs[0].dtype} {self._probs[0].shape}")
            self._probs.append(p)
            self._labels.append(y.astype(np.int64))
        except (Error, TypeError, ValueError) as e:
            self._error = f"{e} (batch {len(self._probs)})"

    def _local(self):
        """This rank's predictions, checked: (probs, labels, error message or None)."""
        if self._error is not None or not self._probs:
            return None, None, self._error
        probs, labels = np.concatenate(self._probs), np.concatenate(self._labels)
        try:  # the library's checks of these rows (a quick estimator applies every one)
            _ecekde.binned_calibration_error(probs, labels, type="binary" if probs.ndim == 1 or probs.shape[1] == 1
                                             else "top-label", renormalize=self.options.get("renormalize", False))
        except Error as e:
            return None, None, str(e)
        return probs, labels, None

    def compute(self):
        """The estimate over every batch of every rank: an :class:`ecekde.Result`."""
        probs, labels, error = self._local()
        distributed = dist.is_available() and dist.is_initialized() and dist.get_world_size(self.process_group) > 1
        if not distributed:
            if error is not None:
                raise Error(error)
            if probs is None:
                raise Error("compute: no predictions (update() was never called)")
            return _ecekde.estimate(probs, labels, **self.options)

        # Every rank learns every rank's state before any data moves: one failure raises everywhere.
        shape = None if probs is None else (len(probs), probs.shape[1:], str(probs.dtype))
        states = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(states, (error, shape), group=self.process_group)
        for rank, (e, _) in enumerate(states):
            if e is not None:
                raise Error(f"rank {rank}: {e}")
        kinds = {(s[1], s[2]) for _, s in states if s is not None}
        if not kinds:
            raise Error("compute: no predictions on any rank (update() was never called)")
        if len(kinds) > 1:
            described = "; ".join(f"rank {r}: {s[2]} {(s[0],) + tuple(s[1])}" for r, (_, s) in enumerate(states)
                                  if s is not None)
            raise Error(f"compute: the ranks' predictions differ in shape or type ({described})")
        (columns, dtype), = kinds
        if self.options.get("own_rows"):  # each rank keeps its rows; blocks of centres travel between the ranks
            if probs is None:
                probs, labels = np.zeros((0,) + tuple(columns), dtype=np.dtype(dtype)), np.zeros(0, dtype=np.int64)
            return _ecekde.estimate(probs, labels, communicator=TorchCommunicator(self.process_group, self.device),
                                    **self.options)
        counts = [0 if s is None else s[0] for _, s in states]
        probs = _gather_rows(probs, counts, columns, np.dtype(dtype), self.process_group, self.device)
        labels = _gather_rows(labels, counts, (), np.dtype(np.int64), self.process_group, self.device)
        return _ecekde.estimate(probs, labels, communicator=TorchCommunicator(self.process_group, self.device),
                                **self.options)


def _gather_rows(local, counts, columns, dtype, group, device):
    """Every rank's rows (counts[r] of them), concatenated in rank order, on every rank."""
    most = max(counts)
    padded = torch.zeros((most,) + tuple(columns), dtype=torch.from_numpy(np.zeros(0, dtype)).dtype)
    if local is not None:
        padded[: len(local)] = torch.from_numpy(np.ascontiguousarray(local))
    if device is not None:
        padded = padded.to(device)
    parts = [torch.empty_like(padded) for _ in counts]
    dist.all_gather(parts, padded, group=group)
    return np.concatenate([part[:count].cpu().numpy() for part, count in zip(parts, counts)])
