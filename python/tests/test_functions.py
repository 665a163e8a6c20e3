"""The rest of the module against the C++ API on the same inputs (bootstrap, calibration test, binned ECE,
MMCE, temperature scaling, synthetic data) and the behaviour of the Python-only pieces (a Python statistic
in bootstrap / calibration_test, the readers, the debiasing functions)."""
import numpy as np
import pytest

import ecekde
import ecekde.research


def paper_estimate(*args, **kwargs):
    """ecekde.estimate with the paper's estimator, whose exact values these tests check."""
    return ecekde.estimate(*args, estimator="paper", **kwargs)

from conftest import predictions_for, reference, save, softmax_predictions


@pytest.mark.parametrize("copies", ["leave-copies-out", "plain"])
def test_bootstrap_kde_equals_cpp(files, copies):
    probs, labels = softmax_predictions(50, 3, seed=20)
    expected = reference("bootstrap", *files(probs, labels), "canonical", 1, 0.1, 30, 7, copies)
    b = ecekde.bootstrap_kde(probs, labels, bandwidth=0.1, replicates=30, seed=7, copies=copies)
    assert b.result.ce_pow_p == expected["ce_pow_p"][0]
    assert (b.ce_pow_p.lower, b.ce_pow_p.upper) == (expected["lower"][0], expected["upper"][0])
    assert b.ce_pow_p.replicates.tolist() == expected["replicates"]
    assert b.ce_pow_p.level == 0.95 and b.ce_pow_p.estimate == b.result.ce_pow_p
    assert list(b.to_dict()) == ["result", "ce_pow_p", "ce"]


def test_calibration_test_kde_equals_cpp(files):
    probs, labels = softmax_predictions(50, 3, seed=21)
    expected = reference("test", *files(probs, labels), "top-label", 2, "auto", 40, 3)
    t = ecekde.calibration_test_kde(probs, labels, type="top-label", p=2, replicates=40, seed=3)
    assert (t.statistic, t.p_value) == (expected["statistic"][0], expected["p_value"][0])
    assert t.null_values.tolist() == expected["null_values"] and t.bandwidth > 0


@pytest.mark.parametrize("type,bins,binning", [("top-label", 15, "equal-width"), ("marginal", 10, "equal-mass"),
                                               ("canonical", "doane", "equal-width"), ("binary", 5, "equal-mass")])
def test_binned_equals_cpp(files, type, bins, binning):
    probs, labels = predictions_for(type, n=200, k=3, seed=22)
    expected = reference("binned", *files(probs, labels), type, 2, bins, binning)
    r = ecekde.binned_calibration_error(probs, labels, type=type, p=2, bins=None if bins == "doane" else bins,
                                        binning=binning)
    assert (r.ce_pow_p, r.ce) == (expected["ce_pow_p"][0], expected["ce"][0])
    edges = expected["edges"] if isinstance(expected["edges"][0], list) else [expected["edges"]]
    assert [e.tolist() for e in r.edges] == edges
    if type == "canonical":
        assert r.diagrams == [] and sum(c.count for c in r.cells) == 200 and len(r.cells[0].mean_label) == 3
    else:
        assert sum(b.count for b in r.diagrams[0]) == 200
        assert all(b.lower <= b.mean_confidence <= b.upper for b in r.diagrams[0])


def test_binned_options():
    probs, labels = softmax_predictions(300, 4, seed=23)
    mce = ecekde.binned_calibration_error(probs, labels, maximum=True)
    assert mce.maximum and mce.ce == mce.ce_pow_p
    assert ecekde.binned_calibration_error(probs, labels, p=2, form="debiased").form == "debiased"
    assert ecekde.binned_calibration_error(probs, labels, type="canonical", bins=3).form == "per-sample"
    assert ecekde.doane_bins(probs.max(axis=1)) >= 1
    with pytest.raises(ecekde.Error):
        ecekde.binned_calibration_error(probs, labels, binning="quantile")


@pytest.mark.parametrize("weighted", [0, 1])
def test_mmce_equals_cpp(files, weighted):
    probs, labels = softmax_predictions(60, 4, seed=24)
    expected = reference("mmce", *files(probs, labels), weighted)
    r = ecekde.mmce(probs, labels, weighted=bool(weighted))
    assert r.mmce_squared == expected["mmce_squared"][0]
    assert r.gradient.shape == (60, 4) and r.gradient.ravel().tolist() == expected["gradient"]
    assert ecekde.mmce(probs, labels, gradient=False).gradient is None


def test_temperature_equals_cpp(files):
    probs, labels = softmax_predictions(200, 5, seed=25)
    logits = 3 * np.log(probs)
    expected = reference("temperature", *files(logits, labels))
    fit = ecekde.fit_temperature(logits, labels)
    assert (fit.temperature, fit.nll) == (expected["temperature"][0], expected["nll"][0])
    assert fit.nll <= fit.nll_at_one and not fit.at_bound
    scaled = ecekde.apply_temperature(logits, fit.temperature)
    assert scaled.shape == (200, 5) and np.allclose(scaled.sum(axis=1), 1)
    assert np.allclose(scaled, ecekde.apply_temperature(logits / fit.temperature, 1.0))


