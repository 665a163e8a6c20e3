#!/usr/bin/env bash
# Coverage of the 95% bootstrap intervals (docs/validation.md, section 5): builds ecekde_coverage, runs
# it on 200 synthetic data sets per n (K = 4, t1 = t2 = 0.6, n = 200, 500, 1000, 2000; B = 100) into
# results/, then writes results/summary.md and docs/figures/coverage.png.
# About 30 minutes of CPU on 2 cores; resumable (delete results/ to start afresh).
# Environment: BUILD (default <repo>/build), JOBS, PYTHON (needs numpy and matplotlib).
# Extra arguments go to ecekde_coverage (e.g. --sets 50 --n 500,2000).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DECEKDE_EXPERIMENTS=ON >/dev/null
cmake --build "$build" --target ecekde_coverage -j "${JOBS:-2}"
mkdir -p "$here/results" "$root/docs/figures"
"$build/experiments/coverage/ecekde_coverage" --out-dir "$here/results" "$@"
"${PYTHON:-/usr/bin/python3}" "$here/summarize.py" "$here/results" "$root/docs/figures/coverage.png"
