"""Plots the conditional expectations behind the marginal and top-label ground truths.

Usage: plot_curves.py results/curves.csv out.png
One column per K: E[y_c | f_c = s] (left axis, line: the integrator; dots: binned means of the
simulation) against the diagonal, and the density of the score (right axis, shaded); top row for one
class's score f_c, bottom row for the top score max f.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(src, out):
    rows = list(csv.DictReader(open(src)))
    ks = sorted({int(r["classes"]) for r in rows})
    fig, axes = plt.subplots(2, len(ks), figsize=(5.5 * len(ks), 8), squeeze=False)
    for col, k in enumerate(ks):
        sel = [r for r in rows if int(r["classes"]) == k]
        s = np.array([float(r["s"]) for r in sel])
        for row, (kind, title) in enumerate((("class", "one class: E[y_c | f_c = s]"),
                                             ("top", "top label: P(y = argmax f | max f = s)"))):
            ax = axes[row][col]
            mean = np.array([float(r[f"{kind}_mean"]) for r in sel])
            density = np.array([float(r[f"{kind}_density"]) for r in sel])
            binned = np.array([float(r[f"binned_{kind}_mean"]) for r in sel])
            count = np.array([float(r[f"binned_{kind}_count"]) for r in sel])
            keep = count >= 200
            ax.plot([0, 1], [0, 1], color="gray", lw=0.8, ls="--", label="calibrated (diagonal)")
            ax.plot(s, mean, color="tab:red", lw=1.5, label="integrator")
            ax.plot(s[keep][::4], binned[keep][::4], "k.", ms=3, label="simulation, binned (2^26 samples)")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_xlabel("s")
            ax.set_title(f"K = {k}, {title}", fontsize=10)
            twin = ax.twinx()
            twin.fill_between(s, density, color="tab:blue", alpha=0.15, lw=0)
            twin.set_yscale("log")
            twin.set_ylim(1e-3, 1e3)
            twin.set_ylabel("density of the score (shaded)", fontsize=8)
            if row == 0 and col == 0:
                ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main(*sys.argv[1:])
