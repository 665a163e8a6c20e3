"""Bad input through every front end, from one table: the Python functions, ecekde.torch (the LibTorch
operator when it is built) and the CLI reject each malformed input with the library's one-line message;
strided, transposed, read-only and float32 inputs give the numbers of their contiguous float64 copies;
no input array is ever modified."""
import os
import re
import subprocess

import numpy as np
import pytest
import torch

import ecekde
import ecekde.torch as et

CLI = os.environ.get("ECEKDE_CLI")
P = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]])
Y = np.array([0, 2, 1, 1, 0])


def with_value(row, col, value):
    p = P.copy()
    p[row, col] = value
    return p


# name, probs, labels, message (exactly the library's; every front end shows the same text)
VALUE_ERRORS = [
    ("nan", with_value(1, 1, np.nan), Y, "probs row 1, column 1: value nan is not finite"),
    ("inf", with_value(3, 0, np.inf), Y, "probs row 3, column 0: value inf is not finite"),
    ("negative", with_value(2, 2, -0.25), Y, "probs row 2, column 2: value -0.25 is negative"),
    ("row sum", with_value(4, 0, 0.75), Y,
     "probs row 4 sums to 1.25, not 1 (tolerance 1e-06); use renormalize to rescale rows"),
    ("label too large", P, np.array([0, 2, 3, 1, 0]), "labels row 2: value 3 is outside [0, 3)"),
    ("negative label", P, np.array([0, 2, 1, -1, 0]), "labels row 3: value -1 is outside [0, 3)"),
    ("lengths", P, Y[:4], "labels has 4 entries but probs has 5 rows"),
    ("empty", np.zeros((0, 3)), np.zeros(0, dtype=np.int64), "need at least 2 samples, got 0"),
    ("one sample", P[:1], Y[:1], "need at least 2 samples, got 1"),
]

# name, probs, labels, a pattern the message must match (the front ends word shape and dtype problems in
# their own terms: arrays, tensors, files with their dtype codes)
FORM_ERRORS = [
    ("3-D probs", P[None], Y, r"prob.*(3 dimensions|shape \(1, 5, 3\))"),
    ("integer probs", np.ones((5, 3), dtype=np.int64), Y, r"prob.*float32.*float64.*(int64|<i8)"),
    ("float16 probs", P.astype(np.float16), Y, r"float32.*float64.*(float16|<f2)|(float16|<f2).*float32.*float64"),
    ("fractional labels", P, Y + 0.5, r"label"),
]


def python_message(probs, labels):
    with pytest.raises(ecekde.Error) as info:
        ecekde.estimate(probs, labels, bandwidth=0.1)
    return str(info.value)


def torch_message(probs, labels):
    with pytest.raises(ecekde.Error) as info:
        et.calibration_error(torch.from_numpy(np.array(probs)).requires_grad_(probs.dtype.kind == "f"),
                             torch.from_numpy(np.array(labels)), bandwidth=0.1)
    return str(info.value)


