"""Long computations: from Python, Ctrl-C (SIGINT, or an interrupt raised from another thread) arrives as
KeyboardInterrupt within about a second while the call runs without the GIL, and progress is reported by
a callback or a bar; the CLI ends an interrupted command with one line, exit status 128 + the signal, and
no output. Neither changes a number."""
import _thread
import os
import signal
import threading
import time

import numpy as np
import pytest

import ecekde
from conftest import softmax_predictions

LONG = dict(n=20000, k=10)  # several seconds of bandwidth search on two cores


@pytest.fixture(scope="module")
def long_input():
    return softmax_predictions(LONG["n"], LONG["k"], 3)


def interrupted_after(delay, interrupt, call):
    """Runs call() and interrupts it after `delay` seconds; returns the seconds from the interrupt to the
    KeyboardInterrupt."""
    fired = []

    def fire():
        fired.append(time.monotonic())
        interrupt()

    timer = threading.Timer(delay, fire)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.join()
    assert fired, "the call ended before it could be interrupted"
    return time.monotonic() - fired[0]


CALLS = {
    "estimate": lambda p, y: ecekde.estimate(p, y),
    "estimate paper": lambda p, y: ecekde.estimate(p, y, estimator="paper"),
    "select_bandwidth": lambda p, y: ecekde.select_bandwidth(p, y),
    "estimate_with_gradient": lambda p, y: ecekde.estimate_with_gradient(p, y),
    "bootstrap_kde": lambda p, y: ecekde.bootstrap_kde(p, y, replicates=200),
    "calibration_test_kde": lambda p, y: ecekde.calibration_test_kde(p, y, replicates=200),
    "kernel_regression": lambda p, y: ecekde.kernel_regression(p, y, p),
    "report": lambda p, y: ecekde.report(p, y),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_interrupt_from_a_thread_raises_keyboard_interrupt_promptly(long_input, name):
    probs, labels = long_input
    latency = interrupted_after(0.5, _thread.interrupt_main, lambda: CALLS[name](probs, labels))
    assert latency < 1.5, f"{name}: KeyboardInterrupt {latency:.2f} s after the interrupt"


def test_sigint_raises_keyboard_interrupt_and_the_next_call_works(long_input):
    probs, labels = long_input
    latency = interrupted_after(0.5, lambda: os.kill(os.getpid(), signal.SIGINT),
                                lambda: ecekde.estimate(probs, labels))
    assert latency < 1.5
    small_p, small_y = softmax_predictions(200, 3, 1)
    assert ecekde.estimate(small_p, small_y).n == 200  # nothing left cancelled


def test_generic_resampling_over_a_python_statistic_is_interruptible():
    probs, labels = softmax_predictions(500, 3, 2)
    slow = lambda rows: (time.sleep(0.01), float(rows.mean()))[1]
    latency = interrupted_after(0.3, _thread.interrupt_main,
                                lambda: ecekde.bootstrap(len(labels), slow, replicates=100000))
    assert latency < 1.5


def test_progress_callback_sees_rising_fractions_and_changes_nothing():
    probs, labels = softmax_predictions(6000, 4, 5)
    seen = []
    watched = ecekde.estimate(probs, labels, estimator="paper", progress=lambda f, left: seen.append((f, left)))
    plain = ecekde.estimate(probs, labels, estimator="paper", progress=False)
    assert watched.ce_pow_p == plain.ce_pow_p and watched.bandwidth == plain.bandwidth
    assert len(seen) >= 2 and seen[-1] == (1.0, 0.0)
    fractions = [f for f, _ in seen]
    assert all(0 <= f <= 1 for f in fractions)
    assert fractions == sorted(fractions)
    assert all(left is None or left >= 0 for _, left in seen)


def test_a_raising_progress_callback_stops_the_call():
    probs, labels = softmax_predictions(6000, 4, 5)

    def stop(fraction, left):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        ecekde.estimate(probs, labels, progress=stop)


def test_the_bar_goes_to_stderr(capfd):
    probs, labels = softmax_predictions(12000, 6, 5)
    ecekde.estimate(probs, labels, progress=True)
    err = capfd.readouterr().err
    assert "ecekde.estimate [" in err and err.rstrip().endswith("done")


def test_progress_must_be_a_flag_or_a_callable():
    probs, labels = softmax_predictions(50, 3, 1)
    with pytest.raises(TypeError, match="progress must be None, True, False or a callable"):
        ecekde.estimate(probs, labels, progress="yes")


def test_the_long_functions_take_progress():
    import inspect
    for name in ("estimate", "select_bandwidth", "estimate_with_gradient", "bootstrap_kde", "calibration_test_kde",
                 "kernel_regression", "report"):
        parameter = inspect.signature(getattr(ecekde, name)).parameters["progress"]
        assert parameter.default is None and parameter.kind == inspect.Parameter.KEYWORD_ONLY
        assert "progress" in getattr(ecekde, name).__doc__


CLI = os.environ.get("ECEKDE_CLI")


@pytest.fixture(scope="module")
def long_files(tmp_path_factory, long_input):
    directory = tmp_path_factory.mktemp("long")
    probs, labels = long_input
    np.save(directory / "p.npy", probs)
    np.save(directory / "y.npy", labels)
    return directory


@pytest.mark.parametrize("signal_number,status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("command", ["estimate", "report"])
def test_cli_interrupted_prints_one_line_and_writes_nothing(long_files, command, signal_number, status):
    import subprocess
    if not CLI:
        pytest.fail("ECEKDE_CLI is not set (run the tests through ctest)")
    plots = long_files / f"plots-{command}-{signal_number}"
    args = [CLI, command, "--probs", long_files / "p.npy", "--labels", long_files / "y.npy", "--progress"]
    if command == "report":
        args += ["--plot", plots]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    sent = time.monotonic()
    process.send_signal(signal_number)
    out, err = process.communicate(timeout=30)
    assert time.monotonic() - sent < 1.5
    assert process.returncode == status, err
    assert out == ""
    assert err.splitlines()[-1] == "ecekde: interrupted"
    assert err.splitlines()[-2].endswith(" ... interrupted")
    assert not plots.exists() or list(plots.iterdir()) == []


def test_cli_progress_changes_no_number(tmp_path):
    import json
    import subprocess
    probs, labels = softmax_predictions(3000, 4, 8)
    np.save(tmp_path / "p.npy", probs)
    np.save(tmp_path / "y.npy", labels)
    base = [CLI, "estimate", "--probs", tmp_path / "p.npy", "--labels", tmp_path / "y.npy", "--type", "all", "--json"]
    quiet = subprocess.run(base, capture_output=True, text=True, check=True)
    shown = subprocess.run(base + ["--progress"], capture_output=True, text=True, check=True)
    assert json.loads(quiet.stdout) == json.loads(shown.stdout)
    assert quiet.stderr == "" and len(shown.stderr.splitlines()) == 3  # canonical, marginal, top-label
