"""ecekde.torch.CalibrationMetric and the communicator keyword under torch.distributed: two processes on
the gloo backend (CPU) give exactly the single-process result on the concatenated predictions, and bad
input on one rank raises on both with the same message."""
import os
import tempfile

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import ecekde
import ecekde.torch as et
from conftest import softmax_predictions

SPLIT = 170  # rank 0 gets rows [0, SPLIT), rank 1 the rest: uneven shares
CASES = [dict(), dict(type="marginal"), dict(estimator="paper", type="top-label", p=2.0), dict(type="binary")]
OWN_ROWS = {"own_crossfit": dict(), "own_paper": dict(estimator="paper"), "own_paper_h": dict(estimator="paper", bandwidth=0.1),
            "own_marginal": dict(type="marginal"), "own_top_label": dict(type="top-label", estimator="paper")}


def data_for(case):
    probs, labels = softmax_predictions(400, 2 if case.get("type") == "binary" else 4, seed=7)
    return (probs[:, 1].copy() if case.get("type") == "binary" else probs), labels


def fields(result):
    classes = [] if result.class_ce_pow_p is None else list(result.class_ce_pow_p)
    values = [result.ce_pow_p, result.ce, result.bandwidth, result.standard_error, *classes]
    return [np.nan if v is None else float(v) for v in values]


def _rank_main(rank, init_file, out_dir):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    torch.set_num_threads(1)
    outcomes = {}
    for i, case in enumerate(CASES):
        probs, labels = data_for(case)
        mine = slice(0, SPLIT) if rank == 0 else slice(SPLIT, None)
        metric = et.CalibrationMetric(threads=1, **case)
        p, y = torch.from_numpy(probs[mine]), torch.from_numpy(labels[mine])
        for start in range(0, len(y), 64):  # batches
            metric.update(p[start:start + 64], y[start:start + 64])
        outcomes[f"case{i}"] = np.array(fields(metric.compute()))
    # A rank without batches contributes nothing.
    probs, labels = data_for({})
    metric = et.CalibrationMetric(threads=1)
    if rank == 0:
        metric.update(probs[:120], labels[:120])
    outcomes["one_rank"] = np.array(fields(metric.compute()))
    # The communicator keyword directly: every rank passes all the data.
    probs, labels = data_for({})
    boot = ecekde.bootstrap_kde(probs, labels, replicates=6, threads=1, communicator=et.TorchCommunicator())
    outcomes["bootstrap"] = np.array(boot.ce_pow_p.replicates)
    # own_rows: each rank passes only its own rows, and the ring's blocks pass point to point.
    mine = slice(0, SPLIT) if rank == 0 else slice(SPLIT, None)
    for name, extra in OWN_ROWS.items():
        own = ecekde.estimate(probs[mine], labels[mine], threads=1, own_rows=True,
                              communicator=et.TorchCommunicator(), **extra)
        outcomes[name] = np.array(fields(own))
    # A communicator with all_sum only: the ring's passes go through it (Communicator's default pass).
    sums_only = type("SumsOnly", (), {})()
    torch_comm = et.TorchCommunicator()
    sums_only.rank, sums_only.size, sums_only.all_sum = torch_comm.rank, torch_comm.size, torch_comm.all_sum
    outcomes["own_sums_only"] = np.array(fields(ecekde.estimate(probs[mine], labels[mine], threads=1, own_rows=True,
                                                                communicator=sums_only)))
    test = ecekde.calibration_test_kde(probs[mine], labels[mine], bandwidth=0.1, replicates=8, seed=3, threads=1,
                                       own_rows=True, communicator=et.TorchCommunicator())
    outcomes["own_test"] = np.array([test.statistic, test.p_value, *test.null_values])
    boot = ecekde.bootstrap_kde(probs[mine], labels[mine], replicates=6, seed=4, threads=1, own_rows=True,
                                communicator=et.TorchCommunicator())
    outcomes["own_bootstrap"] = np.array([boot.result.ce_pow_p, boot.ce.lower, boot.ce.upper, *boot.ce_pow_p.replicates])
    test = ecekde.calibration_test_kde(probs[mine], labels[mine], type="marginal", bandwidth=0.1, replicates=5, seed=2,
                                       threads=1, own_rows=True, communicator=et.TorchCommunicator())
    boot = ecekde.bootstrap_kde(probs[mine], labels[mine], type="top-label", replicates=5, seed=2, threads=1,
                                own_rows=True, communicator=et.TorchCommunicator())
    outcomes["own_one_dimensional"] = np.array([test.statistic, test.p_value, *test.null_values,
                                                boot.result.ce_pow_p, *boot.ce_pow_p.replicates])
    grad = ecekde.estimate_with_gradient(probs[mine], labels[mine], bandwidth=0.1, threads=1, own_rows=True,
                                         communicator=et.TorchCommunicator())
    outcomes["own_gradient_value"] = np.array([grad.result.ce_pow_p])
    outcomes["own_gradient"] = np.asarray(grad.grad_ce_pow_p)
    queries = probs[:5]
    regression = ecekde.kernel_regression(probs[mine], labels[mine], queries=queries, bandwidth=0.1, threads=1,
                                          own_rows=True, communicator=et.TorchCommunicator())
    outcomes["own_regression"] = np.concatenate([np.ravel(regression.expectation), np.ravel(regression.log_density)])
    selection = ecekde.select_bandwidth(probs[mine], type="marginal", threads=1, own_rows=True,
                                        communicator=et.TorchCommunicator())
    outcomes["own_selection"] = np.array([selection.chosen, *selection.score])
    metric = et.CalibrationMetric(threads=1, own_rows=True)  # rank 1 without batches: none of the rows
    if rank == 0:
        metric.update(probs[:300], labels[:300])
    outcomes["own_metric"] = np.array(fields(metric.compute()))
    # Bad input on rank 1 only: both ranks raise, with the same message.
    metric = et.CalibrationMetric(threads=1)
    bad = probs[:50].copy()
    if rank == 1:
        bad[7, 0] = np.nan
    metric.update(bad, labels[:50])
    try:
        metric.compute()
        outcomes["error"] = np.array([], dtype="U1")
    except ecekde.Error as e:
        outcomes["error"] = np.array([str(e)])
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **outcomes)
    dist.destroy_process_group()


