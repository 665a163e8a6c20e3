"""The NumPy front end of ECE^KDE: the binding against the C++ API on the same inputs, how arrays are
read (dtypes, memory orders, no hidden copies), the GIL, result objects and error mapping."""
import gc
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import ecekde


def paper_estimate(*args, **kwargs):
    """ecekde.estimate with the paper's estimator, whose exact values these tests check."""
    return ecekde.estimate(*args, estimator="paper", **kwargs)

from conftest import TYPES, predictions_for, reference, softmax_predictions


# ---- The binding against the C++ API (cpp_reference.cpp) on the same files: equal to the last bit -------

@pytest.mark.parametrize("type", TYPES)
@pytest.mark.parametrize("p", [1.0, 2.5])
@pytest.mark.parametrize("bandwidth", ["auto", 0.07])
@pytest.mark.parametrize("estimator", ["crossfit", "paper"])
def test_estimate_equals_cpp(files, type, p, bandwidth, estimator):
    probs, labels = predictions_for(type, n=70, seed=3)
    expected = reference("estimate", *files(probs, labels), type, p, bandwidth, estimator)
    r = ecekde.estimate(probs, labels, type=type, p=p, bandwidth=None if bandwidth == "auto" else bandwidth,
                        estimator=estimator)
    assert r.estimator == estimator
    assert (r.ce_pow_p, r.ce, r.bandwidth) == (expected["ce_pow_p"][0], expected["ce"][0], expected["bandwidth"][0])
    assert r.type == type and r.p == p and r.n == 70
    assert r.bandwidth_rule == ("auto" if bandwidth == "auto" else "fixed")
    if type == "marginal":
        assert r.class_ce_pow_p.tolist() == expected["class_ce_pow_p"]
    else:
        assert r.class_ce_pow_p is None


@pytest.mark.parametrize("type", ["canonical", "top-label"])
def test_regression_criterion_and_debiased_form_equal_cpp(files, type):
    probs, labels = predictions_for(type, n=90, seed=5)
    expected = reference("estimate", *files(probs, labels), type, 2, "auto", "paper", "loo-regression", "debiased")
    r = paper_estimate(probs, labels, type=type, p=2, criterion="loo-regression", form="debiased")
    assert (r.ce_pow_p, r.bandwidth) == (expected["ce_pow_p"][0], expected["bandwidth"][0])
    assert (r.excluded_rows or 0) == expected["excluded_rows"][0]
    assert r.bandwidth_selection.criterion == "loo-regression"
    s = ecekde.select_bandwidth(probs, labels, type=type, criterion="loo-regression")
    assert s.chosen == r.bandwidth
    with pytest.raises(ecekde.Error):  # the regression criterion needs the labels
        ecekde.select_bandwidth(probs, type=type, criterion="loo-regression")
    with pytest.raises(ecekde.Error):  # only the estimate itself offers the debiased form
        ecekde.estimate_with_gradient(probs, labels, type=type, p=2, bandwidth=0.1, form="debiased")


@pytest.mark.parametrize("type", TYPES)
def test_gradient_equals_cpp(files, type):
    probs, labels = predictions_for(type, n=40, seed=4)
    expected = reference("gradient", *files(probs, labels), type, 1.5, 0.1)
    g = ecekde.estimate_with_gradient(probs, labels, type=type, p=1.5, bandwidth=0.1)
    assert g.result.ce_pow_p == expected["ce_pow_p"][0]
    assert g.grad_ce_pow_p.shape == probs.shape and g.grad_ce.shape == probs.shape
    assert g.grad_ce_pow_p.ravel().tolist() == expected["grad_ce_pow_p"]
    assert g.grad_ce.ravel().tolist() == expected["grad_ce"]


