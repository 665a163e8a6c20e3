#!/usr/bin/env bash
# Ground truths of the synthetic model (docs/validation.md, "Ground truth"): builds
# ecekde_synthetic_truth, computes the canonical, marginal and top-label CE_p^p for K = 4 and 8, p = 1
# and 2, checks each against a brute-force estimate from 2^26 simulated samples (a few minutes of CPU),
# writes results/{truth,curves}.csv and plots docs/figures/synthetic_curves.png.
# Environment: BUILD (default <repo>/build), JOBS, PYTHON (needs numpy and matplotlib).
# Extra arguments go to ecekde_synthetic_truth (e.g. --classes 4,8 --p 1,2 --validation-samples 1e8).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DECEKDE_EXPERIMENTS=ON >/dev/null
cmake --build "$build" --target ecekde_synthetic_truth -j "${JOBS:-2}"
mkdir -p "$here/results" "$root/docs/figures"
"$build/experiments/synthetic/ecekde_synthetic_truth" --out-dir "$here/results" "$@" | tee "$here/results/truth.txt"
"${PYTHON:-/usr/bin/python3}" "$here/plot_curves.py" "$here/results/curves.csv" "$root/docs/figures/synthetic_curves.png"
