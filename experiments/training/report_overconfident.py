#!/usr/bin/python3
"""Tables and the Pareto figure of the overconfident-baseline training study (docs/training.md, issue 50)
from the runs of run_overconfident.sh.

Reads RESULTS/runs/*.json (one per ecekde-train run) and RESULTS/probs/NAME_logits.npy / _labels.npy,
re-scores every run's test predictions before and after its temperature (fitted by ecekde-train on the
validation split) with the library's default estimator (crossfit; canonical, marginal and top-label
CE_1 with 95% intervals), caches the scores in RESULTS/scores/NAME.json, and writes
  - the section of the document between <!-- overconfident:begin --> and <!-- overconfident:end -->
    (the rest of the document is kept),
  - FIGURES/overconfident_pareto.png (accuracy against canonical CE_1, every method and lambda).
Needs numpy, matplotlib and the ecekde Python module (PYTHONPATH=build/python).
"""
import argparse
import json
import math
import os
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from study_files import load_runs, write_between  # noqa: E402

import ecekde  # noqa: E402

BEGIN, END = "<!-- overconfident:begin -->", "<!-- overconfident:end -->"
TYPES = ["canonical", "marginal", "top-label"]
NAMES = {"xe": "XE", "kde-xe": "KDE-XE", "kde-xe-debiased": "KDE-XE debiased", "mmce": "MMCE", "focal53": "FL-53"}
ORDER = ["xe", "kde-xe", "kde-xe-debiased", "mmce", "focal53"]
COLLAPSED = 0.2  # test accuracy below this (chance is 0.1): the run diverged to a near-constant predictor


def softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def scores(results, run, threads):
    """Crossfit CE_1 (estimate and 95% interval) of each type, before and after T; cached per run."""
    path = os.path.join(results, "scores", run["name"] + ".json")
    if os.path.exists(path):
        with open(path) as f:
            cached = json.load(f)
        if cached.get("temperature") == run["temperature"]:
            return cached
    z = np.load(os.path.join(results, "probs", run["name"] + "_logits.npy")).astype(np.float64)
    y = np.load(os.path.join(results, "probs", run["name"] + "_labels.npy"))
    out = {"temperature": run["temperature"], "n": int(len(y))}
    for when, t in (("before", 1.0), ("after", run["temperature"])):
        p = softmax(z / t)
        for typ in TYPES:
            r = ecekde.estimate(p, y, type=typ, p=1, threads=threads)
            out[f"{when}_{typ}"] = {"ce": r.ce, "lower": r.ce_interval.lower, "upper": r.ce_interval.upper,
                                    "warnings": list(r.warnings)}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".part", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(path + ".part", path)
    return out


def method_key(run):
    c = run["config"]
    lam = c["lambda"] if c["objective"] in ("kde-xe", "kde-xe-debiased", "mmce") else None
    return c["objective"], lam


def label(objective, lam, post=False):
    s = NAMES.get(objective, objective) + (f" λ = {lam:g}" if lam is not None else "")
    return s + (" + TS" if post else "")


def mean_sd(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if not xs:
        return float("nan"), float("nan")
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else float("nan"))


def fmt(xs, digits=3, scale=1.0):
    m, s = mean_sd([x * scale for x in xs])
    if math.isnan(m):
        return "–"
    return f"{m:.{digits}f}" + ("" if math.isnan(s) else f" ± {s:.{digits}f}")


def fmt_ce(entries, digits=3):
    """mean ± sd of the estimates over seeds, and the seeds' mean interval in brackets."""
    est = fmt([e["ce"] for e in entries], digits)
    lo, hi = statistics.fmean(e["lower"] for e in entries), statistics.fmean(e["upper"] for e in entries)
    return f"{est} [{lo:.{digits}f}, {hi:.{digits}f}]"


def rows_of(groups):
    """The table rows: (label, runs, when, key) in display order; each method + TS follows the method."""
    rows = []
    for objective in ORDER:
        for key in sorted((k for k in groups if k[0] == objective), key=lambda k: (k[1] is None, k[1] or 0)):
            rows.append((label(*key), groups[key], "before", key))
            rows.append((label(*key, post=True), groups[key], "after", key))
    return rows


