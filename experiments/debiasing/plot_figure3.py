"""Plots the Figure 3 reproduction from the CSV written by ecekde_figure3.

Usage: plot_figure3.py results/figure3.csv out.png
Left: the mean estimate of the sharpness term against n under the paper's protocol (10^4 repetitions,
plain means), with the exact target and the paper's 10^8-sample ground truth. Right: |bias| on log-log
axes from the extended runs (control variate), with the predicted bias of the partially debiased ratio.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

STYLE = {
    "partial": ("partially debiased (Eq. 7)", "tab:blue", "o"),
    "paper": ("paper's debiasing (App. D)", "tab:orange", "s"),
    "complete": ("complete 2nd-order correction", "tab:green", "^"),
}


def load(path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        for key in ("n", "reps"):
            r[key] = int(r[key])
        for key in ("mean", "bias", "se", "bias_cv", "se_cv", "bias_vs_paper_truth", "predicted_bias"):
            r[key] = float(r[key])
    return rows


def series(rows, protocol, estimator, *keys):
    sel = sorted((r for r in rows if r["protocol"] == protocol and r["estimator"] == estimator), key=lambda r: r["n"])
    return [np.array([r[k] for r in sel]) for k in keys]


def main(src, out):
    rows = load(src)
    exact = rows[0]["mean"] - rows[0]["bias"]
    paper_truth = rows[0]["mean"] - rows[0]["bias_vs_paper_truth"]
    reps = max(r["reps"] for r in rows if r["protocol"] == "paper")

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    offsets = {"partial": 0.97, "paper": 1.0, "complete": 1.03}
    for name, (label, color, marker) in STYLE.items():
        n, mean, se = series(rows, "paper", name, "n", "mean", "se")
        left.errorbar(n * offsets[name], mean, yerr=2 * se, color=color, marker=marker, ms=4, capsize=2, lw=1,
                      label=label)
    left.axhline(exact, color="black", lw=1, label=f"exact target R = {exact:.6f} (quadrature)")
    left.axhline(paper_truth, color="gray", lw=1, ls="--", label=f"paper's ground truth (10^8 samples) = {paper_truth:.6f}")
    left.set_xscale("log", base=2)
    left.set_xlabel("n")
    left.set_ylabel("mean estimate of E[y|f]^2 at f = 0.17 (h = 0.5)")
    left.set_title(f"Paper's protocol: {reps} repetitions per n, ±2 SE")
    left.legend(fontsize=8)

    for name, (label, color, marker) in STYLE.items():
        n, bias, se = series(rows, "extended", name, "n", "bias_cv", "se_cv")
        significant = np.abs(bias) > 3 * se
        right.errorbar(n[significant], np.abs(bias[significant]), yerr=se[significant], color=color, marker=marker,
                       ms=5, capsize=2, lw=0, elinewidth=1, label=label)
        right.plot(n[~significant], np.abs(bias[~significant]), color=color, marker=marker, ms=5, lw=0,
                   markerfacecolor="none")
    n, predicted = series(rows, "extended", "partial", "n", "predicted_bias")
    right.plot(n, predicted, color="tab:blue", lw=1, ls=":", label="predicted b1/n + b2/n^2 (partial)")
    n, se = series(rows, "extended", "complete", "n", "se_cv")
    right.plot(n, 3 * se, color="gray", lw=1, ls="--", label="3 SE (noise floor)")
    # Reference slopes through each estimator's first point: -1, -2, -3 for orders 1/n, 1/n^2, 1/n^3.
    for name, slope in (("partial", -1), ("paper", -2), ("complete", -3)):
        y0 = abs(series(rows, "extended", name, "bias_cv")[0][0])
        right.plot(n, y0 * (n / n[0]) ** slope, color=STYLE[name][1], lw=0.8, alpha=0.35, zorder=0)
        right.annotate(f"slope {slope}", (n[2], y0 * (n[2] / n[0]) ** slope), fontsize=7, color=STYLE[name][1])
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_ylim(bottom=1e-9)
    right.set_xlabel("n")
    right.set_ylabel("|bias|")
    right.set_title("Extended runs with a control variate (hollow: < 3 SE)")
    right.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    main(*sys.argv[1:])
