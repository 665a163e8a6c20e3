#!/usr/bin/env bash
# The canonical pilot's trees candidate on and off on the same local-map data sets (docs/validation.md, "The
# trees candidate, paired"; docs/history.md, 7.25), written to results/trees_paired.csv: the consistency
# program of the commit before the candidate (17f3bcc, "without") and of this tree ("with"), draw 1, three
# data sets, K = 3, 6, 10 at n = 3,000 and 10,000, with a column `trees` naming the build. About 40 minutes
# on the shared two-core machine. Run from the repository root after building (make build).
set -euo pipefail
out=experiments/consistency/results/trees_paired.csv
before=$(mktemp -d)
trap 'git worktree remove --force "$before/src" 2>/dev/null || true; rm -rf "$before"' EXIT
git worktree add --detach "$before/src" 17f3bcc > /dev/null
cmake -S "$before/src" -B "$before/build" -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$before/build" --target ecekde_consistency -j 2 > /dev/null
run() {  # build label, program
  { "$2" 1 3 3,6,10 3000; "$2" 1 3 3,6,10 10000 | tail -n +2; } | awk -v t="$1" 'NR == 1 {print "trees," $0; next} {print t "," $0}'
}
{
  run without "$before/build/experiments/consistency/ecekde_consistency"
  run with build/experiments/consistency/ecekde_consistency | tail -n +2
} > "$out"
