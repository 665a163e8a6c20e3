"""One set of numbers across the front ends: the C++ API (cpp_reference.cpp), the CLI (ecekde estimate
--json) and Python give identical results on the same NPY and CSV files; bad input gives the same message;
every option of the library's option tables (include/ecekde/options.hpp) is the same option in each."""
import inspect
import json
import os
import re
import subprocess

import numpy as np
import pytest

import ecekde
from conftest import TYPES, reference, save, softmax_predictions

CLI = os.environ.get("ECEKDE_CLI")
EXAMPLES = os.environ.get("ECEKDE_EXAMPLES_DIR", "")


def cli(*args, ok=True):
    if not CLI:
        pytest.fail("ECEKDE_CLI is not set (run the tests through ctest)")
    done = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if ok is not None:
        assert (done.returncode == 0) == ok, done.stderr
    return done


def cli_results(*args):
    return json.loads(cli("estimate", *args, "--json").stdout)["results"]


def types_for(k):
    """The types `--type all` estimates for K columns."""
    return ["binary"] if k == 1 else list(TYPES) if k == 2 else [t for t in TYPES if t != "binary"]


def check_all_front_ends(probs_path, labels_path, *cli_options, p=1.0, bandwidth="auto"):
    """Every type: CLI JSON == Python's to_dict() on the files' arrays (np.load and ecekde's reader) ==
    the C++ API's numbers."""
    results = cli_results("--probs", probs_path, "--labels", labels_path, "--type", "all", *cli_options)
    read = ecekde.read_predictions(probs_path, labels_path)
    arrays = [read]
    if probs_path.endswith(".npy"):
        arrays.append((np.load(probs_path), np.load(labels_path)))
    k = read[0].shape[1]
    assert [r["type"] for r in results] == types_for(k)
    h = None if bandwidth == "auto" else bandwidth
    for from_cli in results:
        t = from_cli["type"]
        cpp = reference("estimate", probs_path, labels_path, t, p, bandwidth)
        assert (from_cli["ce_pow_p"], from_cli["ce"], from_cli["bandwidth"]) == \
            (cpp["ce_pow_p"][0], cpp["ce"][0], cpp["bandwidth"][0]), t
        for probs, labels in arrays:
            assert ecekde.estimate(probs, labels, type=t, p=p, bandwidth=h).to_dict() == from_cli, t
    return results


def test_the_bundled_example():
    # (a fixed bandwidth keeps this quick; the automatic choice is compared on the smaller files below)
    check_all_front_ends(os.path.join(EXAMPLES, "synthetic_probs.npy"), os.path.join(EXAMPLES, "synthetic_labels.npy"),
                         "--bandwidth", 0.02, bandwidth=0.02)


def test_float32_fortran_order_npy_with_int32_labels(tmp_path):
    probs, labels = softmax_predictions(150, 4, seed=30)
    pp = save(tmp_path, "p.npy", np.asfortranarray(probs.astype(np.float32)))
    lp = save(tmp_path, "l.npy", labels.astype(np.int32))
    check_all_front_ends(pp, lp, "--p", 2.5, "--bandwidth", 0.05, p=2.5, bandwidth=0.05)


def test_two_columns_and_one_column(tmp_path):
    probs, labels = softmax_predictions(120, 2, seed=31)
    results = check_all_front_ends(save(tmp_path, "p2.npy", probs), save(tmp_path, "l2.npy", labels))
    assert len(results) == 4
    check_all_front_ends(save(tmp_path, "p1.npy", probs[:, 1].copy()), save(tmp_path, "l1.npy", labels))


def test_csv_files(tmp_path):
    probs, labels = softmax_predictions(100, 3, seed=32)
    pp, lp, dp = tmp_path / "probs.csv", tmp_path / "labels.csv", tmp_path / "data.csv"
    pp.write_text("p0,p1,p2\n" + "".join(",".join(repr(v) for v in row) + "\n" for row in probs))
    lp.write_text("".join(f"{y}\n" for y in labels))
    check_all_front_ends(str(pp), str(lp), "--p", 2, p=2.0)
    dp.write_text("label,a,b,c\n" + "".join(f"{y}," + ",".join(repr(v) for v in row) + "\n"
                                            for y, row in zip(labels, probs)))
    from_cli = cli_results("--data", dp, "--label-column", "label", "--type", "marginal")
    probs_csv, labels_csv = ecekde.read_predictions_csv(str(dp), "label")
    assert np.array_equal(probs_csv, probs) and np.array_equal(labels_csv, labels)
    assert [ecekde.estimate(probs_csv, labels_csv, type="marginal").to_dict()] == from_cli
    assert [ecekde.estimate(probs, labels, type="marginal").to_dict()] == from_cli


