"""One set of numbers across the front ends: the C++ API (cpp_reference.cpp), the CLI (ecekde estimate
--json) and Python give identical results on the same NPY and CSV files; bad input gives the same message;
the CLI and Python share their parameters' names, defaults and help texts (include/ecekde/parameters.hpp)."""
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


def test_cli_and_python_share_parameter_names_defaults_and_help():
    help_text = cli("estimate", "--help").stdout
    doc = ecekde.estimate.__doc__
    defaults = ecekde._ecekde._estimate_defaults()
    table = ecekde._ecekde._estimate_parameters()
    assert list(table) == ["type", "p", "bandwidth", "criterion", "grid", "refine", "max_rows", "form",
                           "renormalize", "threads", "block_size", "isa"]
    for name, help_line in table.items():
        assert f"\n    {name}: {help_line}" in doc, name
        assert help_line in help_text, name
        flag = "--no-refine" if name == "refine" else "--" + name.replace("_", "-")
        assert re.search(rf"^  {flag}\b", help_text, flags=re.M), flag
    # The defaults the CLI shows are the Python defaults (both come from EstimateOptions{}).
    shown = dict(re.findall(r"^  --([\w-]+) [\w|]+=(\S+)", help_text, flags=re.M))
    assert shown["type"] == defaults["type"] and float(shown["p"]) == defaults["p"]
    assert shown["criterion"] == defaults["criterion"] and int(shown["threads"]) == defaults["threads"]
    assert int(shown["block-size"]) == defaults["block_size"] and int(shown["max-rows"]) == defaults["max_rows"]
    assert shown["form"] == defaults["form"]
    assert shown["bandwidth"] == "auto" and defaults["bandwidth"] is None
