"""Summarises the real-prediction study written by ecekde_real.

Usage: summarize.py RESULTS_DIR FIGURE_PREFIX MODEL [MODEL ...]
Reads RESULTS_DIR/MODEL.csv for each model; writes RESULTS_DIR/summary.md and the figures
FIGURE_PREFIX_error.png (mean |subset estimate - all-points estimate| against the subset size, log-log,
with the fitted slope) and FIGURE_PREFIX_estimates.png (mean subset estimate ± sd against the size, with
the all-points value), for CE_1 and the estimators kde-mle (the paper's), kde-reg, bin-15 and bin-doane.
Each estimator is compared with its own value on all points.
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

TYPES = ["canonical", "marginal", "top-label"]
SHOWN = ["kde-mle", "kde-reg", "bin-15", "bin-doane"]
TABLED = ["kde-mle", "kde-reg", "kde-mle-debiased", "kde-reg-debiased", "bin-5", "bin-15", "bin-doane"]
COLOR = {"kde-mle": "tab:red", "kde-reg": "tab:blue", "bin-15": "#777777", "bin-doane": "black"}
LABEL = {"kde-mle": "ECE^KDE, LOO-likelihood h (paper)", "kde-reg": "ECE^KDE, loo-regression h",
         "bin-15": "ECE^bin, 15 bins", "bin-doane": "ECE^bin, Doane"}


def load(path):
    ref, sub = {}, defaultdict(list)
    classes = None
    for r in csv.DictReader(open(path)):
        key = (r["type"], float(r["p"]), r["estimator"])
        classes = int(r["classes"])
        if r["subset"] == "all":
            ref[key] = (float(r["value"]), int(r["n"]))
        else:
            sub[key + (int(r["n"]),)].append(float(r["value"]))
    return ref, sub, classes


def slope(ns, errs):
    pts = [(math.log10(n), math.log10(e)) for n, e in zip(ns, errs) if e > 0]
    if len(pts) < 3:
        return float("nan")
    x, y = np.array(pts).T
    return np.polyfit(x, y, 1)[0]


def series(ref, sub, t, p, est):
    total, _ = ref[(t, p, est)]
    sizes = sorted(n for (tt, pp, e, n) in sub if (tt, pp, e) == (t, p, est))
    vals = [np.array(sub[(t, p, est, n)]) for n in sizes]
    return sizes, total, vals


def main(argv):
    src, prefix, models = argv[1], argv[2], argv[3:]
    data = {m: load(f"{src}/{m}.csv") for m in models}
    lines = []
    for m in models:
        ref, sub, classes = data[m]
        n_all = next(iter(ref.values()))[1]
        for p in (1.0, 2.0):
            sizes = sorted({k[3] for k in sub})
            lines.append(f"\n**{m}** (K = {classes}, all points n = {n_all}), CE_{int(p)}^{int(p)}: value on all "
                         "points; mean |subset - all| per subset size; log-log slope\n")
            lines.append("| type | estimator | all points | " + " | ".join(f"n = {n}" for n in sizes) + " | slope |")
            lines.append("|---|---|---|" + "---|" * len(sizes) + "---|")
            for t in TYPES:
                for est in TABLED:
                    if (t, p, est) not in ref:
                        continue
                    ns, total, vals = series(ref, sub, t, p, est)
                    errs = [np.abs(v - total).mean() for v in vals]
                    lines.append(f"| {t} | {est} | {total:.4f} | " + " | ".join(f"{e:.4f}" for e in errs) +
                                 f" | {slope(ns, errs):.2f} |")
        counts = sorted({len(v) for v in sub.values()})
        lines.append(f"\nSubsets per size: {', '.join(map(str, counts))} (more at small sizes).\n")
    open(f"{src}/summary.md", "w").write("\n".join(lines) + "\n")

    for kind in ("error", "estimates"):
        fig, axes = plt.subplots(len(models), 3, figsize=(15, 4.2 * len(models)), squeeze=False)
        for i, m in enumerate(models):
            ref, sub, classes = data[m]
            for j, t in enumerate(TYPES):
                ax = axes[i][j]
                for est in SHOWN:
                    if (t, 1.0, est) not in ref:
                        continue
                    ns, total, vals = series(ref, sub, t, 1.0, est)
                    if kind == "error":
                        errs = [np.abs(v - total).mean() for v in vals]
                        ax.plot(ns, errs, color=COLOR[est], marker="o", ms=3,
                                label=f"{LABEL[est]} (slope {slope(ns, errs):.2f})")
                    else:
                        ax.errorbar(ns, [v.mean() for v in vals], yerr=[v.std(ddof=1) for v in vals], color=COLOR[est],
                                    marker="o", ms=3, capsize=2, label=LABEL[est])
                        ax.axhline(total, color=COLOR[est], ls=":", lw=1)
                ax.set_xscale("log")
                if kind == "error":
                    ax.set_yscale("log")
                    ax.set_ylabel("mean |subset - all points| of CE_1")
                else:
                    ax.set_ylabel("CE_1 estimate (dotted: all points)")
                ax.set_xlabel("subset size n")
                ax.set_title(f"{m} (K = {classes}): {t}")
                ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(f"{prefix}_{kind}.png", dpi=100)


if __name__ == "__main__":
    main(sys.argv)
