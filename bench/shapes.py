#!/usr/bin/env python3
"""Writes predictions of several shapes (kinds) for the benchmarks: n rows of K classes per kind.

The engine's cost depends on how the scores spread, not only on n and K (issue 47, item 5), so the
benchmarks time several kinds of predictions at each size, not one generator. Each kind is written as
DIR/probs_KIND_N_K.npy (float64, n x K, rows summing to 1 within 1e-9) and DIR/labels_KIND_N_K.npy
(int64), and its accuracy and mean confidence are printed. Deterministic per seed; a kind's data does
not depend on which other kinds are drawn. Besides accuracy and confidence, each line gives the share of
exact zeros and the prior gap: the total-variation distance between the labels' class frequencies and
the predictions' average (sampling noise alone makes it large where n / K is small).

Most kinds draw the label y first, then logits z = sigma N(0, I) + b e_y. Under that model the true
posterior is softmax((b / sigma^2) z), so the predictions softmax(r (b / sigma^2) z) are calibrated at
r = 1, overconfident above, underconfident below: labels are neither trivially calibrated nor trivially
miscalibrated. The boost b is solved for a target top-1 accuracy at each K (the chance that the true
class's logit is the largest), so a kind has the same accuracy at K = 10 and K = 1,000.

    peaked        accuracy 0.93, overconfident (r = 1.5): confidences near 1
    flat-tails    logit noise sigma = 2.5 on every class, no temperature (r = sigma^2 / b: 1.9 at K = 10,
                  1.06 at K = 100, 0.8 at K = 1,000), accuracy 0.45: the tails are many near-equal small
                  probabilities (the issue's slow marginal case)
    low-accuracy  accuracy 0.40, overconfident (r = 2)
    label-shift   labels from a Zipf prior (class c with weight 1 / (c + 1)); predictions are the posterior
                  under a uniform prior (r = 1), so their average is far from the labels' frequencies
    zeros         accuracy 0.70, r = 1.5, probabilities below 1e-4 set to exactly 0 and the row renormalised
                  (a truncated output): about 30% of the entries at K = 10, 85% at K = 100, 98% at K = 1,000;
                  0.2% to 2% of the labels fall on a zero
    few-values    a model with 20 distinct prediction vectors (a tree's leaves): every score takes at most
                  20 values; each leaf's labels come from its vector at its own temperature (0.5 to 2)
    imagenet-like bench/imagenet_like.py's generator (seed as given, the same files as that script's); its
                  accuracy falls with K (0.98 at K = 10, 0.90 at K = 100, 0.82 at K = 1,000)

    /usr/bin/python3 bench/shapes.py --n 2000 --classes 10 --out /tmp/shapes            # every kind
    /usr/bin/python3 bench/shapes.py --n 2000 --classes 10 --out /tmp/shapes peaked zeros
"""
import argparse
import math
import os
import zlib

import numpy as np

import imagenet_like


def top1_accuracy(b, classes, sigma):
    """P(b + sigma X_0 > sigma max(X_1 .. X_{K-1})) for independent standard normals X."""
    x = np.linspace(-9.0, 9.0, 3601)
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)((x + b / sigma) / math.sqrt(2.0)))
    density = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return float(np.sum(density * cdf ** (classes - 1)) * (x[1] - x[0]))


def boost_for(accuracy, classes, sigma):
    """The boost b of the true class's logit that gives this top-1 accuracy (bisection)."""
    lo, hi = 0.0, 20.0 * sigma
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if top1_accuracy(mid, classes, sigma) < accuracy else (lo, mid)
    return 0.5 * (lo + hi)


def softmax(z):
    """Row softmax, in place (z is the caller's scratch): at 50,000 x 1,000 each copy is 400 MB."""
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def gaussian(labels, classes, rng, accuracy, sigma, r):
    """softmax(r (b / sigma^2) z) with z = sigma N(0, I) + b e_y and b set for the accuracy."""
    n = len(labels)
    b = boost_for(accuracy, classes, sigma)
    z = sigma * rng.standard_normal((n, classes))
    z[np.arange(n), labels] += b
    z *= r * b / sigma ** 2
    return softmax(z)


def peaked(n, classes, rng):
    labels = rng.integers(0, classes, size=n)
    return gaussian(labels, classes, rng, 0.93, 1.0, 1.5), labels


