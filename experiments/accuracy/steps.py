"""Maps with a jump (docs/history.md, 7.13 and 7.14): the figures behind 7.14's tables.

1. A binary step, f uniform on (0, 1) with labels from q = 0.3 below f = 0.5 and 0.9 above, and four controls
   (a Platt-type map, an underconfident one, a calibrated bimodal model, a near-constant prediction), at
   n = 1,000 and 5,000: binary CE_1 and CE_2^2 (both classes' components) against truths from 2 x 10^6
   draws of f, the mean of SETS estimates and how many intervals held the truth.
2. A model of random_models.py replayed on fresh data sets: SEED's draw named MODEL (default: seed 1's
   peaked predictions with a class-wise step, K = 12), at n = 1,000 and 3,000, canonical and marginal, with
   its truths computed as random_models.py computes them.

Prints CSV on stdout (part, model, type, n, p, truth, mean, relative error, intervals holding the truth,
data sets, the pilots kept).

    PYTHONPATH=build/python /usr/bin/python3 experiments/accuracy/steps.py [SETS] [SEED] [MODEL]
"""
import os
import sys

import numpy as np

import ecekde

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_models  # noqa: E402


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def logit(f):
    return np.log(f / (1 - f))


# name: (draw m scores, the true P(y = 1 | f))
BINARY = {
    "step": (lambda r, m: r.random(m), lambda f: np.where(f < 0.5, 0.3, 0.9)),
    "platt": (lambda r, m: sigmoid(2 * r.standard_normal(m)), lambda f: sigmoid(1.5 * logit(f) + 0.5)),
    "underconfident": (lambda r, m: sigmoid(2 * r.standard_normal(m)), lambda f: sigmoid(0.6 * logit(f))),
    "bimodal-calibrated": (lambda r, m: np.where(r.random(m) < 0.5, r.beta(2, 20, m), r.beta(20, 2, m)),
                           lambda f: f),
    "near-constant": (lambda r, m: 0.7 + 0.01 * r.standard_normal(m), lambda f: np.full_like(f, 0.6)),
}


def row(part, model, kind, n, p, truth, values, covered, sets, pilots):
    mean = float(np.mean(values))
    relative = f"{mean / truth - 1:+.4f}" if truth > 0 else ""
    print(f"{part},{model},{kind},{n},{p},{truth:.6g},{mean:.6g},{relative},{covered},{sets},"
          f"{'/'.join(sorted(set(pilots)))}", flush=True)


def binary_part(sets):
    for name, (draw, q) in BINARY.items():
        r = np.random.default_rng([7, len(name)])
        f = draw(r, 2_000_000)
        gap = q(f) - f
        truth = {1: 2 * np.mean(np.abs(gap)), 2: 2 * np.mean(gap * gap)}
        for n in (1000, 5000):
            for p in (1, 2):
                values, covered, pilots = [], 0, []
                for s in range(sets):
                    d = np.random.default_rng([11, s, n, len(name)])
                    f = draw(d, n)
                    y = (d.random(n) < q(f)).astype(np.int64)
                    e = ecekde.estimate(f, y, type="binary", p=p, progress=False)
                    values.append(e.ce_pow_p)
                    covered += e.ce_pow_p_interval.lower <= truth[p] <= e.ce_pow_p_interval.upper
                    pilots.append(e.pilot)
                row("binary", name, "binary", n, p, truth[p], values, covered, sets, pilots)


def replay_part(sets, seed, wanted):
    rng = np.random.default_rng(seed)
    for index in range(1000):
        name, k, _, base, q = random_models.random_model(rng)
        if name == wanted:
            break
    else:
        sys.exit(f"steps.py: seed {seed} draws no model named {wanted} in its first 1,000")
    truth = random_models.truths(base, q, k, [seed, index])
    for kind in ("canonical", "marginal"):
        for n in (1000, 3000):
            for p in (1, 2):
                values, covered, pilots = [], 0, []
                for s in range(sets):
                    d = np.random.default_rng([99, s, n])
                    f = base(d, n)
                    y = np.minimum((d.random((n, 1)) > q(f).cumsum(axis=1)).sum(axis=1), k - 1).astype(np.int64)
                    e = ecekde.estimate(f, y, type=kind, p=p, progress=False)
                    values.append(e.ce_pow_p)
                    covered += e.ce_pow_p_interval.lower <= truth[kind, p] <= e.ce_pow_p_interval.upper
                    pilots.append(e.pilot)
                row("replay", f"{name} K={k}", kind, n, p, truth[kind, p], values, covered, sets, pilots)


def main():
    sets = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    model = sys.argv[3] if len(sys.argv) > 3 else "peaked+step"
    print("part,model,type,n,p,truth,mean,relative_error,covered,sets,pilots")
    binary_part(sets)
    replay_part(max(sets, 8), seed, model)


if __name__ == "__main__":
    main()
