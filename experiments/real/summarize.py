"""Summarises the real-prediction study written by ecekde_real.

Usage: summarize.py RESULTS_DIR FIGURE_PREFIX MODEL [MODEL ...]
Reads RESULTS_DIR/MODEL.csv for each model; writes RESULTS_DIR/summary.md and the figures
FIGURE_PREFIX_error.png (|bias| = |mean subset estimate - all-points estimate|, solid, with its fitted
slope, and the paper's mean |subset estimate - all-points estimate|, dashed, against the subset size,
log-log, with a slope -0.5 guide) and FIGURE_PREFIX_estimates.png (mean subset estimate ± sd against the
size, with the all-points value, dotted and as a star at n = N), for CE_1 and the estimators kde-mle (the
paper's), kde-reg, bin-15 and bin-doane. Each estimator is compared with its own value on all points.

summary.md has, per model and p: the mean subset estimate per size; the bias (mean - all points; "~" marks
|bias| < 2 standard errors of the mean, i.e. not resolved from 0), the log-log slope of |bias| against n
over all sizes and over n <= 1000, and the exponent a of the fit bias(n) = c (n^-a - N^-a), which accounts
for the subsets being drawn from the N points themselves (the bias relative to the all-points value
vanishes at n = N, which steepens a plain log-log slope near N); the paper's mean |subset - all points|
with its two slopes; then, per model, the median bandwidths of kde-mle and kde-reg per size. A slope or
exponent is given only where the bias has one sign at every size and is resolved at one size at least; "*"
marks those where it is not resolved at every size.
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
SMALL = 1000  # the second slope: sizes up to this, where the subsets are a small part of the N points
TABLED = ["kde-mle", "kde-reg", "kde-mle-debiased", "kde-reg-debiased", "bin-5", "bin-10", "bin-15", "bin-20",
          "bin-doane"]
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


def bandwidths(path):
    """Median bandwidth of kde-mle and kde-reg (p = 1) per type and size ("all" for all points)."""
    h = defaultdict(list)
    for r in csv.DictReader(open(path)):
        if r["p"] == "1" and r["estimator"] in ("kde-mle", "kde-reg"):
            h[(r["type"], r["estimator"], r["subset"] == "all", int(r["n"]))].append(float(r["bandwidth"]))
    return {k: float(np.median(v)) for k, v in h.items()}


def slope(ns, errs):
    pts = [(math.log10(n), math.log10(e)) for n, e in zip(ns, errs) if e > 0]
    if len(pts) < 3:
        return float("nan")
    x, y = np.array(pts).T
    return np.polyfit(x, y, 1)[0]


def corrected_exponent(ns, bias, n_all):
    """a of bias(n) = c (n^-a - N^-a), least squares on log |bias| (grid over a; c in closed form). 0 where
    the best a is the grid's lowest, 0.005: the fit goes to the limit a -> 0, bias proportional to
    log(N / n), which falls slower than any power of n."""
    if not (all(b > 0 for b in bias) or all(b < 0 for b in bias)):
        return float("nan")
    y = np.log(np.abs(bias))
    ns = np.array(ns, dtype=float)
    best = (float("inf"), float("nan"))
    grid = np.arange(0.005, 3.0, 0.005)
    for a in grid:
        g = np.log(ns ** -a - float(n_all) ** -a)
        r = y - g
        sse = ((r - r.mean()) ** 2).sum()
        best = min(best, (sse, a))
    return 0.0 if best[1] == grid[0] else best[1]


def bias_slope(ns, bias):
    if not (all(b > 0 for b in bias) or all(b < 0 for b in bias)):
        return float("nan")
    return slope(ns, np.abs(bias))


def fmt(x):
    return "—" if math.isnan(x) else "≈0" if x == 0.0 else f"{x:.2f}"


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
        sizes = sorted({k[3] for k in sub})
        head = " | ".join(f"n = {n}" for n in sizes)
        rule = "---|" * len(sizes)
        for p in (1.0, 2.0):
            ce = f"CE_{int(p)}^{int(p)}"
            means, biases, errors = [], [], []
            for t in TYPES:
                for est in TABLED:
                    if (t, p, est) not in ref:
                        continue
                    ns, total, vals = series(ref, sub, t, p, est)
                    bias = [v.mean() - total for v in vals]
                    se = [v.std(ddof=1) / math.sqrt(len(v)) for v in vals]
                    errs = [np.abs(v - total).mean() for v in vals]
                    means.append(f"| {t} | {est} | {total:.4f} | " + " | ".join(f"{v.mean():.4f}" for v in vals) +
                                 " |")
                    unresolved = [abs(b) < 2 * e for b, e in zip(bias, se)]
                    low = [i for i, n in enumerate(ns) if n <= SMALL]
                    fits = [bias_slope(ns, bias), bias_slope([ns[i] for i in low], [bias[i] for i in low]),
                            corrected_exponent(ns, bias, n_all)]
                    if all(unresolved):
                        fits = [float("nan")] * 3
                    flag = "*" if any(unresolved) and not all(unresolved) else ""
                    biases.append(f"| {t} | {est} | " +
                                  " | ".join(f"{b:+.4f}" + ("~" if u else "") for b, u in zip(bias, unresolved)) +
                                  " | " + " | ".join(fmt(f) + ("" if math.isnan(f) else flag) for f in fits) + " |")
                    low_slope = slope([ns[i] for i in low], [errs[i] for i in low])
                    errors.append(f"| {t} | {est} | " + " | ".join(f"{e:.4f}" for e in errs) +
                                  f" | {fmt(slope(ns, errs))} | {fmt(low_slope)} |")
            lines.append(f"\n**{m}** (K = {classes}, all points N = {n_all}), {ce}: value on all points and mean "
                         "subset estimate per subset size\n")
            lines.append(f"| type | estimator | all points | {head} |")
            lines.append(f"|---|---|---|{rule}")
            lines += means
            lines.append(f"\n**{m}**, {ce}: bias = mean subset estimate - all points (~: under 2 standard errors); "
                         f"log-log slope of |bias| over all sizes and over n <= {SMALL}; exponent a of "
                         "bias = c (n^-a - N^-a) (≈0: the fit goes to a -> 0, bias proportional to log(N / n)); "
                         "these only where the bias has one sign at every size and is resolved at some (*: not at "
                         "every size)\n")
            lines.append(f"| type | estimator | {head} | slope | slope n <= {SMALL} | a |")
            lines.append(f"|---|---|{rule}---|---|---|")
            lines += biases
            lines.append(f"\n**{m}**, {ce}: mean |subset estimate - all points| (the paper's quantity); "
                         f"log-log slope over all sizes and over n <= {SMALL}\n")
            lines.append(f"| type | estimator | {head} | slope | slope n <= {SMALL} |")
            lines.append(f"|---|---|{rule}---|---|")
            lines += errors
        h = bandwidths(f"{src}/{m}.csv")
        lines.append(f"\n**{m}**: median bandwidth h of the subsets per size, and h on all points (kde-mle: "
                     "LOO likelihood; kde-reg: loo-regression)\n")
        lines.append(f"| type | estimator | {head} | all points |")
        lines.append(f"|---|---|{rule}---|")
        for t in TYPES:
            for est in ("kde-mle", "kde-reg"):
                lines.append(f"| {t} | {est} | " + " | ".join(f"{h[(t, est, False, n)]:.2g}" for n in sizes) +
                             f" | {h[(t, est, True, n_all)]:.2g} |")
        counts = {n: max(len(v) for k, v in sub.items() if k[3] == n) for n in sizes}
        lines.append("\nSubsets per size: " + ", ".join(f"{c} at n = {n}" for n, c in counts.items()) + ".\n")
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
                        bias = [v.mean() - total for v in vals]
                        errs = [np.abs(v - total).mean() for v in vals]
                        ax.plot(ns, np.abs(bias), color=COLOR[est], marker="o", ms=3,
                                label=f"{LABEL[est]} (|bias| slope {fmt(bias_slope(ns, bias))})")
                        ax.plot(ns, errs, color=COLOR[est], ls="--", lw=1, alpha=0.6)
                    else:
                        ax.errorbar(ns, [v.mean() for v in vals], yerr=[v.std(ddof=1) for v in vals], color=COLOR[est],
                                    marker="o", ms=3, capsize=2, label=LABEL[est])
                        ax.axhline(total, color=COLOR[est], ls=":", lw=1)
                        ax.plot([ref[(t, 1.0, est)][1]], [total], color=COLOR[est], marker="*", ms=9)
                ax.set_xscale("log")
                if kind == "error":
                    sizes = np.array(sorted({k[3] for k in sub}), dtype=float)
                    top = max(line.get_ydata()[0] for line in ax.get_lines())
                    ax.plot(sizes, 0.5 * top * (sizes / sizes[0]) ** -0.5, color="#bbbbbb", ls="-.", lw=1,
                            label="slope -0.5 (the paper's)")
                    ax.set_yscale("log")
                    ax.set_ylabel("CE_1: |mean subset - all| (solid), mean |subset - all| (dashed)", fontsize=8)
                else:
                    ax.set_ylabel("CE_1 estimate (dotted, star at n = N: all points)")
                ax.set_xlabel("subset size n")
                ax.set_title(f"{m} (K = {classes}): {t}")
                ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(f"{prefix}_{kind}.png", dpi=100)


if __name__ == "__main__":
    main(sys.argv)
