"""Randomly drawn models (docs/history.md, 7.13): each a random base distribution of predictions and a
random composition of one or two calibration maps with random parameters, at a random K and n, none of them
chosen by hand, so that no model is one the estimator was designed on. Truths never come from an
estimator: canonical CE_p^p is the mean of sum_c |q_c(f) - f_c|^p over 2^20 draws of f (q is known in closed
form); marginal and top-label need E[q_c | f_c], taken as a local-linear fit over windows of 2 sqrt(N)
neighbours in sorted order of the same draws (the zoo's rule, written again here in numpy).

Bases: Dirichlet (random concentrations, some sparse), softmax of Gaussian logits (random class means and
scale), peaked (one random class boosted), imbalanced logits, a mixture of two Dirichlets. Maps: identity,
temperature, class biases, class-wise powers, mixing with a random point of the simplex, a random matrix in
log space, a class-wise monotone warp (Kumaraswamy CDF), a class-wise step (f_c scaled up above a
threshold), each renormalised.

Prints CSV on stdout: model, K, n, type, p, truth, the mean of SETS estimates, its relative error and its
distance from the truth in standard errors of that mean, how many intervals held the truth, the pilot of
the first set; then a summary on stderr.

    PYTHONPATH=build/python /usr/bin/python3 experiments/accuracy/random_models.py [SEED] [MODELS] [SETS] [ONLY]

ONLY (a model's name, e.g. gaussian+matrix) replays the draw and runs only the models of that name: the
same models, truths and data sets as the full run, with SETS data sets each.
"""
import sys

import numpy as np

import ecekde

TRUTH_DRAWS = 1 << 20
TYPES = ("canonical", "marginal", "top_label")


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def normalised(g):
    return g / g.sum(axis=1, keepdims=True)


def random_base(rng, k):
    kind = rng.choice(["dirichlet", "gaussian", "peaked", "imbalanced", "two-dirichlets"])
    if kind == "dirichlet":
        a = rng.uniform(0.2, 3.0) * k * rng.dirichlet(np.full(k, 5.0))
        return kind, lambda r, m: r.dirichlet(a, m)
    if kind == "gaussian":
        mu, s = rng.normal(0, rng.uniform(0, 1.5), k), rng.uniform(0.5, 4)
        return kind, lambda r, m: softmax(mu + s * r.standard_normal((m, k)))
    if kind == "peaked":
        margin, s = rng.uniform(1, 5), rng.uniform(0.5, 2.5)

        def peaked(r, m):
            z = s * r.standard_normal((m, k))
            z[np.arange(m), r.integers(0, k, m)] += margin
            return softmax(z)
        return kind, peaked
    if kind == "imbalanced":
        w, s = np.log(rng.dirichlet(np.full(k, 0.7)) + 1e-3), rng.uniform(0.5, 3)
        return kind, lambda r, m: softmax(w + s * r.standard_normal((m, k)))
    a1, a2 = rng.uniform(0.3, 4, k), rng.uniform(0.3, 4, k)

    def two(r, m):
        first = r.random(m) < 0.5
        return np.where(first[:, None], r.dirichlet(a1, m), r.dirichlet(a2, m))
    return kind, two


def random_map(rng, k):
    kind = rng.choice(["identity", "temperature", "bias", "power", "mix", "matrix", "warp", "step"])
    log = lambda f: np.log(np.maximum(f, 1e-300))
    if kind == "identity":
        return kind, lambda f: f
    if kind == "temperature":
        t = np.exp(rng.uniform(np.log(0.5), np.log(2.2)))
        return kind, lambda f: softmax(log(f) / t)
    if kind == "bias":
        b = rng.normal(0, rng.uniform(0.2, 1.0), k)
        return kind, lambda f: softmax(log(f) + b)
    if kind == "power":
        a = rng.uniform(0.6, 1.6, k)
        return kind, lambda f: softmax(a * log(f))
    if kind == "mix":
        lam, u = rng.uniform(0.05, 0.4), rng.dirichlet(np.full(k, 2.0))
        return kind, lambda f: (1 - lam) * f + lam * u
    if kind == "matrix":
        w = np.eye(k) + rng.uniform(0.1, 0.5) * rng.standard_normal((k, k))
        return kind, lambda f: softmax(log(f) @ w.T)
    if kind == "warp":  # Kumaraswamy CDF 1 - (1 - x^a)^b per class: monotone, bending either way
        a, b = rng.uniform(0.6, 2.0, k), rng.uniform(0.6, 2.0, k)
        return kind, lambda f: normalised(1 - (1 - np.clip(f, 0, 1) ** a) ** b + 1e-12)
    threshold, jump = rng.uniform(0.2, 0.7, k), np.exp(rng.uniform(-1, 1, k))
    return kind, lambda f: normalised(f * np.where(f > threshold, jump, 1.0))