def test_bad_input_gives_the_same_message(tmp_path):
    probs, labels = softmax_predictions(20, 3, seed=33)
    labels[4] = 7
    pp, lp = save(tmp_path, "p.npy", probs), save(tmp_path, "l.npy", labels)
    for args, kwargs in [((), {}), (("--p", 0.5), {"p": 0.5}), (("--bandwidth", -1), {"bandwidth": -1.0})]:
        if not args:
            y = labels
        else:
            y = np.where(labels == 7, 0, labels)
            lp = save(tmp_path, "l_ok.npy", y)
        stderr = cli("estimate", "--probs", pp, "--labels", lp, *args, ok=False).stderr
        with pytest.raises(ecekde.Error) as info:
            ecekde.estimate(probs, y, **kwargs)
        assert stderr == f"ecekde: error: {info.value}\n"
    with pytest.raises(ecekde.Error) as info:
        ecekde.read_probabilities(str(tmp_path / "none.npy"))
    stderr = cli("estimate", "--probs", tmp_path / "none.npy", "--labels", lp, ok=False).stderr
    assert stderr == f"ecekde: error: {info.value}\n"


def flag_args(option, value_text):
    """The command-line form of setting `option` to the text `value_text`."""
    name = option["name"].replace("_", "-")
    if option["flag"]:
        assert value_text != str(option["default"]).lower(), "a flag's example is the non-default value"
        return ["--no-" + name] if option["default"] else ["--" + name]
    return ["--" + name, value_text]


def outcome(run):
    """run()'s value, or the error message it raised."""
    try:
        return run()
    except ecekde.Error as e:
        return f"error: {e}"