def test_gradient_matches_finite_differences():
    probs, labels = softmax_predictions(30, 3, seed=5)
    g = ecekde.estimate_with_gradient(probs, labels, p=2.0, bandwidth=0.2)
    direction = np.random.default_rng(0).standard_normal(probs.shape)
    direction -= direction.mean(axis=1, keepdims=True)  # rows keep summing to 1
    eps = 1e-6
    up = paper_estimate(probs + eps * direction, labels, p=2.0, bandwidth=0.2)
    down = paper_estimate(probs - eps * direction, labels, p=2.0, bandwidth=0.2)
    numeric = (up.ce_pow_p - down.ce_pow_p) / (2 * eps)
    assert numeric == pytest.approx(float((g.grad_ce_pow_p * direction).sum()), rel=1e-5, abs=1e-9)


def test_select_bandwidth_is_the_estimates_choice():
    probs, labels = softmax_predictions(80, 3, seed=6)
    s = ecekde.select_bandwidth(probs, type="marginal")
    r = paper_estimate(probs, labels, type="marginal")
    assert s.chosen == r.bandwidth and s.grid.tolist() == r.bandwidth_selection.grid.tolist()
    # (the scores agree to rounding: estimate() sums in another order, its centres sorted by class)
    assert s.score == pytest.approx(r.bandwidth_selection.score, rel=1e-13, abs=1e-13)
    assert s.grid.tolist() == ecekde.default_bandwidth_grid().tolist() and len(s.score) == 20
    assert s.rows == 80 and ecekde.select_bandwidth(probs, max_rows=30).rows == 30
    coarse = ecekde.select_bandwidth(probs, grid=[0.01, 0.1, 1.0], refine=False)
    assert coarse.chosen in (0.01, 0.1, 1.0) and len(coarse.refined_grid) == 0


# ---- How arrays are read ----------------------------------------------------------------------------------

def test_every_memory_order_and_dtype_gives_the_same_numbers():
    probs, labels = softmax_predictions(50, 4, seed=7)
    base = paper_estimate(probs, labels, bandwidth=0.05).ce_pow_p
    wide = np.zeros((50, 8))
    wide[:, ::2] = probs
    variants = {
        "fortran": np.asfortranarray(probs),
        "column slice": wide[:, ::2],
        "transposed": np.ascontiguousarray(probs.T).T,
        "list": probs.tolist(),
    }
    for what, p in variants.items():
        assert paper_estimate(p, labels, bandwidth=0.05).ce_pow_p == base, what
    for what, y in {"int32": labels.astype(np.int32), "uint8": labels.astype(np.uint8), "list": labels.tolist(),
                    "strided": np.repeat(labels, 2)[::2], "column": labels[:, None]}.items():
        assert paper_estimate(probs, y, bandwidth=0.05).ce_pow_p == base, what
    # Reversed rows (negative strides) are the same data in another order: equal to their contiguous copy.
    rev = probs[::-1, ::-1]
    assert paper_estimate(rev, labels[::-1], bandwidth=0.05).ce_pow_p == \
        paper_estimate(np.ascontiguousarray(rev), np.ascontiguousarray(labels[::-1]), bandwidth=0.05).ce_pow_p
    # float32 is read as float32 (no conversion copy) and gives what its float64 widening gives.
    p32 = probs.astype(np.float32)
    assert paper_estimate(p32, labels, bandwidth=0.05).ce_pow_p == pytest.approx(
        paper_estimate(p32.astype(np.float64), labels, bandwidth=0.05, renormalize=True).ce_pow_p, rel=1e-12)