def random_model(rng):
    k = int(rng.choice([2, 3, 4, 6, 8, 12]))
    n = int(rng.choice([1000, 3000, 8000]))
    base_name, base = random_base(rng, k)
    maps = [random_map(rng, k) for _ in range(rng.integers(1, 3))]

    def q(f):
        for _, m in maps:
            f = m(f)
        return f
    return base_name + "+" + "+".join(name for name, _ in maps), k, n, base, q


def one_dimensional_truth(s, t, p):
    order = np.argsort(s, kind="stable")
    s, t = s[order], t[order]
    n, w = len(s), int(2 * np.sqrt(len(s)))
    sums = [np.concatenate([[0.0], np.cumsum(v)]) for v in (s, t, s * s, s * t)]
    lo = np.clip(np.arange(n) - w // 2, 0, n - w)
    hi = lo + w
    ms, mt, mss, mst = ((c[hi] - c[lo]) / w for c in sums)
    vs, cv = mss - ms * ms, mst - ms * mt
    m = mt + np.where(vs > 1e-300, cv / np.maximum(vs, 1e-300), 0.0) * (s - ms)
    return np.mean(np.abs(m - s) ** p)


def truths(base, q, k, seed):
    r = np.random.default_rng(seed)
    f = base(r, TRUTH_DRAWS)
    g = q(f)
    top = f.argmax(axis=1)
    rows = np.arange(len(f))
    out = {}
    for p in (1, 2):
        out["canonical", p] = np.mean(np.sum(np.abs(g - f) ** p, axis=1))
        out["marginal", p] = sum(one_dimensional_truth(f[:, c], g[:, c], p) for c in range(k))
        out["top_label", p] = one_dimensional_truth(f[rows, top], g[rows, top], p)
    return out


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    models = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sets = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    only = sys.argv[4] if len(sys.argv) > 4 else None
    rng = np.random.default_rng(seed)
    print("model,K,n,type,p,truth,mean,relative_error,z,covered,sets,pilot", flush=True)
    rows = []
    for index in range(models):
        name, k, n, base, q = random_model(rng)
        if only is not None and name != only:
            continue
        truth = truths(base, q, k, [seed, index])
        readings = {key: [] for key in truth}
        for s in range(sets):
            r = np.random.default_rng([seed, index, s + 1])
            f = base(r, n)
            y = np.minimum((r.random((n, 1)) > q(f).cumsum(axis=1)).sum(axis=1), k - 1).astype(np.int64)
            for type_, p in truth:
                e = ecekde.estimate(f, y, type=type_, p=p, progress=False)
                readings[type_, p].append((e.ce_pow_p, e.ce_pow_p_interval.lower, e.ce_pow_p_interval.upper, e.pilot))
        for (type_, p), v in readings.items():
            t = truth[type_, p]
            values = np.array([x[0] for x in v])
            se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
            covered = sum(lower <= t <= upper for _, lower, upper, _ in v)
            rel = values.mean() / t - 1 if t > 1e-9 else float("nan")
            z = (values.mean() - t) / se if se > 0 else 0.0
            rows.append((name, k, type_, p, t, values.mean(), rel, z, covered, len(v)))
            print(f"{name},{k},{n},{type_},{p},{t:.6g},{values.mean():.6g},{rel:+.4f},{z:+.2f},{covered},{len(v)},{v[0][3]}",
                  flush=True)
    summarize(rows)


def summarize(rows):
    """Miscalibrated figures whose truth is large enough for a relative error to mean something (CE_1 above
    0.02, CE_2^2 above 0.005), the coverage of every interval, and the largest reading of a calibrated model."""
    scored = [r for r in rows if r[4] > (0.02 if r[3] == 1 else 0.005)]
    within = lambda x: sum(abs(r[6]) <= x for r in scored)
    covered, sets = sum(r[8] for r in rows), sum(r[9] for r in rows)
    err = sys.stderr
    print(f"{len(scored)} figures scored: {within(0.1)} within 10% of the truth, {within(0.2)} within 20%, "
          f"median error {100 * np.median([abs(r[6]) for r in scored]):.1f}%", file=err)
    print(f"intervals holding the truth: {covered} of {sets} ({100 * covered / sets:.1f}%)", file=err)
    calibrated = [r for r in rows if r[4] < 1e-9 and r[3] == 1]
    if calibrated:
        print(f"calibrated models: largest mean CE_1 {max(r[5] for r in calibrated):.4f}", file=err)
    for r in scored:
        if abs(r[6]) > 0.1:
            print(f"  beyond 10%: {r[0]} K={r[1]} {r[2]} p={r[3]}: {r[5]:.4g} against {r[4]:.4g} "
                  f"({100 * r[6]:+.1f}%, {r[7]:+.1f} se), {r[8]} of {r[9]} intervals", file=err)


if __name__ == "__main__":
    main()
