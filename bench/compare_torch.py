#!/usr/bin/env python3
"""ecekde against a direct PyTorch implementation of the canonical estimator (Eq. 9) that stores the
n x n log-kernel matrix -- what a user would write -- on the same inputs, at the same thread count.

Run with Debian's interpreter (it has numpy and torch):
    /usr/bin/python3 bench/compare_torch.py --build build --threads 2 --sizes 1000 2000 4000 8000
Prints a table (median seconds over repeats, peak RSS of the PyTorch version, the ratio) and checks
that both give the same value.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def direct_torch(f, y, h):
    """Canonical CE_1^1 from the paper's formula with the full n x n matrix (log-space, as a careful
    user would write it: logsumexp per row, diagonal excluded)."""
    n, k = f.shape
    alpha = f / h + 1
    log_norm = torch.lgamma(alpha.sum(1)) - torch.lgamma(alpha).sum(1)          # per centre i
    log_f = torch.log(f.clamp_min(torch.finfo(f.dtype).tiny))
    log_k = log_f @ (alpha - 1).T + log_norm[None, :]                            # [j, i]
    log_k.fill_diagonal_(-float("inf"))
    onehot = torch.nn.functional.one_hot(y, k).to(f.dtype)
    m = log_k.max(1, keepdim=True).values
    w = torch.exp(log_k - m)
    ratio = (w @ onehot) / w.sum(1, keepdim=True)
    return (ratio - f).abs().sum(1).mean()


def make_data(n, k, seed):
    rng = np.random.default_rng(seed)
    z = 2 * rng.standard_normal((n, k))
    f = np.exp(z - z.max(1, keepdims=True))
    f /= f.sum(1, keepdims=True)
    t = np.exp(z / 1.5 - (z / 1.5).max(1, keepdims=True))
    t /= t.sum(1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in t], dtype=np.int64)
    return f, y


def time_torch(f, y, h, repeats):
    ft, yt = torch.from_numpy(f), torch.from_numpy(y)
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = float(direct_torch(ft, yt, h))
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2], value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--h", type=float, default=0.01)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    timer = os.path.join(args.build, "bench", "ecekde_time_estimate")
    print(f"canonical, K = {args.k}, h = {args.h}, float64, {args.threads} threads "
          f"(torch {torch.__version__}, {torch.get_num_threads()} threads), median of {args.repeats}")
    print(f"{'n':>7} {'ecekde s':>10} {'torch s':>10} {'ratio':>7} {'torch peak RSS':>15} {'|diff|':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            f, y = make_data(n, args.k, n)
            pf, py = os.path.join(tmp, "p.npy"), os.path.join(tmp, "y.npy")
            np.save(pf, f)
            np.save(py, y)
            out = subprocess.run([timer, pf, py, str(args.h), str(args.threads), str(args.repeats)],
                                 check=True, capture_output=True, text=True).stdout
            ours = json.loads(out)
            # the PyTorch run in a child process, so its peak RSS is its own
            code = ("import sys, resource, numpy as np, torch; sys.path.insert(0, %r); "
                    "import compare_torch as c; torch.set_num_threads(%d); "
                    "f = np.load(%r); y = np.load(%r); t, v = c.time_torch(f, y, %r, %d); "
                    "print(t, v, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
                    % (os.path.dirname(os.path.abspath(__file__)), args.threads, pf, py, args.h, args.repeats))
            t_torch, v_torch, rss_kb = subprocess.run([sys.executable, "-c", code], check=True,
                                                      capture_output=True, text=True).stdout.split()
            t_torch, v_torch = float(t_torch), float(v_torch)
            print(f"{n:>7} {ours['median_s']:>10.4f} {t_torch:>10.4f} {t_torch / ours['median_s']:>7.1f} "
                  f"{int(rss_kb) / 1024:>12.0f} MB {abs(v_torch - ours['ce_pow_p']):>9.1e}")


if __name__ == "__main__":
    main()
