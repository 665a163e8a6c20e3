"""Forward + backward time of the ecekde op against autograd through a direct PyTorch implementation of
the same formula (torch/tests/kde_reference.py), per batch size and class count. Prints a Markdown table.

    /usr/bin/python3 bench/torch/bench_op.py --library build/torch/libecekde_torch.so --threads 1

Both sides run with the same thread count (torch.set_num_threads and the op's threads argument) on the
same float32 probabilities (a leaf, as softmax output would be), at the same fixed bandwidth; "op, auto h"
adds the per-batch LOO-likelihood bandwidth choice. The three run in turn, round after round, and each
figure is the median of its calls (each side runs for at least --min-time seconds)."""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "torch", "tests"))
import kde_reference  # noqa: E402


def interleaved_medians(calls, min_time, min_rounds=5, warmup=2):
    """Median seconds per call of each of `calls`, run in turn round after round (so that a change in
    machine load hits all of them alike) until each has run for about min_time."""
    for _ in range(warmup):
        for call in calls:
            call()
    times = [[] for _ in calls]
    while len(times[0]) < min_rounds or min(sum(t) for t in times) < min_time:
        for call, t in zip(calls, times):
            t0 = time.perf_counter()
            call()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--library", default="build/torch/libecekde_torch.so")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sizes", default="64,128,256,512,1024")
    parser.add_argument("--classes", default="10,100")
    parser.add_argument("--type", default="canonical", choices=["canonical", "marginal", "top-label", "binary"])
    parser.add_argument("--p", type=float, default=1.0)
    parser.add_argument("--bandwidth", type=float, default=0.01)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds of repeated calls per figure")
    args = parser.parse_args()

    torch.ops.load_library(args.library)
    torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    op = torch.ops.ecekde.calibration_error
    print(f"ecekde op vs PyTorch autograd: type {args.type}, p = {args.p}, h = {args.bandwidth}, {args.dtype}, "
          f"{args.threads} thread(s), torch {torch.__version__}, interleaved, median of >= {args.min_time} s per figure\n")
    print("| n | K | op fwd+bwd (ms) | op, auto h (ms) | PyTorch autograd (ms) | PyTorch / op | rel. value diff |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for k in (int(v) for v in args.classes.split(",")):
        for n in (int(v) for v in args.sizes.split(",")):
            g = torch.Generator().manual_seed(n * 1000 + k)
            probs = torch.softmax(2 * torch.randn(n, k, generator=g), 1).to(dtype).requires_grad_()
            labels = torch.randint(0, 2 if args.type == "binary" else k, (n,), generator=g)
            if args.type == "binary":
                probs = probs[:, :1].detach().requires_grad_()

            def ours(h=args.bandwidth):
                torch.autograd.grad(op(probs, labels, args.type, args.p, h, threads=args.threads), probs)

            def theirs():
                torch.autograd.grad(kde_reference.calibration_error(probs, labels, args.type, args.p, args.bandwidth),
                                    probs)

            with torch.no_grad():
                a = op(probs, labels, args.type, args.p, args.bandwidth, threads=args.threads).item()
                b = kde_reference.calibration_error(probs, labels, args.type, args.p, args.bandwidth).item()
            t_op, t_auto, t_ref = interleaved_medians([ours, lambda: ours(None), theirs], args.min_time)
            print(f"| {n} | {k} | {1e3 * t_op:.3f} | {1e3 * t_auto:.3f} | {1e3 * t_ref:.3f} | {t_ref / t_op:.1f} | "
                  f"{abs(a - b) / abs(b):.1e} |", flush=True)


if __name__ == "__main__":
    main()