def test_arrays_are_read_in_place():
    probs, labels = softmax_predictions(20, 5, seed=8)
    for what, p in {"C float64": probs, "F float64": np.asfortranarray(probs), "slice": probs[::2, 1:],
                    "C float32": probs.astype(np.float32), "reversed": probs[::-1]}.items():
        view = ecekde._ecekde._probs_view(p)
        assert view["data"] == p.ctypes.data and not view["copied"], what
        assert (view["rows"], view["cols"]) == p.shape, what
        assert view["row_stride"] * p.itemsize == p.strides[0], what
        assert view["col_stride"] * p.itemsize == p.strides[1], what
    one_column = probs[:, 0]
    assert ecekde._ecekde._probs_view(one_column)["data"] == one_column.ctypes.data
    for y in (labels, labels.astype(np.int32), labels[::2]):
        view = ecekde._ecekde._labels_view(y)
        assert view["data"] == y.ctypes.data and not view["copied"] and view["stride"] * y.itemsize == y.strides[0]
    # Only what the core cannot read is copied: byte-swapped or unaligned memory, narrow integer labels.
    assert ecekde._ecekde._probs_view(probs.astype(">f8"))["copied"]
    unaligned = np.frombuffer(b"\0" + probs.tobytes(), dtype=np.float64, offset=1).reshape(probs.shape)
    assert not unaligned.flags.aligned and ecekde._ecekde._probs_view(unaligned)["copied"]
    assert paper_estimate(unaligned, labels, bandwidth=0.1).ce == paper_estimate(probs, labels, bandwidth=0.1).ce
    assert ecekde._ecekde._labels_view(labels.astype(np.uint8))["copied"]


