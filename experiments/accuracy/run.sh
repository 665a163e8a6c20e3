#!/usr/bin/env bash
# The accuracy study (docs/validation.md): truths, the side-by-side table at n = 3000,
# convergence over n and the intervals' coverage; then summarize.py writes summary.md and the figures.
# About 100 minutes on the shared two-core machine (truths 5, table 40, coverage 30, convergence 28, with
# other jobs running). Run from the repository root after building (make build).
set -euo pipefail
bin=build/experiments/accuracy/ecekde_accuracy
out=experiments/accuracy/results
mkdir -p "$out"
$bin truth 3 5 10 > "$out/truth.csv"
$bin table 3000 3 3 5 10 > "$out/table.csv"
$bin coverage 40 1000 3 10 > "$out/coverage_1000.csv"
$bin coverage 10 3000 3 10 > "$out/coverage_3000.csv"
$bin convergence 2 10 300 1000 3000 10000 30000 > "$out/convergence.csv"
/usr/bin/python3 experiments/accuracy/summarize.py "$out"
