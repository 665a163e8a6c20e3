#!/usr/bin/env python3
"""Times `ecekde estimate` (and `ecekde report`) on each kind of bench/shapes.py's predictions at one size.

Draws the inputs once (bench/shapes.py, every kind unless some are named), then runs
`ecekde estimate --type TYPE --json` on each kind, and `ecekde report` with --report, one after another
with 2 threads. Prints a line per kind and run: wall time, peak RSS (from GNU time, /usr/bin/time, the
Debian package time) and the estimates (CE_p per type, which must be finite), then the worst case over the
kinds, which is the figure the targets of issue 47 (item 5) are about. Exits 1 if a run fails or gives a
non-finite estimate. Not part of the tests: at n = 10,000, K = 100 and beyond it takes minutes.

    /usr/bin/python3 bench/shapes_time.py build 2000 10 all                     # BUILD N K TYPE [KIND ...]
    /usr/bin/python3 bench/shapes_time.py build 10000 100 marginal flat-tails zeros --report
    TYPE: canonical, marginal, top-label, binary, all, or none (with --report: the report alone)
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import shapes


GNU_TIME = "/usr/bin/time"  # Debian package time; without it the lines give no peak RSS


def run(command, stages):
    """Runs one command; returns (exit status, wall s, peak RSS MB or None, stdout, stderr lines to show)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        # GNU time reports its own small child's peak. This process's wait4 would not: a child's ru_maxrss
        # starts from the high-water mark of the process it was forked from, here Python with the inputs.
        if os.access(GNU_TIME, os.X_OK):
            command = [GNU_TIME, "-f", "%M", "-o", rss.name] + command
        start = time.perf_counter()
        rc = subprocess.run(command, stdout=out, stderr=err).returncode
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        text = out.read().decode()
        # --progress redraws its line with \r; the report's finished stages are the lines with ' ... '.
        lines = err.read().decode().replace("\r", "\n").splitlines()
        shown = [line for line in lines if " ... " in line] if stages else []
        if rc != 0:
            shown = lines[-3:]
        peak = rss.read().split()
        return rc, wall, int(peak[-1]) / 1024.0 if peak else None, text, shown


def estimates(text):
    """'type CE' pairs of an estimate's JSON, and whether every CE is finite."""
    results = json.loads(text)["results"]
    ce = [(r["type"], r["ce"]) for r in results]
    return ", ".join(f"{t} {c:.4g}" for t, c in ce), all(c is not None and math.isfinite(c) for _, c in ce)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="build directory (holds cli/ecekde)")
    parser.add_argument("n", type=int)
    parser.add_argument("classes", type=int, metavar="K")
    parser.add_argument("type", choices=["canonical", "marginal", "top-label", "binary", "all", "none"])
    parser.add_argument("kinds", nargs="*", metavar="KIND", help="default: all: " + ", ".join(shapes.KINDS))
    parser.add_argument("--report", action="store_true", help="also time `ecekde report` (B = 100)")
    parser.add_argument("--stages", action="store_true", help="print the report's stage times (--progress)")
    parser.add_argument("--estimator", default="crossfit", help="of the estimate (default crossfit)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", help="write the inputs here and keep them (default: a temporary directory)")
    args = parser.parse_args()
    for kind in args.kinds:
        if kind not in shapes.KINDS:
            parser.error(f"unknown kind {kind!r} (kinds: {', '.join(shapes.KINDS)})")
    if args.type == "none" and not args.report:
        parser.error("type none times nothing without --report")
    ecekde = os.path.join(args.build, "cli", "ecekde")
    kinds = args.kinds or list(shapes.KINDS)
    scratch = None if args.data else tempfile.TemporaryDirectory()
    data = args.data or scratch.name

    # Every input first, so that no run shares the machine with the generator.
    files = {kind: shapes.write(kind, args.n, args.classes, args.seed, data) for kind in kinds}
    threads = f"{args.threads} thread" + "s" * (args.threads != 1)
    print(f"n = {args.n}, K = {args.classes}, {args.estimator}, {threads}", flush=True)
    runs = []
    if args.type != "none":
        runs.append((f"estimate {args.type}", ["estimate", "--type", args.type, "--estimator", args.estimator,
                                                "--json"]))
    if args.report:
        runs.append(("report", ["report"] + (["--progress"] if args.stages else [])))
    failed = False
    worst = {}
    for kind in kinds:
        probs, labels = files[kind]
        for what, command in runs:
            rc, wall, rss, text, shown = run([ecekde] + command + ["--probs", probs, "--labels", labels,
                                                                  "--threads", str(args.threads)],
                                             args.stages)
            for line in shown:
                print(f"    {line}")
            line = f"{kind:13}  {what}: wall {wall:.2f} s, peak RSS " + (f"{rss:.0f} MB" if rss else "?")
            if rc != 0:
                line += f", FAILED (exit {rc})"
                failed = True
            elif what.startswith("estimate"):
                values, finite = estimates(text)
                line += f"; CE {values}" + ("" if finite else ", NOT FINITE")
                failed |= not finite
            print(line, flush=True)
            w = worst.setdefault(what, [(-1.0, ""), (-1.0, "")])
            w[0] = max(w[0], (wall, kind))
            w[1] = max(w[1], (rss or 0.0, kind))
    for what, ((wall, wall_kind), (rss, rss_kind)) in worst.items():
        print(f"{'worst case':13}  {what}: wall {wall:.2f} s ({wall_kind}), peak RSS "
              + (f"{rss:.0f} MB ({rss_kind})" if rss else "? (no /usr/bin/time: Debian package time)"))
    if scratch:
        scratch.cleanup()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
