#!/usr/bin/env bash
# The convergence study of the paper's Figure 2 (docs/validation.md, section 3): builds
# ecekde_convergence, runs it on the synthetic model (K = 4 and 8, t1 = t2 = 0.6, n = 100 ... 20,000) into
# results/ and on a calibrated control (K = 3, t2 = 1, truth 0) into results/calibrated/, runs the
# diagnosis ecekde_bandwidth_curve (docs/validation.md, section 4.2) into results/bandwidth_curve_K4.*,
# then writes results/summary.{csv,md} and docs/figures/convergence_{figure2,error,improved}.png.
# About 95 minutes on 2 cores by the seconds columns (K = 4: 32, K = 8: 45, the calibrated control: 18; the
# n = 20,000 data sets dominate); resumable: rerunning skips the data sets already in estimates.csv and
# continues an interrupted run (delete results/ to start afresh).
# Environment: BUILD (default <repo>/build), JOBS, PYTHON (needs numpy and matplotlib).
# Extra arguments go to both runs of ecekde_convergence (e.g. --reps 10 --threads 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DECEKDE_EXPERIMENTS=ON >/dev/null
cmake --build "$build" --target ecekde_convergence ecekde_bandwidth_curve -j "${JOBS:-2}"
mkdir -p "$here/results/calibrated" "$root/docs/figures"
program="$build/experiments/convergence/ecekde_convergence"
schedule=(--n 100,200,500,1000,2000,5000,10000,20000 --reps 20 --full-reps-up-to 1000 --min-reps 4)
"$program" --classes 4,8 "${schedule[@]}" --out-dir "$here/results" "$@" | tee "$here/results/truth.txt"
"$program" --classes 3 --t2 1 "${schedule[@]}" --out-dir "$here/results/calibrated" "$@"
"$build/experiments/convergence/ecekde_bandwidth_curve" --out "$here/results/bandwidth_curve_K4.csv" \
  >"$here/results/bandwidth_curve_K4.txt"
"${PYTHON:-/usr/bin/python3}" "$here/summarize.py" "$here/results" "$root/docs/figures/convergence" \
  --calibrated "$here/results/calibrated"