def paired(groups, key, ref_key, ref_when, metric, when="before"):
    """Per-seed differences (method - reference) of a metric: list over the seeds both have."""
    ref = {r["config"]["seed"]: r for r in groups.get(ref_key, [])}
    out = []
    for r in groups[key]:
        s = r["config"]["seed"]
        if s in ref:
            out.append(metric(r, when) - metric(ref[s], ref_when))
    return out


def canonical(r, when):
    return r["scores"][f"{when}_canonical"]["ce"]


def accuracy(r, when):
    return r["test"][when]["accuracy"]


def tables(groups, runs, quick, collapsed):
    c = runs[0]["config"]
    seeds = sorted({r["config"]["seed"] for r in runs})
    n_test = runs[0]["scores"]["n"]
    out = []
    if quick:
        out.append("**QUICK run: a pipeline check on a tiny subset, not a measurement.**\n")
    out.append(
        f"Generated by `experiments/training/report_overconfident.py` from {len(runs)} runs (seeds "
        f"{', '.join(map(str, seeds))}): ResNet-8 of width {c['width']}, the first {c['train_size']} training "
        f"images, {c['epochs']} epochs, batch {c['batch_size']}, SGD lr {c['learning_rate']:g} (Nesterov, cosine), "
        f"weight decay {c['weight_decay']:g}, no augmentation. Every entry is the mean ± standard deviation over "
        f"the seeds on the {n_test:,} test images; CE_1 is the library's default (crossfit) estimate with, in "
        "brackets, its 95% interval averaged over the seeds. Methods are as trained (before temperature "
        f"scaling) except the rows marked + TS (the temperature fitted by NLL on the {c['eval_size'] or 10000:,} "
        "validation images).\n")
    counts = {label(*k): len(v) for k, v in groups.items()}
    short = [f"{k} ({n})" for k, n in counts.items() if n < len(seeds)]
    if short:
        out.append("Methods with fewer usable runs than seeds (runs in the means; collapsed runs are listed below the tables): " + ", ".join(short) + ".\n")

    out.append("### Main table: accuracy, NLL, Brier, and CE_1 by the default estimator (test)\n")
    out.append("| method | seeds | accuracy ↑ | NLL ↓ | Brier ↓ | canonical CE_1 ↓ | marginal CE_1 ↓ | top-label CE_1 ↓ | ECE^bin (%) ↓ | T |")
    out.append("|---|---:|---|---|---|---|---|---|---|---|")
    for name, rs, when, key in rows_of(groups):
        t = fmt([r["temperature"] for r in rs], 2) if when == "before" else "(applied)"
        gone = len(collapsed.get(key, []))
        cells = [name, str(len(rs)) + (f" (+{gone} collapsed)" if gone else ""), fmt([r["test"][when]["accuracy"] for r in rs], 4),
                 fmt([r["test"][when]["nll"] for r in rs], 3), fmt([r["test"][when]["brier"] for r in rs], 4)]
        cells += [fmt_ce([r["scores"][f"{when}_{typ}"] for r in rs]) for typ in TYPES]
        cells += [fmt([r["test"][when]["ece_bin"] for r in rs], 2, 100), t]
        out.append("| " + " | ".join(cells) + " |")
    out.append("\nECE^bin: top-label L1 with 15 equal-mass bins (the paper's Table 4 metric). T: the fitted "
               "temperature (T > 1: the model was overconfident on the validation split).\n")

    out.append("### Table 2 analogue: canonical CE_1 before and after temperature scaling (default estimator)\n")
    out.append("| method | pre T | post T | paper's ECE^KDE pre T | paper's post T |")
    out.append("|---|---|---|---|---|")
    for name, rs, when, key in rows_of(groups):
        if when == "after":
            continue
        out.append(f"| {name} | {fmt_ce([r['scores']['before_canonical'] for r in rs])} | "
                   f"{fmt_ce([r['scores']['after_canonical'] for r in rs])} | "
                   f"{fmt([r['test']['before']['ece_kde'] for r in rs])} | {fmt([r['test']['after']['ece_kde'] for r in rs])} |")
    out.append("\nThe last two columns are the paper's estimator (LOO-likelihood bandwidth, as in its Table 2), "
               "which counts label noise as miscalibration; they are shown for comparison with the paper only.\n")

    out.append("### Paired differences against XE and XE + TS (same seed)\n")
    out.append("Per seed, the method's value minus the reference's; mean ± sd over the seeds and, in brackets, "
               "the smallest and largest difference. Negative canonical CE_1 differences favour the method.\n")
    out.append("| method | Δ canonical CE_1 vs XE | Δ accuracy vs XE | Δ canonical CE_1 vs XE + TS | Δ accuracy vs XE + TS | Δ canonical CE_1, method + TS vs XE + TS |")
    out.append("|---|---|---|---|---|---|")
    xe = ("xe", None)
    for name, rs, when, key in rows_of(groups):
        if key == xe or xe not in groups or when == "after":
            continue
        cells = [name]
        for ref_when in ("before", "after"):
            for metric, digits in ((canonical, 3), (accuracy, 4)):
                d = paired(groups, key, xe, ref_when, metric, when)
                cells.append(f"{fmt(d, digits)} [{min(d):+.{digits}f}, {max(d):+.{digits}f}]" if d else "–")
        d = paired(groups, key, xe, "after", canonical, "after") if when == "before" else []
        cells.append(f"{fmt(d, 3)} [{min(d):+.3f}, {max(d):+.3f}]" if d else "–")
        out.append("| " + " | ".join(cells) + " |")

    out.append(f"\n### Training: how far each method fits its {c['train_size']:,} images, and the cost\n")
    out.append("Means over the last epoch's batches, as recorded by ecekde-train (the seconds per epoch vary with "
               "the other jobs on the machine; they are not a controlled timing).\n")
    out.append("| method | training loss, data term (last epoch) | training accuracy (last epoch) | regulariser (last epoch, unweighted) | bandwidth (last epoch, mean) | rows used (debiased) | s per epoch (median) |")
    out.append("|---|---|---|---|---|---|---|")
    for name, rs, when, key in rows_of(groups):
        if when == "after":
            continue
        last = [r["history"][-1] for r in rs]
        used = fmt([e.get("used_share", 1) for e in last], 2) if key[0] == "kde-xe-debiased" else ""
        secs = statistics.median(e["seconds"] for r in rs for e in r["history"])
        regularised = key[0] in ("kde-xe", "kde-xe-debiased", "mmce")
        reg = fmt([e["regularizer"] for e in last], 4) if regularised else ""
        h = fmt([e["bandwidth"] for e in last], 4) if key[0].startswith("kde-xe") else ""
        out.append(f"| {name} | {fmt([e['base'] for e in last], 4)} | {fmt([e['train_accuracy'] for e in last], 4)} | "
                   f"{reg} | {h} | {used} | {secs:.1f} |")
    gone = [r for rs in collapsed.values() for r in rs]
    if gone:
        out.append(f"\n**Collapsed runs**, left out of every mean above (test accuracy below {COLLAPSED}; chance is 0.1: "
                   "training diverged to a near-constant predictor): " + "; ".join(
                       f"{label(*method_key(r))}, seed {r['config']['seed']}: accuracy {r['test']['before']['accuracy']:.4f}, "
                       f"training accuracy {r['history'][-1]['train_accuracy']:.4f} in the last epoch" for r in gone) + ".")
    warned = sorted({w for r in runs for k, v in r["scores"].items() if isinstance(v, dict) for w in v["warnings"]})
    if warned:
        out.append("\nWarnings of the default estimator on these predictions: " + "; ".join(warned))
    out.append("\n![Accuracy against canonical CE_1](training/overconfident_pareto.png)\n")
    return "\n".join(out) + "\n"


