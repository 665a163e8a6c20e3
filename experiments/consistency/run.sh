#!/usr/bin/env bash
# The consistency study (docs/validation.md, "Consistency on local maps"; docs/history.md, 7.18): the default
# estimator against n on research::local_maps draw 1 (never used for design), written to
# results/local_maps.csv. The larger n take fewer K and data sets so that it fits the shared two-core machine:
# every K at n = 1,000 and 3,000 (5 sets), at 10,000 (5 sets) and at 30,000 (3 sets), K <= 10 at 100,000 (3
# sets; a canonical estimate at 100,000 took 11 to 39 s at K <= 10) and K = 20 at 100,000 (one set). About 135
# minutes beside other work on an AVX-512 EPYC of family 26, most of it n = 100,000 (K = 20 at 10,000, 30,000
# and 100,000: 5, 10 and 19 minutes). Run from the repository root after building (make build).
set -euo pipefail
bin=build/experiments/consistency/ecekde_consistency
out=experiments/consistency/results/local_maps.csv
mkdir -p "$(dirname "$out")"
{
  $bin 1 5 3,6,10,20 1000 3000
  $bin 1 5 3,6,10,20 10000 | tail -n +2
  $bin 1 3 3,6,10,20 30000 | tail -n +2
  $bin 1 3 3,6,10 100000 | tail -n +2
  $bin 1 1 20 100000 | tail -n +2
} > "$out"
