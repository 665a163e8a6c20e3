#!/usr/bin/env bash
# Reproduces the calibration-regularised training study of docs/training.md (the paper's Section 5 at
# this machine's scale): trains every method with several seeds, times XE against KDE-XE, and writes
# the tables and figures.
#
#   experiments/training/run_study.sh            # the full study (hours on 2 cores)
#   QUICK=1 experiments/training/run_study.sh    # the same pipeline on a few thousand images (minutes)
#
# Environment: BUILD (build directory, default build), RESULTS (default experiments/training/results,
# not committed), JOBS (runs in parallel, default 2), THREADS (per run, default 1), SEEDS (default
# "0 1 2"), NICE (default 10). Finished runs (their JSON exists) are skipped, so an interrupted study
# resumes where it stopped. Each run prints one progress line per epoch (also kept in RESULTS/logs).
# ONLY (an awk regular expression on the run names, e.g. "_s[12]$") trains just the matching runs and
# stops there: the timing and the report need the whole study.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
RESULTS=${RESULTS:-$ROOT/experiments/training/results}
JOBS=${JOBS:-2}
THREADS=${THREADS:-1}
SEEDS=${SEEDS:-"0 1 2"}
NICE=${NICE:-10}
QUICK=${QUICK:-0}
TOOL=$BUILD/torch/train/ecekde-train

if [ ! -x "$TOOL" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$BUILD" --target ecekde_train_cli -j 2
fi
mkdir -p "$RESULTS/runs" "$RESULTS/logs" "$RESULTS/probs"

# Study size. QUICK shrinks the data and epochs to check the pipeline, not to measure anything.
if [ "$QUICK" = 1 ]; then
  SIZE="--train-size 2000 --eval-size 1000 --bootstrap 20"
  RESNET_EPOCHS=1 MLP_EPOCHS=2 BINARY_EPOCHS=2 TIME_STEPS=10
else
  SIZE=""
  RESNET_EPOCHS=${RESNET_EPOCHS:-6} MLP_EPOCHS=${MLP_EPOCHS:-15} BINARY_EPOCHS=${BINARY_EPOCHS:-10} TIME_STEPS=200
fi
KDE_LAMBDAS="0.001 0.01 0.1 0.2 0.5"
MMCE_LAMBDAS="0.5 2 8"
SHARPNESS_GAMMAS="0.1 0.3 0.5 0.7 0.9"

# One line per run: NAME ARGS... Seed-major, so that an interrupted study already holds complete
# sweeps for the first seeds.
jobs() {
  for seed in $SEEDS; do
    for arch in mlp resnet; do
      if [ $arch = mlp ]; then model="--model mlp --width 256 --epochs $MLP_EPOCHS"
      else model="--model resnet --width 8 --epochs $RESNET_EPOCHS"; fi
      echo "${arch}_xe_s$seed $model --objective xe --seed $seed"
      echo "${arch}_focal53_s$seed $model --objective focal53 --seed $seed"
      echo "${arch}_focal3_s$seed $model --objective focal --gamma 3 --seed $seed"
      for l in $KDE_LAMBDAS; do echo "${arch}_kde-xe_l${l}_s$seed $model --objective kde-xe --lambda $l --seed $seed"; done
      for l in $MMCE_LAMBDAS; do echo "${arch}_mmce_l${l}_s$seed $model --objective mmce --lambda $l --seed $seed"; done
    done
    model="--model mlp --width 256 --epochs $BINARY_EPOCHS"
    echo "binary_mse_s$seed $model --objective mse --seed $seed"
    for g in $SHARPNESS_GAMMAS; do
      echo "binary_mse-sharpness_g${g}_s$seed $model --objective mse-sharpness --gamma $g --seed $seed"
    done
  done
}

run_one() {  # NAME ARGS...: one training run, skipped when its result exists
  local name=$1
  shift
  local out=$RESULTS/runs/$name.json
  [ -s "$out" ] && return 0
  # Progress lines go to the terminal and the log; the JSON appears only when the run completed.
  if nice -n "$NICE" "$TOOL" run "$@" $SIZE --threads "$THREADS" --out "$out.part" \
       --save-probs "$RESULTS/probs/$name" 2>&1 | tee "$RESULTS/logs/$name.log"; then
    [ -s "$out.part" ] && mv "$out.part" "$out"
  fi
  [ -s "$out" ] || echo "run $name failed (see $RESULTS/logs/$name.log)" >&2
}
export -f run_one
export TOOL RESULTS SIZE THREADS NICE

if [ -n "${ONLY:-}" ]; then
  jobs | awk -v only="$ONLY" '$1 ~ only' | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
  exit 0
fi

total=$(jobs | wc -l)
done_before=$(ls "$RESULTS/runs" | grep -c '\.json$' || true)
echo "training study: $total runs ($done_before already done), $JOBS at a time, results in $RESULTS"
jobs | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _

# Table 5: per-step time of KDE-XE (and MMCE) against XE on the same batches, alternating steps.
for arch in resnet mlp; do
  width=$([ $arch = mlp ] && echo 256 || echo 8)
  for objective in kde-xe mmce; do
    out=$RESULTS/timing_${arch}_$objective.json
    [ -s "$out" ] && continue
    nice -n "$NICE" "$TOOL" time --model $arch --width $width --objective $objective --lambda 0.1 \
      --steps $TIME_STEPS --threads "$THREADS" --out "$out"
  done
done

missing=$(jobs | while read -r name _; do [ -s "$RESULTS/runs/$name.json" ] || echo "$name"; done)
if [ -n "$missing" ]; then
  echo "not written (runs failed):" $missing >&2
  exit 1
fi
# The tables go into docs/training.md, the figures into docs/training/, the example predictions into
# examples/ (a QUICK study writes all of them under RESULTS instead).
if [ "$QUICK" = 1 ]; then
  report="--doc $RESULTS/training-quick.md --figures $RESULTS/figures --examples $RESULTS/examples"
else
  report="--doc $ROOT/docs/training.md --figures $ROOT/docs/training --examples $ROOT/examples"
fi
/usr/bin/python3 "$ROOT/experiments/training/report.py" --results "$RESULTS" $report
