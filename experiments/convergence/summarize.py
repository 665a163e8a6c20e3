"""Summarises and plots the convergence study written by ecekde_convergence.

Usage: summarize.py RESULTS_DIR FIGURE_PREFIX [--calibrated CALIBRATED_DIR]
Reads RESULTS_DIR/estimates.csv; writes RESULTS_DIR/summary.csv (per K, type, p, estimator, n: data sets,
mean, bias, standard deviation, RMSE, mean |error|, mean bandwidth), RESULTS_DIR/summary.md (the tables
of docs/validation.md) and the figures FIGURE_PREFIX_figure2.png (the paper's Figure 2: canonical L1),
FIGURE_PREFIX_error.png (mean |estimate - truth| against n, log-log, every type) and
FIGURE_PREFIX_improved.png (bias and RMSE of the regression-based estimators, p = 1 and 2, with the
chosen bandwidths). With --calibrated, also the table of a calibrated model (truth 0) from that directory.

Slopes: least squares of log10(mean |estimate - truth|) on log10(n) over the sizes given (all sizes, and
n >= 1000), the paper's "empirical convergence rate"; a second table gives the same fit for the RMSE and
for |mean estimate - truth| (the bias alone). The bandwidth panel shows every data set's choice as a faint
dot besides the mean.
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

KDE = ["kde-mle", "kde-reg", "kde-mle-debiased", "kde-reg-debiased"]
LABEL = {
    "kde-mle": "ECE^KDE, LOO-likelihood h (paper)",
    "kde-reg": "ECE^KDE, loo-regression h",
    "kde-mle-debiased": "debiased, LOO-likelihood h",
    "kde-reg-debiased": "debiased, loo-regression h",
    "bin-5": "ECE^bin, 5 bins", "bin-10": "ECE^bin, 10 bins", "bin-15": "ECE^bin, 15 bins",
    "bin-20": "ECE^bin, 20 bins", "bin-doane": "ECE^bin, Doane",
}
COLOR = {
    "kde-mle": "tab:red", "kde-reg": "tab:blue", "kde-mle-debiased": "tab:purple", "kde-reg-debiased": "tab:cyan",
    "bin-5": "#bbbbbb", "bin-10": "#999999", "bin-15": "#777777", "bin-20": "#555555", "bin-doane": "black",
}
TYPES = ["canonical", "marginal", "top-label"]


def load(path):
    groups = defaultdict(list)
    truth = {}
    for r in csv.DictReader(open(path)):
        key = (int(r["classes"]), r["type"], float(r["p"]), r["estimator"], int(r["n"]))
        groups[key].append((float(r["value"]), float(r["bandwidth"]), int(r["excluded_rows"])))
        truth[key[:3]] = float(r["truth"])
    return groups, truth


def summarise(groups, truth):
    rows = []
    for key, v in sorted(groups.items()):
        t = truth[key[:3]]
        x = np.array([a for a, _, _ in v])
        err = x - t
        rows.append(dict(classes=key[0], type=key[1], p=key[2], estimator=key[3], n=key[4], sets=len(x),
                         truth=t, mean=x.mean(), bias=err.mean(), sd=x.std(ddof=1) if len(x) > 1 else float("nan"),
                         rmse=math.sqrt((err ** 2).mean()), mae=np.abs(err).mean(),
                         bandwidth=np.mean([h for _, h, _ in v]), excluded=np.mean([e for _, _, e in v])))
    return rows


def select(rows, **kw):
    return sorted((r for r in rows if all(r[k] == v for k, v in kw.items())), key=lambda r: r["n"])


def slope(sel, n_min=0, field="mae"):
    pts = [(math.log10(r["n"]), math.log10(abs(r[field]))) for r in sel if r["n"] >= n_min and abs(r[field]) > 0]
    if len(pts) < 3:
        return float("nan")
    x, y = np.array(pts).T
    return np.polyfit(x, y, 1)[0]


def fmt(v, digits=4):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def tables(rows, classes, calibrated_rows=None):
    out = []
    sizes = sorted({r["n"] for r in rows})
    # Figure 2 analogue: canonical, L1 and L2, mean estimate per n
    for p in (1.0, 2.0):
        for k in classes:
            sel = [r for r in rows if r["classes"] == k and r["type"] == "canonical" and r["p"] == p]
            if not sel:
                continue
            t = sel[0]["truth"]
            out.append(f"\n**Canonical CE_{int(p)}^{int(p)}, K = {k}** (truth {t:.4f}); mean over data sets "
                       "(data sets per n in the first row):\n")
            out.append("| estimator | " + " | ".join(f"n = {n}" for n in sizes) + " |")
            out.append("|---|" + "---|" * len(sizes))
            out.append("| data sets | " + " | ".join(str(select(sel, n=n, estimator="kde-mle")[0]["sets"])
                                                     if select(sel, n=n, estimator="kde-mle") else "—"
                                                     for n in sizes) + " |")
            for est in LABEL:
                s = select(sel, estimator=est)
                if not s:
                    continue
                by_n = {r["n"]: r for r in s}
                out.append(f"| {est} | " + " | ".join(fmt(by_n[n]["mean"]) if n in by_n else "—" for n in sizes) + " |")
    # bias / sd / RMSE of the KDE variants at a few sizes, every type
    for p in (1.0, 2.0):
        out.append(f"\n**Bias, standard deviation and RMSE, p = {int(p)}** (bias/sd/RMSE; truth in the second "
                   "column):\n")
        picks = [n for n in (500, 2000, 20000) if n in sizes]
        out.append("| K | type | truth | estimator | " + " | ".join(f"n = {n}" for n in picks) + " |")
        out.append("|---|---|---|---|" + "---|" * len(picks))
        for k in classes:
            for t in TYPES:
                for est in KDE + ["bin-doane"]:
                    s = select(rows, classes=k, type=t, p=p, estimator=est)
                    if not s:
                        continue
                    by_n = {r["n"]: r for r in s}
                    cells = [f"{by_n[n]['bias']:+.4f} / {by_n[n]['sd']:.4f} / {by_n[n]['rmse']:.4f}" if n in by_n
                             else "—" for n in picks]
                    out.append(f"| {k} | {t} | {s[0]['truth']:.4f} | {est} | " + " | ".join(cells) + " |")
    # slopes
    out.append("\n**Log-log slope of mean |estimate - truth| against n** (all n / n >= 1000):\n")
    ests = KDE + ["bin-5", "bin-10", "bin-15", "bin-20", "bin-doane"]
    out.append("| K | type | p | " + " | ".join(ests) + " |")
    out.append("|---|---|---|" + "---|" * len(ests))
    for k in classes:
        for t in TYPES:
            for p in (1.0, 2.0):
                cells = []
                for est in ests:
                    s = select(rows, classes=k, type=t, p=p, estimator=est)
                    cells.append(f"{fmt(slope(s), 2)} / {fmt(slope(s, 1000), 2)}" if s else "—")
                if any(c != "—" for c in cells):
                    out.append(f"| {k} | {t} | {int(p)} | " + " | ".join(cells) + " |")
    out.append("\n**Log-log slope of the RMSE and of |mean estimate - truth| against n** (all n / n >= 1000):\n")
    ests = ["kde-mle", "kde-reg", "kde-mle-debiased", "bin-15", "bin-doane"]
    out.append("| K | type | p | quantity | " + " | ".join(ests) + " |")
    out.append("|---|---|---|---|" + "---|" * len(ests))
    for k in classes:
        for t in TYPES:
            for p in (1.0, 2.0):
                for field, name in (("rmse", "RMSE"), ("bias", "abs. bias")):
                    cells = []
                    for est in ests:
                        s = select(rows, classes=k, type=t, p=p, estimator=est)
                        cells.append(f"{fmt(slope(s, 0, field), 2)} / {fmt(slope(s, 1000, field), 2)}" if s else "—")
                    if any(c != "—" for c in cells):
                        out.append(f"| {k} | {t} | {int(p)} | {name} | " + " | ".join(cells) + " |")
    # bandwidths
    out.append("\n**Chosen bandwidths** (mean over data sets):\n")
    out.append("| K | type | criterion | " + " | ".join(f"n = {n}" for n in sizes) + " |")
    out.append("|---|---|---|" + "---|" * len(sizes))
    for k in classes:
        for t in TYPES:
            for est in ("kde-mle", "kde-reg"):
                s = {r["n"]: r for r in select(rows, classes=k, type=t, p=1.0, estimator=est)}
                if s:
                    out.append(f"| {k} | {t} | {'LOO likelihood' if est == 'kde-mle' else 'loo-regression'} | " +
                               " | ".join(f"{s[n]['bandwidth']:.2g}" if n in s else "—" for n in sizes) + " |")
    if calibrated_rows:
        csizes = sorted({r["n"] for r in calibrated_rows})
        for k in sorted({r["classes"] for r in calibrated_rows}):
            out.append(f"\n**A calibrated model (t2 = 1, truth 0), K = {k}**: mean estimate (± sd) of CE_p^p:\n")
            out.append("| type | p | estimator | " + " | ".join(f"n = {n}" for n in csizes) + " |")
            out.append("|---|---|---|" + "---|" * len(csizes))
            for t in TYPES:
                for p in (1.0, 2.0):
                    for est in KDE + ["bin-10", "bin-doane"]:
                        s = {r["n"]: r for r in select(calibrated_rows, classes=k, type=t, p=p, estimator=est)}
                        if s:
                            out.append(f"| {t} | {int(p)} | {est} | " + " | ".join(
                                f"{s[n]['mean']:.4f} ± {s[n]['sd']:.4f}" if n in s else "—" for n in csizes) + " |")
    return "\n".join(out) + "\n"


def plot_figure2(rows, classes, path):
    fig, axes = plt.subplots(1, len(classes), figsize=(6.5 * len(classes), 4.8), squeeze=False)
    for ax, k in zip(axes[0], classes):
        sel = [r for r in rows if r["classes"] == k and r["type"] == "canonical" and r["p"] == 1.0]
        for est in ["bin-5", "bin-10", "bin-15", "bin-20", "bin-doane", "kde-mle", "kde-reg"]:
            s = select(sel, estimator=est)
            if not s:
                continue
            n = np.array([r["n"] for r in s])
            ax.errorbar(n, [r["mean"] for r in s], yerr=[r["sd"] for r in s], color=COLOR[est], marker="o", ms=3,
                        lw=1.2 if est.startswith("kde") else 0.9, capsize=2, label=LABEL[est])
        ax.axhline(sel[0]["truth"], color="green", lw=1.5, ls="--", label="ground truth")
        ax.set_xscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("estimate of canonical CE_1")
        ax.set_title(f"K = {k}: mean ± sd over data sets")
        ax.set_ylim(0, None)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_error(rows, classes, path):
    fig, axes = plt.subplots(len(classes), 3, figsize=(15, 4.2 * len(classes)), squeeze=False)
    for i, k in enumerate(classes):
        for j, t in enumerate(TYPES):
            ax = axes[i][j]
            for est in ["kde-mle", "kde-reg", "bin-15", "bin-doane"]:
                s = select(rows, classes=k, type=t, p=1.0, estimator=est)
                if not s:
                    continue
                ax.plot([r["n"] for r in s], [r["mae"] for r in s], color=COLOR[est], marker="o", ms=3,
                        label=f"{LABEL[est]} (slope {slope(s):.2f})")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel("mean |estimate - truth| of CE_1")
            ax.set_title(f"{t}, K = {k}")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def plot_improved(rows, classes, path, groups=None):
    fig, axes = plt.subplots(len(classes), 3, figsize=(15, 4.2 * len(classes)), squeeze=False)
    for i, k in enumerate(classes):
        for j, (p, what) in enumerate([(1.0, "rmse"), (2.0, "rmse"), (None, "bandwidth")]):
            ax = axes[i][j]
            if what == "bandwidth":
                for t, ls in zip(TYPES, ["-", "--", ":"]):
                    for est in ("kde-mle", "kde-reg"):
                        s = select(rows, classes=k, type=t, p=1.0, estimator=est)
                        ax.plot([r["n"] for r in s], [r["bandwidth"] for r in s], color=COLOR[est], ls=ls, marker="o",
                                ms=3, label=f"{t}, {'LOO likelihood' if est == 'kde-mle' else 'loo-regression'}")
                        for r in s if groups else []:
                            hs = [h for _, h, _ in groups[(k, t, 1.0, est, r["n"])]]
                            ax.plot([r["n"]] * len(hs), hs, color=COLOR[est], ls="none", marker=".", ms=3, alpha=0.3)
                ax.set_yscale("log")
                ax.set_ylabel("chosen bandwidth h")
                ax.set_title(f"K = {k}: bandwidths (mean; dots: each data set)")
            else:
                for est in KDE + ["bin-doane"]:
                    s = select(rows, classes=k, type="canonical", p=p, estimator=est)
                    if not s:
                        continue
                    ax.plot([r["n"] for r in s], [r["rmse"] / r["truth"] for r in s], color=COLOR[est], marker="o",
                            ms=3, label=LABEL[est])
                    ax.plot([r["n"] for r in s], [abs(r["bias"]) / r["truth"] for r in s], color=COLOR[est], ls=":",
                            lw=1)
                ax.set_yscale("log")
                ax.set_ylabel("relative RMSE (solid), |bias| (dotted)")
                ax.set_title(f"canonical CE_{int(p)}^{int(p)}, K = {k}")
            ax.set_xscale("log")
            ax.set_xlabel("n")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv):
    src, prefix = argv[1], argv[2]
    groups, truth = load(f"{src}/estimates.csv")
    rows = summarise(groups, truth)
    calibrated = None
    if "--calibrated" in argv:
        cg, ct = load(f"{argv[argv.index('--calibrated') + 1]}/estimates.csv")
        calibrated = summarise(cg, ct)
    classes = sorted({r["classes"] for r in rows})
    with open(f"{src}/summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(f"{src}/summary.md", "w") as f:
        f.write(tables(rows, classes, calibrated))
    plot_figure2(rows, classes, f"{prefix}_figure2.png")
    plot_error(rows, classes, f"{prefix}_error.png")
    plot_improved(rows, classes, f"{prefix}_improved.png", groups)


if __name__ == "__main__":
    main(sys.argv)
