#!/usr/bin/env bash
# The smoke test of the overconfident study's pipeline (ctest training.quick_study): a fresh QUICK run of
# run_overconfident.sh, then checks that every run, score and the report were written. Environment as for
# run_overconfident.sh (BUILD, RESULTS, PYTHON); RESULTS is emptied first.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${RESULTS:?set RESULTS to a scratch directory}"
rm -rf "$RESULTS"
QUICK=1 "$ROOT/experiments/training/run_overconfident.sh"
runs=$(ls "$RESULTS"/runs/*.json | wc -l)
scores=$(ls "$RESULTS"/scores/*.json | wc -l)
[ "$runs" -eq 9 ] || { echo "expected 9 runs, got $runs" >&2; exit 1; }
[ "$scores" -eq "$runs" ] || { echo "expected $runs score files, got $scores" >&2; exit 1; }
for text in "XE + TS" "KDE-XE debiased λ = 1" "canonical CE_1" "Paired differences"; do
  grep -q "$text" "$RESULTS/training-quick.md" || { echo "report lacks '$text'" >&2; exit 1; }
done
[ -s "$RESULTS/figures/overconfident_pareto.png" ] || { echo "no Pareto figure" >&2; exit 1; }
# Resume: a second call trains nothing and re-scores nothing.
QUICK=1 "$ROOT/experiments/training/run_overconfident.sh" > "$RESULTS/second.log"
grep -q "9 runs (9 already done)" "$RESULTS/second.log" || { echo "the second call did not resume" >&2; exit 1; }
echo "quick study: $runs runs, report and figure written"
