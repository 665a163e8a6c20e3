#!/usr/bin/env python3
"""The training study's test predictions under the bandwidth that is not the paper's (docs/validation.md,
Section 4): canonical L1 ECE^KDE with the loo-regression criterion, next to the paper's LOO-likelihood
value, for every multiclass run whose test probabilities were saved. Prints a Markdown table (means over
the seeds available), for docs/training.md.

    /usr/bin/python3 experiments/training/loo_regression_view.py [--build build] [--results DIR]
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess


def estimate(tool, probs, labels, criterion):
    out = subprocess.run([tool, "estimate", "--probs", probs, "--labels", labels, "--type", "canonical",
                          "--criterion", criterion, "--json"], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)["results"][0]
    return r["ce"], r["bandwidth"]


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--results", default=os.path.join(root, "experiments", "training", "results"))
    args = ap.parse_args()
    tool = os.path.join(args.build, "cli", "ecekde")
    probs_dir = os.path.join(args.results, "probs")
    rows = collections.defaultdict(list)
    for name in sorted(os.listdir(probs_dir)):
        m = re.match(r"(mlp|resnet)_(.+)_s(\d+)_probs\.npy$", name)
        if not m:
            continue
        arch, method = m.group(1), m.group(2)
        probs = os.path.join(probs_dir, name)
        labels = probs.replace("_probs.npy", "_labels.npy")
        paper = estimate(tool, probs, labels, "loo-likelihood")
        regression = estimate(tool, probs, labels, "loo-regression")
        rows[(arch, method)].append((paper, regression))
    print("| model | method | seeds | CE_1, LOO likelihood (h) | CE_1, loo-regression (h) |")
    print("|---|---|---:|---:|---:|")
    for (arch, method), vals in sorted(rows.items()):
        mean = lambda xs: statistics.fmean(xs)
        print(f"| {'ResNet-8' if arch == 'resnet' else 'MLP'} | {method} | {len(vals)} | "
              f"{mean([v[0][0] for v in vals]):.3f} ({mean([v[0][1] for v in vals]):.2g}) | "
              f"{mean([v[1][0] for v in vals]):.3f} ({mean([v[1][1] for v in vals]):.2g}) |")


if __name__ == "__main__":
    main()
