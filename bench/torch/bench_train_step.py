"""The op's cost inside one training step of a small CNN (batch 128, 10 classes, 28 x 28 grey images as
in Fashion-MNIST; random data, since the timing does not depend on it). Prints a Markdown table.

    /usr/bin/python3 bench/torch/bench_train_step.py --library build/torch/libecekde_torch.so --threads 1

Steps compared (SGD, forward + backward + update): XE = cross-entropy; KDE-XE = XE + lambda * canonical
CE_1^1 from the op on softmax(logits), at a fixed bandwidth and with the per-batch LOO-likelihood choice.
The variants run in turn, in a shuffled order each round, so that drift in machine load hits them alike; medians are
reported, and for KDE-XE also the median of its per-round difference to XE. "op alone" is the op's
forward + backward on the batch's probabilities, timed inside the same loop (caches as in training)."""
import argparse
import random
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def small_cnn(classes):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, classes))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="build/torch/libecekde_torch.so")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=40, help="timed steps per variant")
    parser.add_argument("--bandwidth", type=float, default=0.01)
    parser.add_argument("--lam", type=float, default=0.1, help="weight of the calibration term")
    args = parser.parse_args()

    torch.ops.load_library(args.library)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    classes = 10
    net = small_cnn(classes)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(args.batch, 1, 28, 28)
    y = torch.randint(0, classes, (args.batch,))
    op = torch.ops.ecekde.calibration_error

    def step(bandwidth, with_kde):
        opt.zero_grad()
        logits = net(x)
        loss = F.cross_entropy(logits, y)
        if with_kde:
            loss = loss + args.lam * op(torch.softmax(logits, 1), y, "canonical", 1.0, bandwidth, threads=args.threads)
        loss.backward()
        opt.step()

    probs = torch.softmax(net(x), 1).detach().requires_grad_()

    def op_alone(bandwidth):
        torch.autograd.grad(op(probs, y, "canonical", 1.0, bandwidth, threads=args.threads), probs)

    variants = {
        "XE": lambda: step(None, False),
        f"KDE-XE, h = {args.bandwidth}": lambda: step(args.bandwidth, True),
        "KDE-XE, LOO h per batch": lambda: step(None, True),
        f"op alone, h = {args.bandwidth}": lambda: op_alone(args.bandwidth),
        "op alone, LOO h per batch": lambda: op_alone(None),
    }
    times = {name: [] for name in variants}
    for _ in range(3):  # warm-up
        for call in variants.values():
            call()
    order = list(variants)
    shuffle = random.Random(0).shuffle
    for _ in range(args.steps):
        shuffle(order)  # no variant always follows the same one
        for name in order:
            t0 = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(t) for name, t in times.items()}
    xe = med["XE"]
    print(f"Training step of a small CNN (2 conv + 2 fc, {sum(p.numel() for p in net.parameters())} parameters), "
          f"batch {args.batch}, {classes} classes, {args.threads} thread(s), median of {args.steps} rounds\n")
    print("| step | median (ms) | relative to XE | added to XE: median of paired differences |")
    print("|---|---:|---:|---:|")
    for name, t in med.items():
        if name.startswith("KDE-XE"):  # each round ran XE and this step back to back
            added = statistics.median(a - b for a, b in zip(times[name], times["XE"]))
            extra = f"{1e3 * added:+.3f} ms ({100 * added / xe:+.1f}%)"
        else:
            extra = ""
        print(f"| {name} | {1e3 * t:.3f} | {100 * t / xe:.1f}% | {extra} |")

if __name__ == "__main__":
    main()