def test_no_hidden_copy_of_a_large_array():
    # NumPy reports its allocations to tracemalloc: a copy of the 8 MB input would show in the peak.
    probs, labels = softmax_predictions(1000, 1000, seed=9)
    assert probs.flags.c_contiguous and probs.nbytes == 8_000_000
    gc.collect()
    tracemalloc.start()
    try:
        paper_estimate(probs, labels, bandwidth=0.5, threads=2)
        ecekde.binned_calibration_error(probs, labels)
        ecekde.mmce(probs, labels, gradient=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < probs.nbytes / 20, peak


def test_the_gil_is_released_during_the_computation():
    probs, labels = softmax_predictions(2000, 10, seed=10)
    started, ticks = threading.Event(), []

    def work():
        started.set()
        paper_estimate(probs, labels, threads=1)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    while t.is_alive():  # needs the GIL: with the GIL held by the estimate, no tick until it returns
        ticks.append(time.perf_counter())
    t.join()
    assert len(ticks) > 1000, len(ticks)


# ---- Result objects ---------------------------------------------------------------------------------------

def test_results_are_typed_read_only_and_convert_to_the_cli_json_structure():
    probs, labels = softmax_predictions(40, 3, seed=11)
    r = paper_estimate(probs, labels, type="marginal")
    assert isinstance(r, ecekde.Result)
    assert type(r)._fields == ("estimator", "type", "p", "bandwidth", "ce", "ce_pow_p", "n", "k", "bandwidth_rule",
                               "bandwidth_selection", "class_ce_pow_p", "standard_error", "ce_pow_p_interval",
                               "ce_interval", "pilot", "warnings", "excluded_rows", "averaged_rows")
    d = r.to_dict()
    # the paper's estimator has no standard error, intervals, pilot or warnings; excluded_rows and
    # averaged_rows: None; all left out
    assert list(d) == list(type(r)._fields)[:-7]
    crossfit = ecekde.estimate(probs, labels, type="marginal").to_dict()
    assert list(crossfit) == list(type(r)._fields)[:-2]
    # the row mean over a subset of rows (mean_rows) says so; the one-dimensional types keep every row
    sub = ecekde.estimate(probs, labels, mean_rows=25)
    assert sub.averaged_rows == 25 and sub.to_dict()["averaged_rows"] == 25
    assert ecekde.estimate(probs, labels, type="marginal", mean_rows=25).averaged_rows is None
    assert list(crossfit["ce_interval"]) == ["level", "lower", "upper"]
    assert crossfit["ce_interval"]["lower"] <= crossfit["ce"] <= crossfit["ce_interval"]["upper"]
    assert crossfit["pilot"] in ("beta", "beta-step", "pooled-beta", "pooled-intercepts") and r.pilot is None
    assert list(d["bandwidth_selection"]) == ["criterion", "grid", "score", "refined_grid", "refined_score",
                                              "chosen", "chosen_score", "rows"]
    assert isinstance(d["class_ce_pow_p"], list) and d["bandwidth_selection"]["chosen"] == r.bandwidth
    fixed = paper_estimate(probs, labels, bandwidth=0.1).to_dict()
    assert "bandwidth_selection" not in fixed and "class_ce_pow_p" not in fixed
    assert repr(r).startswith("Result(estimator='paper', type='marginal', p=1.0, bandwidth=")
    with pytest.raises(AttributeError):
        r.ce = 0


def test_result_arrays_view_the_result_and_keep_it_alive():
    probs, labels = softmax_predictions(30, 3, seed=12)
    g = ecekde.estimate_with_gradient(probs, labels, bandwidth=0.1)
    grad = g.grad_ce_pow_p
    assert grad.base is not None and np.shares_memory(grad, g.grad_ce_pow_p)
    before = grad.copy()
    refs = sys.getrefcount(g)
    del g
    gc.collect()
    assert refs > 2 and np.array_equal(grad, before)


# ---- Errors -----------------------------------------------------------------------------------------------

def error_of(call):
    with pytest.raises(ecekde.Error) as info:
        call()
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_core_errors_carry_the_core_message():
    probs, labels = softmax_predictions(10, 3, seed=13)
    bad = labels.copy()
    bad[4] = 7
    assert error_of(lambda: paper_estimate(probs, bad)) == "labels row 4: value 7 is outside [0, 3)"
    assert error_of(lambda: paper_estimate(probs, labels[:9])) == \
        "labels has 9 entries but probs has 10 rows"
    assert error_of(lambda: paper_estimate(probs, labels, type="top")) == \
        "unknown calibration type 'top' (expected canonical, marginal, top-label or binary)"
    assert error_of(lambda: paper_estimate(probs, labels, p=0.5)) == "p must be a finite number >= 1, got 0.5"
    assert error_of(lambda: paper_estimate(probs, labels, bandwidth=-1.0)) == \
        "bandwidth must be a finite number > 0, got -1"
    assert error_of(lambda: paper_estimate(probs, labels, criterion="cv")) == \
        "unknown bandwidth criterion 'cv' (expected loo-likelihood, reference or loo-regression)"


def test_binding_errors_name_the_argument():
    probs, labels = softmax_predictions(10, 3, seed=14)
    assert error_of(lambda: paper_estimate(probs.astype(np.int64), labels)) == \
        "probs must hold float32 or float64 values, got int64"
    assert error_of(lambda: paper_estimate(probs[None], labels)) == \
        "probs must be a 1-D array (P(y = 1)) or a 2-D array (n x K), got 3 dimensions"
    assert error_of(lambda: paper_estimate(probs, labels.astype(np.float64))) == \
        "labels must hold integer class labels (int32 or int64), got float64"
    assert error_of(lambda: paper_estimate(probs, labels.reshape(2, 5))) == \
        "labels must be a 1-D array of n labels, got shape (2, 5)"
    assert error_of(lambda: paper_estimate(probs, labels.astype(np.uint64))) == \
        "labels of type uint64 do not fit int64"


def test_precision_float_agrees_with_double_and_warns_below_the_tested_bandwidths():
    probs, labels = softmax_predictions(600, 5, seed=15)
    double = paper_estimate(probs, labels, bandwidth=0.05)
    single = paper_estimate(probs, labels, bandwidth=0.05, precision="float")
    assert single.ce != double.ce  # the float path ran
    assert abs(single.ce - double.ce) <= 1e-5 * double.ce + 1e-6
    assert single.warnings is None
    small = paper_estimate(probs, labels, bandwidth=0.001, precision="float")
    assert len(small.warnings) == 1 and small.warnings[0].startswith("precision float at bandwidth 0.001")
    assert error_of(lambda: paper_estimate(probs, labels, precision="half")) == \
        "unknown precision 'half' (expected double or float)"
