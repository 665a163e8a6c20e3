#!/usr/bin/env bash
# Bias and convergence on real predictions (docs/validation.md, section 6; the paper's appendix "Bias and
# convergence rates"): builds ecekde_real and runs it on the Fashion-MNIST example predictions
# (examples/fashion_mnist_{xe,kde_xe}_probs.npy with examples/fashion_mnist_labels.npy; docs/training.md),
# all ten classes, and on the XE model restricted to the three classes it confuses most (T-shirt, pullover,
# shirt: 0, 2, 6), like the paper's three CIFAR-10 classes. Writes results/*.csv, results/summary.md and
# docs/figures/real_{error,estimates}.png. About 20 minutes of CPU on 2 cores.
# Environment: BUILD (default <repo>/build), JOBS, PYTHON (needs numpy and matplotlib), EXAMPLES (the
# directory holding the .npy files, default <repo>/examples).
# Extra arguments go to every run of ecekde_real (e.g. --reps 20).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
examples=${EXAMPLES:-$root/examples}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DECEKDE_EXPERIMENTS=ON >/dev/null
cmake --build "$build" --target ecekde_real -j "${JOBS:-2}"
mkdir -p "$here/results" "$root/docs/figures"
program="$build/experiments/real/ecekde_real"
labels="$examples/fashion_mnist_labels.npy"
"$program" --probs "$examples/fashion_mnist_xe_probs.npy" --labels "$labels" --name xe --out-dir "$here/results" "$@"
"$program" --probs "$examples/fashion_mnist_kde_xe_probs.npy" --labels "$labels" --name kde_xe --out-dir "$here/results" "$@"
"$program" --probs "$examples/fashion_mnist_xe_probs.npy" --labels "$labels" --name xe_3_classes --restrict 0,2,6 \
  --out-dir "$here/results" "$@"
"${PYTHON:-/usr/bin/python3}" "$here/summarize.py" "$here/results" "$root/docs/figures/real" xe kde_xe xe_3_classes