def flat_tails(n, classes, rng):
    labels = rng.integers(0, classes, size=n)
    b = boost_for(0.45, classes, 2.5)
    z = 2.5 * rng.standard_normal((n, classes))
    z[np.arange(n), labels] += b
    return softmax(z), labels  # no temperature: the logits' own scale


def low_accuracy(n, classes, rng):
    labels = rng.integers(0, classes, size=n)
    return gaussian(labels, classes, rng, 0.40, 1.0, 2.0), labels


def label_shift(n, classes, rng):
    prior = 1.0 / np.arange(1, classes + 1)
    labels = rng.choice(classes, size=n, p=prior / prior.sum())
    return gaussian(labels, classes, rng, 0.70, 1.0, 1.0), labels


def zeros(n, classes, rng):
    labels = rng.integers(0, classes, size=n)
    probs = gaussian(labels, classes, rng, 0.70, 1.0, 1.5)
    probs[probs < 1e-4] = 0.0  # the top class is >= 1 / K > 1e-4 for K < 10^4, so no row empties
    return probs / probs.sum(axis=1, keepdims=True), labels


def few_values(n, classes, rng, leaves=20):
    centre = rng.integers(0, classes, size=leaves)
    b = boost_for(0.70, classes, 1.0)
    z = rng.standard_normal((leaves, classes))
    z[np.arange(leaves), centre] += b
    vectors = softmax(b * z)
    # Each leaf's labels follow its vector at another temperature: some leaves over-, some underconfident.
    truth = softmax(b * np.exp(rng.uniform(-0.7, 0.7, size=(leaves, 1))) * z)
    leaf = rng.integers(0, leaves, size=n)
    labels = np.empty(n, dtype=np.int64)
    for i in range(leaves):
        rows = np.flatnonzero(leaf == i)
        labels[rows] = rng.choice(classes, size=len(rows), p=truth[i])
    return vectors[leaf], labels


KINDS = {
    "peaked": peaked,
    "flat-tails": flat_tails,
    "low-accuracy": low_accuracy,
    "label-shift": label_shift,
    "zeros": zeros,
    "few-values": few_values,
    "imagenet-like": imagenet_like.draw,
}


def draw(kind, n, classes, seed):
    """(probs, labels) of one kind. imagenet-like keeps imagenet_like.py's stream; the others get a stream
    of their own per (seed, kind), so a kind's data does not depend on which kinds are drawn with it."""
    if kind == "imagenet-like":
        rng = np.random.default_rng(seed)
    else:
        rng = np.random.default_rng([seed, zlib.crc32(kind.encode())])
    probs, labels = KINDS[kind](n, classes, rng)
    probs = np.ascontiguousarray(probs, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    # The CLI rejects rows off 1 by more than 1e-6; hold the data to 1e-9.
    assert probs.shape == (n, classes) and labels.shape == (n,)
    assert np.all(probs >= 0.0) and np.all(np.abs(probs.sum(axis=1) - 1.0) <= 1e-9), kind
    assert labels.min() >= 0 and labels.max() < classes, kind
    return probs, labels


def paths(out, kind, n, classes):
    tag = f"{kind}_{n}_{classes}"
    return os.path.join(out, f"probs_{tag}.npy"), os.path.join(out, f"labels_{tag}.npy")


def write(kind, n, classes, seed, out):
    """Draws one kind, writes its two files, prints a line about it and returns the files' paths."""
    probs, labels = draw(kind, n, classes, seed)
    probs_path, labels_path = paths(out, kind, n, classes)
    os.makedirs(out, exist_ok=True)
    np.save(probs_path, probs)
    np.save(labels_path, labels)
    print(f"{kind:13}  n = {n}, K = {classes}: accuracy {np.mean(probs.argmax(1) == labels):.3f}, "
          f"mean confidence {probs.max(1).mean():.3f}, exact zeros {np.mean(probs == 0.0):.1%}, prior gap "
          f"{0.5 * np.abs(np.bincount(labels, minlength=classes) / n - probs.mean(0)).sum():.3f}", flush=True)
    return probs_path, labels_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--classes", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="directory for the .npy files")
    parser.add_argument("kinds", nargs="*", metavar="KIND",
                        help="kinds to draw (default: all): " + ", ".join(KINDS))
    args = parser.parse_args()
    for kind in args.kinds:
        if kind not in KINDS:
            parser.error(f"unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
    for kind in args.kinds or KINDS:
        write(kind, args.n, args.classes, args.seed, args.out)


if __name__ == "__main__":
    main()
