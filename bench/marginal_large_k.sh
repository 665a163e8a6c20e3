#!/bin/sh
# The marginal estimate on ImageNet-shaped predictions (issue "the engine at the limit", item 2: under
# 2 minutes at n = 50,000, K = 1,000 with the automatic bandwidth): generates n rows of K = 1,000 classes
# with bench/imagenet_like.py's generator (seed 0, as bench/report_large_k.sh) and prints the wall time and
# peak memory of `ecekde estimate --type marginal` with the given estimator: crossfit (the default) or
# paper. bench/shapes_time.py does the work; it times the other kinds of predictions as well. Not part of
# the tests: at n = 50,000 it takes about 2 minutes (crossfit) or 5 (paper) on two cores.
#
#     bench/marginal_large_k.sh build 50000          # BUILD_DIR N [ESTIMATOR] [THREADS]
set -eu
usage="usage: bench/marginal_large_k.sh BUILD_DIR N [ESTIMATOR] [THREADS]"
build=${1:?$usage}
n=${2:?$usage}
exec /usr/bin/python3 "$(dirname "$0")/shapes_time.py" "$build" "$n" 1000 marginal imagenet-like \
  --estimator "${3:-crossfit}" --threads "${4:-2}"