def pareto(groups, path):
    """Two panels: as trained (before T) and after temperature scaling; XE + TS is XE in the second."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharex=True, sharey=True)
    colors = {"kde-xe": "tab:red", "kde-xe-debiased": "tab:purple", "mmce": "tab:blue"}
    for ax, when in zip(axes, ("before", "after")):
        for objective in ("kde-xe", "kde-xe-debiased", "mmce"):
            keys = sorted(k for k in groups if k[0] == objective)
            pts = []
            for k in keys:
                rs = groups[k]
                if rs:
                    pts.append((mean_sd([canonical(r, when) for r in rs]), mean_sd([accuracy(r, when) for r in rs]),
                                k[1], len(rs)))
            if not pts:
                continue
            xs, ys = [p[0][0] for p in pts], [p[1][0] for p in pts]
            ax.plot(xs, ys, "-", color=colors[objective], alpha=0.35)
            ax.errorbar(xs, ys, xerr=np.nan_to_num([p[0][1] for p in pts]), yerr=np.nan_to_num([p[1][1] for p in pts]),
                        fmt="o", color=colors[objective], label=NAMES[objective], capsize=2)
            for x, y, p in zip(xs, ys, pts):
                ax.annotate(f"λ={p[2]:g}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8,
                            color=colors[objective])
        for key, marker, color, name in ((("xe", None), "s", "black", "XE" if when == "before" else "XE + TS"),
                                         (("focal53", None), "^", "gray", "FL-53")):
            if key not in groups:
                continue
            rs = groups[key]
            (x, sx), (y, sy) = mean_sd([canonical(r, when) for r in rs]), mean_sd([accuracy(r, when) for r in rs])
            ax.errorbar([x], [y], xerr=np.nan_to_num([sx]), yerr=np.nan_to_num([sy]), fmt=marker, color=color,
                        label=name, capsize=2, markersize=7)
        if when == "before" and ("xe", None) in groups:  # XE + TS as a reference in the first panel too
            rs = groups[("xe", None)]
            x, y = mean_sd([canonical(r, "after") for r in rs])[0], mean_sd([accuracy(r, "after") for r in rs])[0]
            ax.axvline(x, color="tab:green", ls=":", lw=1)
            ax.annotate("XE + TS", (x, y), textcoords="offset points", xytext=(3, -12), fontsize=8, color="tab:green")
        ax.set_xlabel("canonical CE_1, default (crossfit) estimator, test ↓")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("as trained (before temperature scaling)" if when == "before"
                     else "after temperature scaling (T fitted on validation)", fontsize=10)
    axes[0].set_ylabel("test accuracy ↑")
    fig.suptitle("Overconfident baseline (ResNet-8, small Fashion-MNIST subset): accuracy vs canonical CE_1, "
                 "mean ± sd over seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--figures", required=True)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()

    runs = load_runs(a.results)
    if not runs:
        raise SystemExit(f"no runs under {a.results}/runs")
    for i, r in enumerate(runs):
        print(f"scoring {r['name']} ({i + 1}/{len(runs)})", flush=True)
        r["scores"] = scores(a.results, r, a.threads)
    # Collapsed runs (a near-constant predictor) are left out of every mean and listed with their figures.
    groups, collapsed = {}, {}
    for r in runs:
        target = collapsed if r["test"]["before"]["accuracy"] < COLLAPSED else groups
        target.setdefault(method_key(r), []).append(r)
    for rs in groups.values():
        rs.sort(key=lambda r: r["config"]["seed"])
    quick = runs[0]["config"]["train_size"] < 1000

    os.makedirs(a.figures, exist_ok=True)
    pareto(groups, os.path.join(a.figures, "overconfident_pareto.png"))
    text = tables(groups, runs, quick, collapsed)
    rel = os.path.relpath(a.figures, os.path.dirname(os.path.abspath(a.doc)))
    text = text.replace("(training/", f"({rel}/")
    write_between(a.doc, BEGIN, END, text, "Training study (QUICK)")
    print(f"wrote {a.doc} and {a.figures}/overconfident_pareto.png")


if __name__ == "__main__":
    main()
