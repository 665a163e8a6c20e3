#!/usr/bin/env python3
"""Re-scores the committed Fashion-MNIST test predictions (XE and KDE-XE ResNet-8) with the default
(crossfit) estimator and the paper's, before and after temperature scaling (docs/history.md, 7.7).
T is fitted on one half of the test set (even rows) and applied to the other (odd rows), then the
halves swap, so no estimate sees the labels T was fitted on. Prints a markdown table and writes it as CSV
to experiments/real/results/rescore.csv (docs/validation.md's table of it). Usage (repository root, after
make build):
  PYTHONPATH=build/python /usr/bin/python3 experiments/real/rescore.py"""
import csv

import numpy as np

import ecekde

OUT = "experiments/real/results/rescore.csv"
labels = np.load("examples/fashion_mnist_labels.npy")
print("| model | half | T | type | crossfit CE_1 before [95%] | after [95%] | paper CE_1 before | after |")
print("|---|---|---|---|---|---|---|---|")
rows = []
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
            row = {"model": name, "half": half, "temperature": f"{t:.6g}", "type": typ}
            for when, p in (("before", before), ("after", after)):
                r = ecekde.estimate(p, y, type=typ, p=1)
                row[f"crossfit_{when}"] = f"{r.ce:.6g}"
                row[f"crossfit_{when}_lower"] = f"{r.ce_interval.lower:.6g}"
                row[f"crossfit_{when}_upper"] = f"{r.ce_interval.upper:.6g}"
            for when, p in (("before", before), ("after", after)):
                row[f"paper_{when}"] = f"{ecekde.estimate(p, y, type=typ, p=1, estimator='paper').ce:.6g}"
            rows.append(row)
            print(f"| {name} | {half} | {t:.3f} | {typ} | {float(row['crossfit_before']):.4f} "
                  f"[{float(row['crossfit_before_lower']):.4f}, {float(row['crossfit_before_upper']):.4f}] | "
                  f"{float(row['crossfit_after']):.4f} [{float(row['crossfit_after_lower']):.4f}, "
                  f"{float(row['crossfit_after_upper']):.4f}] | {float(row['paper_before']):.4f} | "
                  f"{float(row['paper_after']):.4f} |", flush=True)
with open(OUT, "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
