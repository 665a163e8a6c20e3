#!/usr/bin/env python3
"""Compares two builds' estimates on each kind of bench/shapes.py's predictions: how far a change moved them.

Draws the inputs once (bench/shapes.py, every kind unless some are named), runs
`ecekde estimate --type TYPE --json` of both builds on each (2 threads), and prints per kind and type the
relative change of CE_p^p and of its standard error, whether the chosen bandwidth is the same, the largest
relative change of a marginal class's CE_p^p (against the largest class figure), and both builds' times.
Exits 1 if a run fails. Not part of the tests.

    /usr/bin/python3 bench/compare_estimates.py OLD_BUILD NEW_BUILD N K TYPE [KIND ...] [--p P]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import shapes


def estimate(build, probs, labels, kind_type, p, threads):
    command = [os.path.join(build, "cli", "ecekde"), "estimate", "--probs", probs, "--labels", labels,
               "--type", kind_type, "--p", str(p), "--threads", str(threads), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["results"], wall


def relative(new, old):
    return abs(new - old) / abs(old) if old else abs(new - old)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("n", type=int)
    parser.add_argument("k", type=int)
    parser.add_argument("type")
    parser.add_argument("kinds", nargs="*", default=list(shapes.KINDS))
    parser.add_argument("--p", type=float, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        files = {kind: shapes.write(kind, args.n, args.k, args.seed, data) for kind in args.kinds}
        print("| kind | type | CE_p^p (new) | its change | SE change | same h | largest class change | old s | new s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for kind in args.kinds:
            probs, labels = files[kind]
            old, old_wall = estimate(args.old, probs, labels, args.type, args.p, args.threads)
            new, new_wall = estimate(args.new, probs, labels, args.type, args.p, args.threads)
            for a, b in zip(old, new):
                classes = ""
                if a.get("class_ce_pow_p"):
                    top = max(abs(v) for v in a["class_ce_pow_p"]) or 1
                    classes = f"{max(abs(x - y) for x, y in zip(b['class_ce_pow_p'], a['class_ce_pow_p'])) / top:.1e}"
                print(f"| {kind} | {b['type']} | {b['ce_pow_p']:.6g} | {relative(b['ce_pow_p'], a['ce_pow_p']):.1e} | "
                      f"{relative(b['standard_error'], a['standard_error']):.1e} | "
                      f"{'yes' if a['bandwidth'] == b['bandwidth'] else 'no'} | {classes} | "
                      f"{old_wall:.1f} | {new_wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