def reference_outcome(*args):
    program = os.environ["ECEKDE_CPP_REFERENCE"]
    done = subprocess.run([program, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        return done.stderr.strip()
    return {line.split()[0]: [float.fromhex(v) for v in line.split()[1:]] for line in done.stdout.splitlines()}


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    probs, labels = softmax_predictions(120, 3, seed=34)
    d = tmp_path_factory.mktemp("options")
    return probs, labels, save(d, "p.npy", probs), save(d, "l.npy", labels)


def test_every_estimate_option_is_the_same_in_the_cli_python_and_cpp(small_files):
    """Generated from the option table: each option of estimate, set to its example value, gives the same
    numbers (or the same error) from `ecekde estimate`, ecekde.estimate and the C++ API."""
    probs, labels, pp, lp = small_files
    options = ecekde._ecekde._options("estimate")
    assert {"estimator", "level", "folds", "type", "p", "bandwidth", "threads"} <= {o["name"] for o in options}
    for option in options:
        name, example = option["name"], option["example"]
        assert example != option["default"], name
        done = cli("estimate", "--probs", pp, "--labels", lp, *flag_args(option, option["example_text"]), "--json",
                   ok=None)
        from_python = outcome(lambda: ecekde.estimate(probs, labels, **{name: example}).to_dict())
        from_cpp = reference_outcome("call", "estimate", pp, lp, f"{name}={option['example_text']}")
        if done.returncode != 0:
            assert done.stderr == f"ecekde: {from_python}\n" and from_cpp == from_python, name
            continue
        doc = json.loads(done.stdout)
        assert doc["options"][name] == example, name  # the JSON echoes the option as set
        (from_cli,) = doc["results"]
        assert from_cli == from_python, name
        assert [from_cli["ce_pow_p"], from_cli["ce"], from_cli["bandwidth"], from_cli.get("standard_error", 0.0)] == \
            [from_cpp["ce_pow_p"][0], from_cpp["ce"][0], from_cpp["bandwidth"][0], from_cpp["standard_error"][0]], name


PAPER_FIELDS = {
    "binned_calibration_error": lambda r: {"ce_pow_p": [r.ce_pow_p], "ce": [r.ce]},
    "mmce": lambda r: {"mmce_squared": [r.mmce_squared]},
    "fit_temperature": lambda r: {"temperature": [r.temperature]},
    "estimate_with_gradient": lambda r: {"ce_pow_p": [r.result.ce_pow_p], "ce": [r.result.ce],
                                         "bandwidth": [r.result.bandwidth],
                                         "grad_ce_pow_p": list(np.asarray(r.grad_ce_pow_p).ravel())},
    "bootstrap_kde": lambda r: {"ce_pow_p": [r.result.ce_pow_p], "ce": [r.result.ce],
                                "bandwidth": [r.result.bandwidth], "lower": [r.ce_pow_p.lower],
                                "upper": [r.ce_pow_p.upper]},
    "calibration_test_kde": lambda r: {"statistic": [r.statistic], "p_value": [r.p_value]},
    "select_bandwidth": lambda r: {"chosen": [r.chosen]},
}


@pytest.mark.parametrize("function", sorted(PAPER_FIELDS))
def test_every_option_of_the_other_functions_is_the_same_in_python_and_cpp(small_files, function):
    """Generated from the option table: each option each function reads, set to its example value, gives
    the same numbers (or error) from Python and from the C++ API set by name."""
    probs, labels, pp, lp = small_files
    fast = {"bandwidth": 0.05} if function not in ("select_bandwidth", "binned_calibration_error", "mmce",
                                                   "fit_temperature") else {}
    fast.update({"replicates": 10} if function in ("bootstrap_kde", "calibration_test_kde") else {})
    for option in ecekde._ecekde._options(function):
        name = option["name"]
        settings = dict(fast, **{name: option["example"]})
        from_python = outcome(lambda: getattr(ecekde, function)(probs, labels, **settings))  # probs as logits too
        texts = [f"{k}={v if k != name else option['example_text']}" for k, v in settings.items()]
        from_cpp = reference_outcome("call", function, pp, lp, *texts)
        if isinstance(from_python, str):
            assert from_cpp == from_python, (function, name)
            continue
        fields = PAPER_FIELDS[function](from_python)
        assert {k: from_cpp[k] for k in fields} == fields, (function, name)


def test_python_signatures_and_cli_help_come_from_the_option_table():
    help_text = cli("estimate", "--help").stdout
    for function in ecekde._ecekde._option_functions:
        signature = inspect.signature(getattr(ecekde, function))
        doc = getattr(ecekde, function).__doc__
        for option in ecekde._ecekde._options(function):
            name = option["name"]
            assert signature.parameters[name].default == option["default"], (function, name)
            assert f"\n    {name}: {option['help']}" in doc, (function, name)
    for option in ecekde._ecekde._options("estimate"):
        assert option["help"] in help_text, option["name"]
        flag = flag_args(option, "x")[0] if option["flag"] else "--" + option["name"].replace("_", "-")
        assert re.search(rf"^  {flag}\b", help_text, flags=re.M), flag
        if option["default"] is not None and not option["flag"] and option["default"] != "":
            shown = re.search(rf"^  {flag} [\w|]+=(\S+)", help_text, flags=re.M).group(1)
            assert shown == str(option["default"]).lower() or float(shown) == option["default"], flag


def test_every_report_option_gives_the_same_report_from_python_and_the_cli(small_files):
    """ecekde.report() is the library's report, as `ecekde report --json` prints it (without the file names
    and plots); generated from the report's option table, each option set to its example value."""
    probs, labels, pp, lp = small_files
    options = ecekde._ecekde._options("report")
    assert {"p", "replicates", "paper_resampling_limit", "paper_search_limit", "level", "seed", "bins", "classes",
            "renormalize", "threads", "own_rows"} == \
        {o["name"] for o in options}
    for option in options:
        settings = {"replicates": 5, option["name"]: option["example"]}
        args = [a for k, v in settings.items() if k != option["name"] for a in ("--" + k, v)]
        done = cli("report", "--probs", pp, "--labels", lp, *args, *flag_args(option, option["example_text"]),
                   "--json")
        from_cli = json.loads(done.stdout)
        del from_cli["input"]["probs"], from_cli["input"]["labels"]
        assert ecekde.report(probs, labels, **settings) == from_cli, option["name"]


def test_the_report_prints_what_the_cli_prints(small_files):
    """ecekde.report() of the files: str() is the text of `ecekde report`, to_json() its --json document;
    of the same arrays, the same text under a heading without file names."""
    probs, labels, pp, lp = small_files
    args = ("--probs", pp, "--labels", lp, "--replicates", 5, "--p", 2)
    from_files = ecekde.report(pp, lp, replicates=5, p=2)
    assert str(from_files) == cli("report", *args).stdout
    assert from_files.to_json() + "\n" == cli("report", *args, "--json").stdout
    heading, rest = cli("report", *args).stdout.split("\n", 1)
    assert heading == f"ecekde report: probs {pp}, labels {lp}"
    assert str(ecekde.report(probs, labels, replicates=5, p=2)) == "ecekde report\n" + rest


def test_the_report_round_trips_and_shows_its_figures(small_files):
    """to_dict() is to_json() read back and the mapping itself (ecekde.report returned that dict before); the
    figures are attributes, and the notebook's HTML tables show them as the text does."""
    probs, labels, pp, lp = small_files
    r = ecekde.report(probs, labels, replicates=5)
    assert json.loads(r.to_json()) == r.to_dict() == r
    assert r["summary"]["accuracy"] == r.summary.accuracy and r.input.n == 120
    assert [e.type for e in r.crossfit] == [e["type"] for e in r["kde"]] == ["canonical", "marginal", "top-label"]
    assert r.crossfit[0].ce_interval.lower <= r.crossfit[0].ce <= r.crossfit[0].ce_interval.upper
    assert r.kde[0].calibration_test.p_value == r["kde"][0]["calibration_test"]["p_value"]
    html = r._repr_html_()
    text = str(r)
    for figure in [r.summary.accuracy, r.summary.brier, *(e.ce for e in r.crossfit), *(e.ce for e in r.kde),
                   *(e.ce for e in r.binned), r.kde[0].interval.ce.lower, r.mmce.mmce]:
        assert f"{figure:.4g}" in html and f"{figure:.4g}" in text, figure
    assert html.count("<table>") == 5 and "<th style=\"text-align: left\">type</th>" in html
    assert ecekde.report(probs[:, :1] / probs[:, :1].max(), (labels == 0).astype(np.int64), replicates=0).mmce is None


def test_report_input_errors_read_as_the_clis(small_files, tmp_path):
    probs, labels, pp, lp = small_files
    missing = str(tmp_path / "missing.npy")
    done = cli("report", "--probs", missing, "--labels", lp, ok=False)
    with pytest.raises(ecekde.Error) as info:
        ecekde.report(missing, lp)
    assert done.stderr == f"ecekde: error: {info.value}\n"
    bad = probs.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ecekde.Error, match=r"^probs row 3, column 1: value nan is not finite$"):
        ecekde.report(bad, labels)
    with pytest.raises(TypeError, match="both as arrays or both as file paths"):
        ecekde.report(probs, lp)


def test_every_fit_temperature_and_synth_option_is_the_same_in_the_cli_and_python(small_files, tmp_path):
    """The other CLI commands, generated from their option tables: each option at its example value gives
    the same numbers (or error) from `ecekde fit-temperature` / `ecekde synth` and from Python."""
    probs, labels, pp, lp = small_files
    logits = np.log(probs)
    zp = save(tmp_path, "z.npy", logits)
    for option in ecekde._ecekde._options("fit_temperature"):
        done = cli("fit-temperature", "--logits", zp, "--labels", lp, *flag_args(option, option["example_text"]),
                   "--json", ok=None)
        fit = outcome(lambda: ecekde.fit_temperature(logits, labels, **{option["name"]: option["example"]}))
        if done.returncode != 0:
            assert done.stderr == f"ecekde: {fit}\n", option["name"]
            continue
        doc = json.loads(done.stdout)
        assert (doc["temperature"], doc["nll"]) == (fit.temperature, fit.nll), option["name"]
    quick = {"canonical_samples": 2048, "inner_samples": 64, "jackknife_groups": 4}
    for option in ecekde._ecekde._options("synthetic_ground_truth"):
        name = option["name"]
        if name in ("p", "seed"):  # the CLI's own forms: a list of p, one seed for data and truth
            continue
        settings = dict(quick, **{name: option["example"]})
        args = [a for k, v in settings.items() for a in ("--" + k.replace("_", "-"), v)]
        done = cli("synth", "--n", 50, "--probs", tmp_path / "sp.npy", "--labels", tmp_path / "sl.npy", *args,
                   "--json")
        truth = json.loads(done.stdout)["ground_truth"][0]
        expected = ecekde.synthetic_ground_truth(**settings)
        assert (truth["canonical"]["value"], truth["marginal"]["value"], truth["top-label"]["value"]) == \
            (expected.canonical.value, expected.marginal.value, expected.top_label.value), name
        model = {k: settings[k] for k in ("classes", "t1", "t2") if k in settings}
        data = ecekde.generate_synthetic(50, **model, **({"threads": settings["threads"]} if "threads" in settings else {}))
        assert np.array_equal(np.load(tmp_path / "sp.npy"), data.probs), name
