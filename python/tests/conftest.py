"""Shared helpers of the Python tests: test data, and the C++ reference program (cpp_reference.cpp), which
runs the same computations through the C++ API and prints every number exactly."""
import os
import subprocess

import numpy as np
import pytest

import ecekde

TYPES = ("canonical", "marginal", "top-label", "binary")


def softmax_predictions(n, k, seed, scale=2.0):
    """n x k float64 softmax probabilities (C order) and int64 labels drawn from a sharpened version of them
    (a miscalibrated model)."""
    rng = np.random.default_rng(seed)
    logits = scale * rng.standard_normal((n, k))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    sharp = probs**1.5
    sharp /= sharp.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(k, p=row) for row in sharp], dtype=np.int64)
    return probs, labels


def predictions_for(type, n=60, k=4, seed=0):
    """Predictions suited to `type`: one column P(y = 1) with 0/1 labels for binary, else n x k."""
    probs, labels = softmax_predictions(n, 2 if type == "binary" else k, seed)
    if type == "binary":
        return probs[:, 1].copy(), labels
    return probs, labels


def reference(*args):
    """Runs the C++ reference program; returns {field: [values]} with every value exact."""
    program = os.environ.get("ECEKDE_CPP_REFERENCE")
    if not program:
        pytest.fail("ECEKDE_CPP_REFERENCE is not set (run the tests through ctest)")
    out = subprocess.run([program, *map(str, args)], check=True, capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        name, *values = line.split()
        fields.setdefault(name, []).append([float.fromhex(v) for v in values])
    return {name: rows[0] if len(rows) == 1 else rows for name, rows in fields.items()}


def save(tmp_path, name, array):
    path = str(tmp_path / name)
    np.save(path, array)
    return path


@pytest.fixture
def files(tmp_path):
    """files(probs, labels) -> (probs_path, labels_path): the arrays saved as .npy files."""
    def write(probs, labels, prefix=""):
        return save(tmp_path, prefix + "probs.npy", probs), save(tmp_path, prefix + "labels.npy", labels)
    return write


__all__ = ["TYPES", "ecekde", "softmax_predictions", "predictions_for", "reference", "save"]
