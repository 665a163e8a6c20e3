#!/usr/bin/env bash
# Reproduces the paper's Figure 3 (bias of the sharpness term versus n; docs/validation.md):
# builds ecekde_figure3, runs it (about 2 minutes of CPU on 2 idle cores with the defaults), writes
# results/figure3.{csv,txt} and plots docs/figures/figure3_debiasing.png.
# Environment: BUILD (build directory, default <repo>/build), JOBS, PYTHON (needs numpy and matplotlib).
# Extra arguments go to ecekde_figure3 (e.g. --reps 10000 --samples-per-n 67108864 --truth-samples 1e8).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DECEKDE_EXPERIMENTS=ON >/dev/null
cmake --build "$build" --target ecekde_figure3 -j "${JOBS:-2}"
mkdir -p "$here/results" "$root/docs/figures"
"$build/experiments/debiasing/ecekde_figure3" --out "$here/results/figure3.csv" "$@" | tee "$here/results/figure3.txt"
"${PYTHON:-/usr/bin/python3}" "$here/plot_figure3.py" "$here/results/figure3.csv" "$root/docs/figures/figure3_debiasing.png"
