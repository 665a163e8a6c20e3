#!/usr/bin/env python3
"""Re-scores the committed Fashion-MNIST test predictions (XE and KDE-XE ResNet-8) with the default
(crossfit) estimator and the paper's, before and after temperature scaling (docs/history.md, 7.7).
T is fitted on one half of the test set (even rows) and applied to the other (odd rows), then the
halves swap, so no estimate sees the labels T was fitted on. Usage (repository root, after make build):
  PYTHONPATH=build/python /usr/bin/python3 experiments/real/rescore.py"""
import numpy as np

import ecekde

labels = np.load("examples/fashion_mnist_labels.npy")
print("| model | half | T | type | crossfit CE_1 before [95%] | after [95%] | paper CE_1 before | after |")
print("|---|---|---|---|---|---|---|---|")
for name in ["xe", "kde_xe"]:
    probs = np.load(f"examples/fashion_mnist_{name}_probs.npy").astype(np.float64)
    probs /= probs.sum(1, keepdims=True)
    logits = np.log(np.maximum(probs, 1e-300))
    for fit_rows, eval_rows, half in [(slice(0, None, 2), slice(1, None, 2), "odd"), (slice(1, None, 2), slice(0, None, 2), "even")]:
        t = ecekde.fit_temperature(logits[fit_rows], labels[fit_rows]).temperature
        before = probs[eval_rows]
        after = ecekde.apply_temperature(logits[eval_rows], t)
        y = labels[eval_rows]
        for typ in ["canonical", "marginal", "top-label"]:
            cells = []
            for p in (before, after):
                r = ecekde.estimate(p, y, type=typ, p=1)
                cells.append(f"{r.ce:.4f} [{r.ce_interval.lower:.4f}, {r.ce_interval.upper:.4f}]")
            for p in (before, after):
                cells.append(f"{ecekde.estimate(p, y, type=typ, p=1, estimator='paper').ce:.4f}")
            print(f"| {name} | {half} | {t:.3f} | {typ} | " + " | ".join(cells) + " |", flush=True)
