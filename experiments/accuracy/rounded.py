"""Predictions written with a few decimals (docs/history.md, 7.12): a K = 10 softmax of N(0, 2^2) logits,
rounded to 2 or 3 decimals and renormalised, so that 22% or 4% of the probabilities are exactly 0. Labels
come from the rounded predictions themselves (calibrated) or from q = 0.9 f + 0.01 (every zero class is the
label 1% of the time). q is a function of each f_c alone, so the canonical and the marginal truth are both
the rows' own mean of sum_c |q_c - f_c|: no estimator involved. Prints CSV: decimals, map, type, the mean
truth and estimate of CE_1 over SETS data sets of n = 3,000, and how many intervals held the truth.

    PYTHONPATH=build/python /usr/bin/python3 experiments/accuracy/rounded.py [SETS]
"""
import sys

import numpy as np

import ecekde

K, N = 10, 3000


def predictions(rng, n, decimals):
    z = 2 * rng.standard_normal((n, K))
    f = np.exp(z - z.max(1, keepdims=True))
    f = np.round(f / f.sum(1, keepdims=True), decimals)
    return f / f.sum(1, keepdims=True)


def main():
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    rng = np.random.default_rng(11)
    print("decimals,map,type,zeros,truth,mean,covered,sets")
    for decimals in (2, 3):
        for name, q_of in (("calibrated", lambda f: f), ("mix", lambda f: 0.9 * f + 0.01)):
            readings = {"canonical": [], "marginal": []}
            zeros = []
            for _ in range(sets):
                f = predictions(rng, N, decimals)
                q = q_of(f)
                y = np.minimum((rng.random((N, 1)) > q.cumsum(1)).sum(1), K - 1)
                truth = np.abs(q - f).sum(1).mean()
                zeros.append((f == 0).mean())
                for kind, out in readings.items():
                    r = ecekde.estimate(f, y, type=kind, p=1, progress=False)
                    out.append((truth, r.ce, r.ce_interval.lower <= truth <= r.ce_interval.upper))
            for kind, out in readings.items():
                truth = np.mean([t for t, _, _ in out])
                mean = np.mean([c for _, c, _ in out])
                covered = sum(h for _, _, h in out)
                print(f"{decimals},{name},{kind},{np.mean(zeros):.3f},{truth:.5f},{mean:.5f},{covered},{sets}", flush=True)


if __name__ == "__main__":
    main()
