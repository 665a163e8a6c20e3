#!/usr/bin/env python3
"""The crossfit canonical estimate with its row mean over a random subset of rows (mean_rows, the large-n
mode) against the truth of `ecekde synth` (the paper's Section 4 model; its truth by Monte Carlo from the
model's map, not from an estimator): for each data set, the estimate over every row and over m rows, their
standard errors, and whether each 95% interval holds the truth. Writes results/subset_coverage.csv.

    /usr/bin/python3 experiments/large_n/subset_coverage.py BUILD [--n 30000] [--sets 10] [--rows 3000]
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cli, *args):
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--t2", type=float, default=0.8)
    ap.add_argument("--sets", type=int, default=10)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--p", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "subset_coverage.csv"))
    a = ap.parse_args()
    cli = os.path.join(a.build, "cli", "ecekde")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        probs, labels = os.path.join(tmp, "p.npy"), os.path.join(tmp, "y.npy")
        for seed in range(a.sets):
            text = run(cli, "synth", "--n", str(a.n), "--classes", str(a.classes), "--t2", str(a.t2), "--seed", str(seed),
                       "--p", str(a.p), "--probs", probs, "--labels", labels)
            truth = next(float(line.split()[2]) for line in text.splitlines() if line.startswith("canonical"))
            for m in (0, a.rows):
                out = json.loads(run(cli, "estimate", "--probs", probs, "--labels", labels, "--p", str(a.p),
                                     "--threads", str(a.threads), "--mean-rows", str(m if m else a.n), "--json"))
                r = out["results"][0]
                i = r["ce_pow_p_interval"]
                rows.append({"seed": seed, "n": a.n, "k": a.classes, "t2": a.t2, "p": a.p, "rows": m or a.n,
                             "truth": truth, "ce_pow_p": r["ce_pow_p"], "standard_error": r["standard_error"],
                             "lower": i["lower"], "upper": i["upper"], "covers": int(i["lower"] <= truth <= i["upper"])})
                print(rows[-1], flush=True)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for m in sorted({r["rows"] for r in rows}):
        sel = [r for r in rows if r["rows"] == m]
        bias = sum(r["ce_pow_p"] - r["truth"] for r in sel) / len(sel)
        se = sum(r["standard_error"] for r in sel) / len(sel)
        print(f"rows {m}: mean error {bias:+.5f}, mean SE {se:.5f}, covered {sum(r['covers'] for r in sel)} of {len(sel)}")


if __name__ == "__main__":
    main()
