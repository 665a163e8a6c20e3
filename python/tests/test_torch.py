"""ecekde.torch: the differentiable estimator for PyTorch. gradcheck in float64 for both backends (the
LibTorch operator when built, and the autograd.Function over the NumPy module), equality with
ecekde.estimate_with_gradient, float32, strides, errors, and a small training loop whose regularised loss
decreases."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ecekde


def paper_estimate(*args, **kwargs):
    """ecekde.estimate with the paper's estimator, whose exact values these tests check."""
    return ecekde.estimate(*args, estimator="paper", **kwargs)

import ecekde.torch as et
from conftest import TYPES

BACKENDS = {"python": et._python_backend}
if et.backend == "op":
    BACKENDS["op"] = et._op_backend


def call(backend, probs, labels, root=False, **options):
    """calibration_error through one backend (the public function uses et.backend)."""
    full = dict(et._DEFAULTS)
    full.update(options)
    full = {k: full[k] for k in ("type", "p", "bandwidth", "criterion", "grid", "refine", "max_rows", "threads")}
    return BACKENDS[backend](probs, labels, root, full)


def batch(n, k, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    logits = 2 * torch.randn(n, k, generator=g, dtype=dtype)
    labels = torch.randint(0, max(k, 2), (n,), generator=g)
    return logits, labels


def to_probs(logits):
    return torch.sigmoid(logits[:, 0]) if logits.shape[1] == 1 else torch.softmax(logits, 1)


def test_the_operator_is_used_when_it_was_built():
    if os.environ.get("ECEKDE_EXPECT_TORCH_OP"):
        assert et.backend == "op"
    else:
        assert et.backend in ("op", "python")


def backend_with(library):
    """The backend a fresh interpreter picks with ECEKDE_TORCH_LIBRARY=library (and its stderr)."""
    env = dict(os.environ, ECEKDE_TORCH_LIBRARY=library)
    done = subprocess.run([sys.executable, "-c", "import ecekde.torch as et; print(et.backend)"], env=env,
                          capture_output=True, text=True)
    return done.returncode, done.stdout.strip(), done.stderr


def test_the_environment_chooses_the_library():
    assert backend_with("")[:2] == (0, "python")
    status, _, stderr = backend_with("/nonexistent/libecekde_torch.so")
    assert status != 0 and "OSError" in stderr  # an explicit library that does not load is an error


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("type", TYPES)
def test_gradcheck_float64(backend, type):
    # Through the softmax (sigmoid for binary), so that perturbations keep the rows on the simplex.
    logits, labels = batch(12, 1 if type == "binary" else 3, seed=1)
    logits.requires_grad_()
    for p, root in ((1.0, False), (2.0, True), (2.5, False)):
        f = lambda z: call(backend, to_probs(z), labels, root=root, type=type, p=p, bandwidth=0.3)  # noqa: E731
        assert torch.autograd.gradcheck(f, (logits,), eps=1e-6, atol=1e-7, rtol=1e-5), (type, p, root)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_values_and_gradients_equal_the_numpy_module(backend):
    logits, labels = batch(40, 4, seed=2)
    probs = torch.softmax(logits, 1).requires_grad_()
    value = call(backend, probs, labels, type="marginal", p=1.5)
    value.backward()
    expected = ecekde.estimate_with_gradient(probs.detach().numpy(), labels.numpy(), type="marginal", p=1.5)
    assert value.dtype == torch.float64 and value.dim() == 0
    assert value.item() == expected.result.ce_pow_p
    assert torch.equal(probs.grad, torch.from_numpy(expected.grad_ce_pow_p))
    root = call(backend, probs, labels, root=True, type="marginal", p=1.5, bandwidth=expected.result.bandwidth)
    assert root.item() == expected.result.ce


def test_the_public_function_and_module():
    logits, labels = batch(30, 3, seed=3)
    probs = torch.softmax(logits, 1)
    value = et.calibration_error(probs, labels, p=2.0, bandwidth=0.1)
    assert value.item() == paper_estimate(probs.numpy(), labels.numpy(), p=2.0, bandwidth=0.1).ce_pow_p
    module = et.CalibrationError(type="top-label", root=True)
    assert module(probs, labels).item() == paper_estimate(probs.numpy(), labels.numpy(), type="top-label").ce
    assert "type='top-label'" in repr(module)
    with pytest.raises(TypeError, match="unknown options"):
        et.CalibrationError(bandwith=0.1)
    # A grid or refine=False reaches the bandwidth choice in both backends.
    coarse = et.calibration_error(probs, labels, grid=[0.05, 0.5], refine=False)
    expected = paper_estimate(probs.numpy(), labels.numpy(), grid=[0.05, 0.5], refine=False)
    assert coarse.item() == expected.ce_pow_p


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_float32_and_strided_tensors(backend):
    logits, labels = batch(30, 4, seed=4, dtype=torch.float32)
    wide = torch.zeros(30, 8)
    wide[:, ::2] = torch.softmax(logits, 1)
    probs = wide[:, ::2].requires_grad_(False).clone().t().contiguous().t().requires_grad_()  # column-major
    value = call(backend, probs, labels.to(torch.int32), bandwidth=0.2)
    value.backward()
    assert value.dtype == torch.float32 and probs.grad.dtype == torch.float32
    expected = ecekde.estimate_with_gradient(probs.detach().numpy(), labels.numpy(), bandwidth=0.2)
    assert value.item() == pytest.approx(expected.result.ce_pow_p, rel=1e-6)
    assert torch.allclose(probs.grad.double(), torch.from_numpy(expected.grad_ce_pow_p), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_second_derivatives_raise(backend):
    logits, labels = batch(10, 3, seed=5)
    probs = torch.softmax(logits.requires_grad_(), 1)
    (grad,) = torch.autograd.grad(call(backend, probs, labels, bandwidth=0.3), logits, create_graph=True)
    with pytest.raises(RuntimeError):
        grad.sum().backward()


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_errors_are_ecekde_errors_with_the_library_message(backend):
    logits, labels = batch(10, 3, seed=6)
    probs = torch.softmax(logits, 1)
    bad = labels.clone()
    bad[2] = 5
    with pytest.raises(ecekde.Error, match=r"^labels row 2: value 5 is outside \[0, 3\)$"):
        call(backend, probs, bad)
    with pytest.raises(ecekde.Error, match=r"^p must be a finite number >= 1, got 0.5$"):
        call(backend, probs, labels, p=0.5)
    with pytest.raises(ecekde.Error, match="^probs must be a float32 or float64 tensor, got torch.float16$"):
        et.calibration_error(probs.half(), labels)


def test_training_with_the_regulariser_lowers_the_regularised_loss():
    # A linear softmax model on 3-class data: cross-entropy + lambda * CE_1^1 (canonical), full batch.
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(200, 5, generator=g, dtype=torch.float64)
    y = (x[:, :3] + 0.7 * torch.randn(200, 3, generator=g, dtype=torch.float64)).argmax(1)
    model = torch.nn.Linear(5, 3).double()
    with torch.no_grad():
        model.weight.mul_(6)  # start overconfident
    optimiser = torch.optim.SGD(model.parameters(), lr=0.2)
    regulariser = et.CalibrationError(type="canonical", p=1.0)
    losses, calibration = [], []
    for _ in range(40):
        optimiser.zero_grad()
        logits = model(x)
        ce = regulariser(torch.softmax(logits, 1), y)
        loss = torch.nn.functional.cross_entropy(logits, y) + 1.0 * ce
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
        calibration.append(ce.item())
    assert losses[-1] < 0.8 * losses[0], losses
    assert calibration[-1] < calibration[0], calibration
    assert all(np.isfinite(losses))
