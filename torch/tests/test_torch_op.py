"""The ecekde op from Python: torch.ops.load_library, torch.autograd.gradcheck, and a plain PyTorch
implementation of the formula (kde_reference.py) as the oracle for values and gradients.

ctest runs `python3 test_torch_op.py <libecekde_torch.so>`: exit code 77 (skip, with a message) when this
interpreter has no torch, otherwise pytest (or, without pytest, every test_* function in turn). Under
pytest directly, set ECEKDE_TORCH_LIBRARY to the library's path."""
import os
import sys

TYPES = ["canonical", "marginal", "top-label", "binary"]


def _library_path():
    return os.environ.get("ECEKDE_TORCH_LIBRARY", "")


if __name__ != "__main__":
    import pytest

    torch = pytest.importorskip("torch")
    if not _library_path():
        pytest.skip("ECEKDE_TORCH_LIBRARY is not set", allow_module_level=True)
    torch.ops.load_library(_library_path())
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kde_reference


def op(*args, **kwargs):
    return torch.ops.ecekde.calibration_error(*args, **kwargs)


def batch(n, k, seed):
    """Float64 logits (n x k) and labels drawn independently of them."""
    g = torch.Generator().manual_seed(seed)
    logits = 2 * torch.randn(n, k, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 2 if k == 1 else k, (n,), generator=g)
    return logits, labels


def to_probs(logits):
    return torch.sigmoid(logits) if logits.shape[1] == 1 else torch.softmax(logits, 1)


def classes_for(type):
    return 2 if type == "binary" else 4


def test_values_and_gradients_match_autograd_through_the_formula():
    for type in TYPES:
        for p in (1.0, 1.5, 2.0, 3.0):
            for h in (0.05, 0.3):
                logits, y = batch(30, classes_for(type), 1)
                probs = to_probs(logits).requires_grad_()
                value = op(probs, y, type, p, h)
                (grad,) = torch.autograd.grad(value, probs)
                probs_ref = probs.detach().requires_grad_()
                expected = kde_reference.calibration_error(probs_ref, y, type, p, h)
                (grad_ref,) = torch.autograd.grad(expected, probs_ref)
                what = f"{type} p={p} h={h}"
                assert value.dtype == torch.float64 and value.dim() == 0, what
                assert torch.allclose(value, expected, rtol=1e-10, atol=0), (what, value, expected)
                assert torch.allclose(grad, grad_ref, rtol=1e-8, atol=1e-10), what


def test_gradcheck_through_softmax():
    # softmax keeps every perturbed row on the simplex (the op rejects rows off it by more than 1e-6)
    for type in TYPES:
        for p in (1.0, 2.0):
            for root in (False, True):
                logits, y = batch(16, classes_for(type), 2)
                logits.requires_grad_()
                f = lambda z: op(torch.softmax(z, 1), y, type, p, 0.1, root)
                assert torch.autograd.gradcheck(f, (logits,)), (type, p, root)


def test_gradcheck_on_free_probabilities():
    # every entry is a free variable; steps of 1e-7 keep rows within the 1e-6 row-sum tolerance
    for type in TYPES:
        logits, y = batch(12, 1 if type == "binary" else 3, 3)
        probs = to_probs(logits).requires_grad_()
        f = lambda x: op(x, y, type, 2.0, 0.2)
        assert torch.autograd.gradcheck(f, (probs,), eps=1e-7, atol=1e-6, rtol=1e-4), type


def test_automatic_bandwidth_is_a_constant_of_the_backward():
    logits, y = batch(40, 4, 4)
    probs = torch.softmax(logits, 1).requires_grad_()
    h = torch.ops.ecekde.select_bandwidth(probs.detach(), "canonical")
    auto = op(probs, y, "canonical", 1.0)
    fixed = op(probs, y, "canonical", 1.0, h)
    assert auto.item() == fixed.item()
    assert torch.equal(torch.autograd.grad(auto, probs)[0], torch.autograd.grad(fixed, probs)[0])


def test_float32_follows_float64_and_keeps_its_dtype():
    logits, y = batch(50, 10, 5)
    probs64 = torch.softmax(logits, 1)
    probs32 = probs64.float().requires_grad_()
    value = op(probs32, y, "canonical", 1.0, 0.05)
    (grad,) = torch.autograd.grad(value, probs32)
    assert value.dtype == torch.float32 and grad.dtype == torch.float32
    reference = op(probs32.detach().double(), y, "canonical", 1.0, 0.05)
    assert value.item() == float(torch.tensor(reference.item(), dtype=torch.float32))


def test_missing_and_single_classes_give_finite_gradients():
    logits, _ = batch(10, 4, 6)
    y = torch.tensor([0, 1, 0, 1, 2, 0, 1, 1, 0, 0])  # class 3 absent, class 2 once
    for type in ("canonical", "marginal", "top-label"):
        for h in (1e-6, 1e-2, 1.0):
            z = logits.clone().requires_grad_()
            value = op(torch.softmax(z, 1), y, type, 1.0, h)
            value.backward()
            assert torch.isfinite(value) and torch.isfinite(z.grad).all(), (type, h)


def test_no_graph_under_no_grad():
    logits, y = batch(20, 3, 7)
    probs = torch.softmax(logits, 1).requires_grad_()
    with torch.no_grad():
        assert op(probs, y, bandwidth=0.1).grad_fn is None
    assert op(probs, y, bandwidth=0.1).grad_fn is not None


def test_errors_carry_the_libraries_messages():
    logits, y = batch(6, 3, 8)
    probs = torch.softmax(logits, 1)
    cases = [
        (lambda: op(probs * 1.5, y), "probs row 0 sums to 1.5"),
        (lambda: op(probs, y + 3), "labels row 0: value"),
        (lambda: op(probs, y, "foo"), "unknown calibration type 'foo' (expected canonical, marginal, top-label or binary)"),
        (lambda: op(probs, y, p=0.5), "p must be a finite number >= 1, got 0.5"),
        (lambda: op(probs.half(), y), "probs must be a float32 or float64 tensor, got Half"),
        (lambda: torch.autograd.grad(torch.autograd.grad(op(probs.requires_grad_(), y, bandwidth=0.1), probs,
                                                         create_graph=True)[0].sum(), probs),
         "ecekde calibration_error: second derivatives are not implemented"),
    ]
    for call, message in cases:
        try:
            call()
        except RuntimeError as e:
            assert str(e).startswith(message), (str(e), message)
        else:
            raise AssertionError(f"no error for {message}")


def _main():
    try:
        global torch, kde_reference
        import torch
    except ImportError:
        print(f"SKIPPED: {sys.executable} has no torch (Debian: apt-get install python3-torch)")
        return 77
    if len(sys.argv) > 1:
        os.environ["ECEKDE_TORCH_LIBRARY"] = os.path.abspath(sys.argv[1])
    try:
        import pytest
    except ImportError:
        pytest = None
    if pytest is not None:
        return pytest.main(["-q", "-p", "no:cacheprovider", os.path.abspath(__file__)])
    print("pytest is not installed: running the tests as plain functions")
    torch.ops.load_library(os.environ["ECEKDE_TORCH_LIBRARY"])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kde_reference
    tests = [f for name, f in sorted(globals().items()) if name.startswith("test_")]
    for test in tests:
        test()
        print("passed", test.__name__)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
