#!/bin/sh
# `ecekde report` on ImageNet-shaped predictions (issue "the engine at the limit", item 3): generates n rows
# of K = 1,000 classes with bench/imagenet_like.py (softmax of 2 N(0, 1) logits plus 9 + 2 N(0, 1) on the
# uniformly drawn true class, at temperature 0.6; seed 0) and prints the report's stage times (its
# --progress lines) and the wall time. Not part of the tests: at n = 5,000 it takes about 3 minutes on
# two cores, at the ImageNet validation set's n = 50,000 about an hour (docs/benchmarks.md).
#
#     bench/report_large_k.sh build 5000          # BUILD_DIR N [THREADS]
set -eu
build=${1:?usage: bench/report_large_k.sh BUILD_DIR N [THREADS]}
n=${2:?usage: bench/report_large_k.sh BUILD_DIR N [THREADS]}
threads=${3:-2}
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
/usr/bin/python3 "$(dirname "$0")/imagenet_like.py" --n "$n" --out "$data"
start=$(date +%s)
"$build/cli/ecekde" report --probs "$data/probs_${n}_1000.npy" --labels "$data/labels_${n}_1000.npy" \
  --threads "$threads" --progress 2>&1 >/dev/null | tr '\r' '\n' | grep -F ' ... '
echo "wall $(( $(date +%s) - start )) s (n = $n, K = 1,000, B = 100, $threads threads)"
