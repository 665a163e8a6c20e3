#!/bin/sh
# `ecekde report` on ImageNet-shaped predictions (issue "the engine at the limit", item 3): generates n rows
# of K = 1,000 classes with bench/imagenet_like.py's generator (softmax of 2 N(0, 1) logits plus
# 9 + 2 N(0, 1) on the uniformly drawn true class, at temperature 0.6; seed 0) and prints the report's
# stage times (its --progress lines), the wall time and peak memory. bench/shapes_time.py does the work;
# it times the other kinds of predictions as well. Not part of the tests: at n = 5,000 it takes about
# 3 minutes on two cores, at the ImageNet validation set's n = 50,000 about an hour (docs/benchmarks.md).
#
#     bench/report_large_k.sh build 5000          # BUILD_DIR N [THREADS]
set -eu
build=${1:?usage: bench/report_large_k.sh BUILD_DIR N [THREADS]}
n=${2:?usage: bench/report_large_k.sh BUILD_DIR N [THREADS]}
exec /usr/bin/python3 "$(dirname "$0")/shapes_time.py" "$build" "$n" 1000 none imagenet-like \
  --report --stages --threads "${3:-2}"