def test_synthetic_equals_cpp():
    expected = reference("synthetic", 40, 3, 0.6, 0.8, 9)
    d = ecekde.generate_synthetic(40, classes=3, t1=0.6, t2=0.8, seed=9)
    assert d.probs.shape == (40, 3) and d.labels.dtype == np.int64
    assert d.probs.ravel().tolist() == expected["probs"]
    assert d.calibrated.ravel().tolist() == expected["calibrated"]
    assert d.labels.tolist() == expected["labels"]
    q = ecekde.temperature_scale(d.calibrated[0], 0.8)
    assert q.tolist() == d.probs[0].tolist()


def test_ground_truth_is_zero_for_a_calibrated_model():
    truth = ecekde.synthetic_ground_truth(classes=3, t2=1.0, canonical_samples=4096, inner_samples=256)
    assert truth.p == 1 and abs(truth.canonical.value) < 1e-12 and abs(truth.top_label.value) < 1e-6
    off = ecekde.synthetic_ground_truth(classes=3, t2=0.6, canonical_samples=4096, inner_samples=256)
    assert off.canonical.value > 0.01 and off.canonical.standard_error > 0
    assert list(off.to_dict()) == ["p", "canonical", "marginal", "top_label"]


def test_python_statistics_in_bootstrap_and_calibration_test():
    probs, labels = softmax_predictions(80, 3, seed=26)
    accuracy = lambda rows: float(np.mean(probs[rows].argmax(axis=1) == labels[rows]))  # noqa: E731
    b = ecekde.bootstrap(80, accuracy, replicates=25, seed=4)
    assert b.estimate == accuracy(np.arange(80)) and b.lower <= b.estimate <= b.upper
    assert b.replicates[3] == accuracy(ecekde.bootstrap_indices(80, 4, 3))
    # The KDE statistic through the generic test equals the one-sweep test on the same copies.
    statistic = lambda p, y: paper_estimate(p, y, bandwidth=0.1).ce_pow_p  # noqa: E731
    generic = ecekde.calibration_test(probs, labels, statistic, replicates=20, seed=5)
    one_sweep = ecekde.calibration_test_kde(probs, labels, bandwidth=0.1, replicates=20, seed=5)
    assert generic.statistic == pytest.approx(one_sweep.statistic, rel=1e-12)
    assert generic.null_values == pytest.approx(one_sweep.null_values, rel=1e-12)
    assert generic.p_value == one_sweep.p_value
    y3 = ecekde.consistency_labels(probs, 5, 3)
    assert generic.null_values[3] == statistic(probs, y3)

    def failing(p, y):
        raise KeyError("from the statistic")
    with pytest.raises(KeyError, match="from the statistic"):
        ecekde.calibration_test(probs, labels, failing, replicates=3)


def test_readers_give_the_files_arrays_without_copying(tmp_path):
    probs, labels = softmax_predictions(20, 3, seed=27)
    p32 = np.asfortranarray(probs.astype(np.float32))
    pp, lp = save(tmp_path, "p.npy", p32), save(tmp_path, "l.npy", labels.astype(np.int32))
    rp, rl = ecekde.read_predictions(pp, lp)
    assert rp.dtype == np.float32 and rp.flags.f_contiguous and np.array_equal(rp, p32)
    assert rl.dtype == np.int32 and np.array_equal(rl, labels)
    assert ecekde._ecekde._probs_view(rp)["data"] == rp.ctypes.data
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,c,y\n" + "".join(f"{r[0]!r},{r[1]!r},{r[2]!r},{y}\n" for r, y in zip(probs, labels)))
    cp, cl = ecekde.read_predictions_csv(str(csv), "y")
    assert np.array_equal(cp, probs) and np.array_equal(cl, labels)
    with pytest.raises(ecekde.Error, match="^missing.npy: "):
        ecekde.read_probabilities("missing.npy")


def test_debiasing_functions():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    assert ecekde.research.unbiased_square_of_mean(x) == pytest.approx((x.sum() ** 2 - (x**2).sum()) / 12)
    assert ecekde.research.unbiased_covariance(x, x) == pytest.approx(np.var(x, ddof=1))
    y = np.array([0.5, 1.0, 1.5, 3.0])
    assert ecekde.research.ratio_of_means(x, y) == pytest.approx(y.mean() / x.mean())
    for scheme in ("paper", "complete"):
        assert np.isfinite(ecekde.research.ratio_of_squared_means(x, y, debiasing=scheme))
    k = np.array([0.2, 0.5, 0.9, 0.4])
    assert ecekde.research.sharpness_at(k, np.array([0, 1, 1, 0])) == ecekde.research.ratio_of_squared_means(
        k, k * np.array([0, 1, 1, 0]))
    with pytest.raises(ecekde.Error, match=r"^unknown debiasing 'full' \(expected none, paper or complete\)$"):
        ecekde.research.ratio_of_means(x, y, debiasing="full")
