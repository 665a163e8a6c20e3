"""Summarises the bootstrap coverage study written by ecekde_coverage.

Usage: summarize.py RESULTS_DIR FIGURE.png
Reads RESULTS_DIR/intervals.csv; writes RESULTS_DIR/summary.md (coverage with its binomial standard
error, the share of misses above and below the truth, mean width, mean estimate minus truth, mean
replicate minus estimate) and FIGURE.png (coverage against n per type, estimator and interval kind).
"""
import csv
import math
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ESTIMATORS = [("kde-mle", "leave-copies-out"), ("kde-mle", "plain"), ("kde-reg", "leave-copies-out"),
              ("kde-reg", "plain"), ("bin-doane", "resample")]
COLOR = {"kde-mle": "tab:red", "kde-reg": "tab:blue", "bin-doane": "black"}
DASH = {"leave-copies-out": "-", "plain": "--", "resample": "-"}


def main(src, figure):
    groups = defaultdict(list)
    for r in csv.DictReader(open(f"{src}/intervals.csv")):
        key = (r["type"], r["estimator"], r["copies"], r["interval"], int(r["n"]))
        groups[key].append({k: float(r[k]) for k in ("estimate", "lower", "upper", "replicate_mean", "truth", "covered")})
    stats = {}
    for key, rows in groups.items():
        m = len(rows)
        cov = sum(r["covered"] for r in rows) / m
        stats[key] = dict(
            sets=m, coverage=cov, se=math.sqrt(max(cov * (1 - cov), 1e-12) / m),
            above=sum(r["lower"] > r["truth"] for r in rows) / m,
            below=sum(r["upper"] < r["truth"] for r in rows) / m,
            width=sum(r["upper"] - r["lower"] for r in rows) / m,
            bias=sum(r["estimate"] - r["truth"] for r in rows) / m,
            boot_bias=sum(r["replicate_mean"] - r["estimate"] for r in rows) / m,
            truth=rows[0]["truth"])
    types = sorted({k[0] for k in stats})
    sizes = sorted({k[4] for k in stats})
    lines = []
    for t in types:
        truth = next(v["truth"] for k, v in stats.items() if k[0] == t)
        lines.append(f"\n**{t}** (truth {truth:.4f}): coverage of the nominal 95% interval (± binomial s.e.); "
                     "in brackets the share of intervals entirely above / below the truth\n")
        lines.append("| estimator | copies | interval | " + " | ".join(f"n = {n}" for n in sizes) + " |")
        lines.append("|---|---|---|" + "---|" * len(sizes))
        for est, copies in ESTIMATORS:
            for kind in ("percentile", "basic"):
                cells = []
                for n in sizes:
                    s = stats.get((t, est, copies, kind, n))
                    cells.append("—" if s is None else
                                 f"{s['coverage']:.3f} ± {s['se']:.3f} ({s['above']:.2f} / {s['below']:.2f})")
                lines.append(f"| {est} | {copies} | {kind} | " + " | ".join(cells) + " |")
        lines.append(f"\n{t}: mean estimate - truth, mean (replicate mean - estimate), mean width of the "
                     "percentile interval\n")
        lines.append("| estimator | copies | " + " | ".join(f"n = {n}" for n in sizes) + " |")
        lines.append("|---|---|" + "---|" * len(sizes))
        for est, copies in ESTIMATORS:
            cells = []
            for n in sizes:
                s = stats.get((t, est, copies, "percentile", n))
                cells.append("—" if s is None else f"{s['bias']:+.4f}, {s['boot_bias']:+.4f}, {s['width']:.4f}")
            lines.append(f"| {est} | {copies} | " + " | ".join(cells) + " |")
    sets = sorted({v["sets"] for v in stats.values()})
    lines.append(f"\nData sets per cell: {', '.join(map(str, sets))}.\n")
    open(f"{src}/summary.md", "w").write("\n".join(lines) + "\n")

    fig, axes = plt.subplots(1, len(types), figsize=(6.5 * len(types), 4.6), squeeze=False)
    for ax, t in zip(axes[0], types):
        for est, copies in ESTIMATORS:
            for kind, marker in (("percentile", "o"), ("basic", "^")):
                pts = [(n, stats[(t, est, copies, kind, n)]) for n in sizes if (t, est, copies, kind, n) in stats]
                if not pts:
                    continue
                ax.errorbar([n for n, _ in pts], [s["coverage"] for _, s in pts], yerr=[2 * s["se"] for _, s in pts],
                            color=COLOR[est], ls=DASH[copies], marker=marker, ms=4, capsize=2, lw=1,
                            alpha=1 if kind == "percentile" else 0.6, label=f"{est}, {copies}, {kind}")
        ax.axhline(0.95, color="green", ls=":", lw=1.5, label="nominal 0.95")
        ax.set_xscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("n")
        ax.set_ylabel("coverage of the true CE_1")
        ax.set_title(f"{t}: coverage ± 2 s.e.")
        ax.legend(fontsize=6.5, loc="best")
    fig.tight_layout()
    fig.savefig(figure, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