def cli_message(tmp_path, probs, labels):
    if not CLI:
        pytest.fail("ECEKDE_CLI is not set (run the tests through ctest)")
    np.save(tmp_path / "p.npy", probs)
    np.save(tmp_path / "y.npy", labels)
    done = subprocess.run([CLI, "estimate", "--probs", tmp_path / "p.npy", "--labels", tmp_path / "y.npy",
                           "--bandwidth", "0.1"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("ecekde: error: ") and done.stderr.count("\n") == 1, done.stderr
    return done.stderr[len("ecekde: error: "):-1]


@pytest.mark.parametrize("name,probs,labels,message", VALUE_ERRORS, ids=[c[0] for c in VALUE_ERRORS])
def test_value_errors_read_the_same_everywhere(tmp_path, name, probs, labels, message):
    before = (probs.copy(), labels.copy())
    assert python_message(probs, labels) == message
    assert cli_message(tmp_path, probs, labels) == message
    if probs.dtype.kind == "f" and len(labels) > 0 or name == "empty":
        assert torch_message(probs, labels) == message
    assert np.array_equal(before[0], probs, equal_nan=True) and np.array_equal(before[1], labels)


@pytest.mark.parametrize("name,probs,labels,pattern", FORM_ERRORS, ids=[c[0] for c in FORM_ERRORS])
def test_shape_and_dtype_errors_name_the_problem(tmp_path, name, probs, labels, pattern):
    messages = [python_message(probs, labels), cli_message(tmp_path, probs, labels)]
    if name != "fractional labels":  # a tensor of fractional labels is a float tensor: checked by dtype
        messages.append(torch_message(probs, labels))
    for m in messages:
        assert "\n" not in m and re.search(pattern, m), m


def test_layouts_dtypes_and_read_only_arrays_give_the_contiguous_numbers():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((400, 4)) * 2
    base = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = rng.integers(0, 4, 400)
    wide = np.zeros((400, 8))
    wide[:, ::2] = base  # a column-strided view
    read_only = base.copy()
    read_only.setflags(write=False)
    y_read_only = labels.copy()
    y_read_only.setflags(write=False)
    expected = ecekde.estimate(np.ascontiguousarray(base), labels, estimator="paper", bandwidth=0.05)
    for name, probs, y in [("column stride", wide[:, ::2], labels), ("Fortran order", np.asfortranarray(base), labels),
                           ("transposed view", np.ascontiguousarray(base.T).T, labels),
                           ("read-only", read_only, y_read_only), ("int32 labels", base, labels.astype(np.int32)),
                           ("row stride", np.repeat(base, 2, axis=0)[::2], labels)]:
        before = probs.copy()
        got = ecekde.estimate(probs, y, estimator="paper", bandwidth=0.05)
        assert got.ce_pow_p == expected.ce_pow_p, name
        assert np.array_equal(probs, before), name
    single = ecekde.estimate(base.astype(np.float32), labels, estimator="paper", bandwidth=0.05)
    assert single.ce_pow_p == pytest.approx(expected.ce_pow_p, rel=1e-5)


def test_torch_accepts_any_strides_and_leaves_its_input_alone():
    g = torch.Generator().manual_seed(3)
    probs = torch.randn(300, 4, generator=g, dtype=torch.float64).softmax(1)
    labels = torch.randint(0, 4, (300,), generator=g)
    expected = et.calibration_error(probs, labels, bandwidth=0.05)
    strided = torch.zeros(300, 8, dtype=torch.float64)
    strided[:, ::2] = probs
    for name, t in [("column stride", strided[:, ::2]), ("transposed", probs.t().contiguous().t())]:
        before = t.clone()
        assert float(et.calibration_error(t, labels, bandwidth=0.05)) == float(expected), name
        assert torch.equal(t, before), name


# The ECE^KDE functions other than estimate refuse the estimate options they do not read, in the library's
# words (unread_option_message); an unknown keyword keeps Python's message.
PAPER_CALLS = {
    "estimate_with_gradient": lambda **o: ecekde.estimate_with_gradient(P, Y, bandwidth=0.1, **o),
    "kernel_regression": lambda **o: ecekde.kernel_regression(P, Y, P, bandwidth=0.1, **o),
    "bootstrap_kde": lambda **o: ecekde.bootstrap_kde(P, Y, bandwidth=0.1, replicates=2, **o),
    "calibration_test_kde": lambda **o: ecekde.calibration_test_kde(P, Y, bandwidth=0.1, replicates=2, **o),
    "select_bandwidth": lambda **o: ecekde.select_bandwidth(P, **o),
}


@pytest.mark.parametrize("function", PAPER_CALLS)
def test_functions_refuse_the_estimate_options_they_do_not_read(function):
    call = PAPER_CALLS[function]
    call()
    for option, value in [("estimator", "paper"), ("estimator", "crossfit"), ("folds", 3)]:
        with pytest.raises(TypeError) as info:
            call(**{option: value})
        assert str(info.value) == f"{function}() does not read option {option}: only estimate() reads it"
    with pytest.raises(TypeError) as info:
        call(nonsense=1)
    assert str(info.value) == f"{function}() got an unexpected keyword argument 'nonsense'"


def test_select_bandwidth_names_every_reader_of_an_option_it_does_not_read():
    with pytest.raises(TypeError) as info:
        ecekde.select_bandwidth(P, p=2)
    assert str(info.value) == ("select_bandwidth() does not read option p: only estimate(), estimate_with_gradient(), "
                               "kernel_regression(), bootstrap_kde() and calibration_test_kde() read it")


def test_kernel_regression_refuses_the_debiased_form():
    with pytest.raises(ecekde.Error) as info:
        ecekde.kernel_regression(P, Y, P, bandwidth=0.1, p=2, form="debiased")
    assert str(info.value) == "kernel_regression supports only the plug-in form, got form debiased"
