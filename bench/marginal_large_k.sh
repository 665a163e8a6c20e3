#!/bin/sh
# The marginal estimate on ImageNet-shaped predictions (issue "the engine at the limit", item 2: under
# 2 minutes at n = 50,000, K = 1,000 with the automatic bandwidth): generates n rows of K = 1,000 classes
# with bench/imagenet_like.py (seed 0, as bench/report_large_k.sh) and prints the wall time (and with GNU
# time, the peak memory) of `ecekde estimate --type marginal` with the given estimator: crossfit (the
# default) or paper. Not part of the tests: at n = 50,000 it takes about 2 minutes (crossfit) or 5 (paper)
# on two cores.
#
#     bench/marginal_large_k.sh build 50000          # BUILD_DIR N [ESTIMATOR] [THREADS]
set -eu
usage="usage: bench/marginal_large_k.sh BUILD_DIR N [ESTIMATOR] [THREADS]"
build=${1:?$usage}
n=${2:?$usage}
estimator=${3:-crossfit}
threads=${4:-2}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
/usr/bin/python3 "$(dirname "$0")/imagenet_like.py" --n "$n" --out "$data"
set -- "$build/cli/ecekde" estimate --estimator "$estimator" --probs "$data/probs_${n}_1000.npy" \
  --labels "$data/labels_${n}_1000.npy" --type marginal --threads "$threads"
what="n = $n, K = 1,000, $estimator, $threads threads"
if [ -x /usr/bin/time ]; then  # GNU time (Debian package time) also gives the peak memory
  /usr/bin/time -f "wall %e s, peak RSS %M KB ($what)" "$@"
else
  start=$(date +%s.%N)
  "$@"
  echo "wall $(awk "BEGIN { print $(date +%s.%N) - $start }") s ($what)"
fi