def test_two_processes_match_one():
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_rank_main, args=(os.path.join(tmp, "init"), tmp), nprocs=2, join=True)
        ranks = [np.load(os.path.join(tmp, f"rank{r}.npz")) for r in range(2)]
        for i, case in enumerate(CASES):
            probs, labels = data_for(case)
            alone = np.array(fields(ecekde.estimate(probs, labels, threads=1, **case)))
            for r in range(2):
                assert np.array_equal(ranks[r][f"case{i}"], alone, equal_nan=True), (case, r, ranks[r][f"case{i}"], alone)
        probs, labels = data_for({})
        alone = np.array(fields(ecekde.estimate(probs[:120], labels[:120], threads=1)))
        for r in range(2):
            assert np.array_equal(ranks[r]["one_rank"], alone)
        alone = ecekde.bootstrap_kde(probs, labels, replicates=6, threads=1).ce_pow_p.replicates
        for r in range(2):
            assert np.array_equal(ranks[r]["bootstrap"], alone)
        for name, extra in OWN_ROWS.items():  # canonical's ring: to rounding; the other types bitwise
            alone = np.array(fields(ecekde.estimate(probs, labels, threads=1, **extra)))
            for r in range(2):
                if "type" in extra:
                    assert np.array_equal(ranks[r][name], alone, equal_nan=True), (name, ranks[r][name], alone)
                else:
                    np.testing.assert_allclose(ranks[r][name], alone, rtol=1e-12, atol=0, err_msg=name)
        alone = np.array(fields(ecekde.estimate(probs, labels, threads=1)))
        for r in range(2):
            np.testing.assert_allclose(ranks[r]["own_sums_only"], alone, rtol=1e-12, atol=0, err_msg="own_sums_only")
        test = ecekde.calibration_test_kde(probs, labels, bandwidth=0.1, replicates=8, seed=3, threads=1)
        alone = np.array([test.statistic, test.p_value, *test.null_values])
        for r in range(2):  # the statistic and the copies' values on the ring: to rounding; the p-value exactly
            np.testing.assert_allclose(ranks[r]["own_test"], alone, rtol=1e-12, atol=0, err_msg="own_test")
            assert ranks[r]["own_test"][1] == alone[1]
        boot = ecekde.bootstrap_kde(probs, labels, replicates=6, seed=4, threads=1)
        alone = np.array([boot.result.ce_pow_p, boot.ce.lower, boot.ce.upper, *boot.ce_pow_p.replicates])
        for r in range(2):  # the ring's bootstrap: to rounding
            np.testing.assert_allclose(ranks[r]["own_bootstrap"], alone, rtol=1e-12, atol=0, err_msg="own_bootstrap")
        test = ecekde.calibration_test_kde(probs, labels, type="marginal", bandwidth=0.1, replicates=5, seed=2, threads=1)
        boot = ecekde.bootstrap_kde(probs, labels, type="top-label", replicates=5, seed=2, threads=1)
        alone = np.array([test.statistic, test.p_value, *test.null_values, boot.result.ce_pow_p, *boot.ce_pow_p.replicates])
        for r in range(2):  # the one-dimensional types' resampling with own rows: bitwise
            assert np.array_equal(ranks[r]["own_one_dimensional"], alone), (ranks[r]["own_one_dimensional"], alone)
        grad = ecekde.estimate_with_gradient(probs, labels, bandwidth=0.1, threads=1)
        alone = np.asarray(grad.grad_ce_pow_p)
        for r in range(2):  # the ring's gradient: each rank its own rows', to rounding
            mine = slice(0, SPLIT) if r == 0 else slice(SPLIT, None)
            np.testing.assert_allclose(ranks[r]["own_gradient_value"], [grad.result.ce_pow_p], rtol=1e-12, atol=0)
            np.testing.assert_allclose(ranks[r]["own_gradient"], alone[mine], rtol=0, atol=1e-12 * np.abs(alone).max())
        regression = ecekde.kernel_regression(probs, labels, queries=probs[:5], bandwidth=0.1, threads=1)
        alone = np.concatenate([np.ravel(regression.expectation), np.ravel(regression.log_density)])
        for r in range(2):  # the ring's kernel regression: to rounding
            np.testing.assert_allclose(ranks[r]["own_regression"], alone, rtol=1e-12, atol=0, err_msg="own_regression")
        selection = ecekde.select_bandwidth(probs, type="marginal", threads=1)
        alone = np.array([selection.chosen, *selection.score])
        for r in range(2):  # marginal's owned classes: bitwise
            assert np.array_equal(ranks[r]["own_selection"], alone), (ranks[r]["own_selection"], alone)
        alone = np.array(fields(ecekde.estimate(probs[:300], labels[:300], threads=1)))
        for r in range(2):
            np.testing.assert_allclose(ranks[r]["own_metric"], alone, rtol=1e-12, atol=0, err_msg="own_metric")
        messages = [str(ranks[r]["error"][0]) for r in range(2)]
        assert messages[0] == messages[1]
        assert messages[0].startswith("rank 1: probs row 7") and "not finite" in messages[0], messages[0]


def test_metric_alone_is_estimate_of_all_batches():
    probs, labels = softmax_predictions(300, 3, seed=2)
    metric = et.CalibrationMetric(type="marginal", threads=1)
    for start in range(0, 300, 100):
        metric.update(torch.from_numpy(probs[start:start + 100]), torch.from_numpy(labels[start:start + 100]))
    assert fields(metric.compute()) == fields(ecekde.estimate(probs, labels, type="marginal", threads=1))
    metric.reset()
    with pytest.raises(ecekde.Error, match="no predictions"):
        metric.compute()
    metric.update(probs[:10], labels[:9])
    with pytest.raises(ecekde.Error, match=r"update: probs must be n x K .* \(batch 0\)"):
        metric.compute()
    with pytest.raises(TypeError, match="unknown options"):
        et.CalibrationMetric(bandwith=0.1)
