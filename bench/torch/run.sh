#!/bin/sh
# The torch-operator benchmarks of docs/benchmarks.md ("Gradients and the torch operator"), one command:
#
#   bench/torch/run.sh [BUILD_DIR [THREADS]]        (defaults: build, 1)
#
# Builds the op (ecekde_torch) in BUILD_DIR (configuring it first if needed), then prints Markdown:
# forward + backward of the op vs autograd through a direct PyTorch implementation (bench_op.py), and the
# op's share of a small CNN's training step (bench_train_step.py). Both use Debian's /usr/bin/python3
# with python3-torch and THREADS threads on every side. Takes about two minutes on a quiet machine.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:-$root/build}")
threads=${2:-1}
python=/usr/bin/python3

[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target ecekde_torch -j 2 >/dev/null
library="$build/torch/libecekde_torch.so"

echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores;" \
     "ecekde $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u '+%Y-%m-%d %H:%M UTC');" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$python" "$root/bench/torch/bench_op.py" --library "$library" --threads "$threads"
echo
"$python" "$root/bench/torch/bench_train_step.py" --library "$library" --threads "$threads"
