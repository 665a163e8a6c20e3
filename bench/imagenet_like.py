#!/usr/bin/env python3
"""Writes ImageNet-shaped predictions for the large-K benchmarks: n rows of K = 1,000 classes.

Labels are uniform over the classes; logits are 2 N(0, 1) per class plus 9 + 2 N(0, 1) on the true class,
divided by a temperature of 0.6, then a softmax. With the defaults the top-1 accuracy is about 0.80 and
the mean confidence about 0.77, close to a ResNet-50 on the ImageNet validation set.

    /usr/bin/python3 bench/imagenet_like.py --n 50000 --out /tmp/inet   # probs_50000_1000.npy, labels_...
"""
import argparse
import os

import numpy as np


def draw(n, classes, rng):
    """The predictions (n x classes, float64) and labels (int64); bench/shapes.py imports it."""
    labels = rng.integers(0, classes, size=n)
    logits = 2.0 * rng.standard_normal((n, classes))
    logits[np.arange(n), labels] += 9.0 + 2.0 * rng.standard_normal(n)
    logits /= 0.6
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    return probs, labels.astype(np.int64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50000)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="directory for the two .npy files")
    args = parser.parse_args()
    probs, labels = draw(args.n, args.classes, np.random.default_rng(args.seed))
    os.makedirs(args.out, exist_ok=True)
    tag = f"{args.n}_{args.classes}"
    np.save(os.path.join(args.out, f"probs_{tag}.npy"), probs)
    np.save(os.path.join(args.out, f"labels_{tag}.npy"), labels.astype(np.int64))
    print(f"n = {args.n}, K = {args.classes}: accuracy {np.mean(probs.argmax(1) == labels):.3f}, "
          f"mean confidence {probs.max(1).mean():.3f}")


if __name__ == "__main__":
    main()
