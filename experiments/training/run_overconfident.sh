#!/usr/bin/env bash
# The training study where cross-entropy is overconfident (docs/training.md, "KDE-XE against an
# overconfident baseline"; issue 50): a ResNet-8 trained long on a small Fashion-MNIST subset without
# augmentation, with XE, KDE-XE (the paper's L1 canonical ECE^KDE, LOO-likelihood bandwidth per batch),
# KDE-XE with the library's debiased form as the regulariser, MMCE and FL-53, several seeds; XE + T is the
# XE runs after temperature scaling. Every test prediction is re-scored with the default (crossfit)
# estimator by report_overconfident.py, which writes the tables and the Pareto figure.
#
#   experiments/training/run_overconfident.sh            # the study (about 2.5 hours on one core)
#   QUICK=1 experiments/training/run_overconfident.sh    # the same pipeline, tiny (a minute or two)
#
# Environment: BUILD (build directory with ecekde-train and the Python module, default build), RESULTS
# (default experiments/training/results/overconfident; QUICK: .../overconfident-quick), JOBS (runs in
# parallel, default 1), THREADS (per run, default 1), SEEDS (default "0 1 2"), NICE (default 19), ONLY (an
# awk regular expression on run names: train just those and stop), NO_REPORT=1 (train only).
# Finished runs (their JSON exists) are skipped and the crossfit scores are cached per run, so an
# interrupted study resumes where it stopped. Runs are ordered seed-major: an interrupted study holds
# complete method sets for its first seeds.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  RESULTS=${RESULTS:-$ROOT/experiments/training/results/overconfident-quick}
else
  RESULTS=${RESULTS:-$ROOT/experiments/training/results/overconfident}
fi
JOBS=${JOBS:-1}
THREADS=${THREADS:-1}
SEEDS=${SEEDS:-"0 1 2"}
NICE=${NICE:-19}
TOOL=${TOOL:-$BUILD/torch/train/ecekde-train}
PYTHON=${PYTHON:-/usr/bin/python3}

if [ ! -x "$TOOL" ]; then
  echo "run_overconfident.sh: $TOOL not found; build it first:" >&2
  echo "  cmake -S $ROOT -B $BUILD -DECEKDE_TORCH=ON && cmake --build $BUILD --target ecekde_train_cli ecekde_python" >&2
  exit 2
fi
mkdir -p "$RESULTS/runs" "$RESULTS/logs" "$RESULTS/probs"

# The recipe (docs/training.md). QUICK shrinks everything to check the pipeline, not to measure.
MODEL="--model resnet --width 16"
if [ "$QUICK" = 1 ]; then
  SEEDS=${QUICK_SEEDS:-"0"}
  SIZE="--train-size 256 --eval-size 600 --bootstrap 10"
  EPOCHS=1
else
  SIZE="--train-size 2000 --bootstrap 100"
  EPOCHS=${EPOCHS:-40}
fi
TRAIN="$MODEL --epochs $EPOCHS --weight-decay 0 --validate-every $EPOCHS"
# The first tier's lambda of each regulariser, and the others in the order they are trained.
KDE_MAIN=${KDE_MAIN:-0.2} KDE_MORE=${KDE_MORE:-"0.5 0.05"}
DEBIASED_MAIN=${DEBIASED_MAIN:-1} DEBIASED_MORE=${DEBIASED_MORE:-"0.2 0.05"}
MMCE_LAMBDAS=${MMCE_LAMBDAS:-"1"}

# One line per run: NAME ARGS... In two tiers: first every method at one lambda (the bold one of
# docs/training.md) for every seed, what the verdict needs; then the other lambdas, one lambda at a time for
# every seed (strongest first), so that an interrupted study holds complete seed sets.
jobs() {
  local seed l
  for seed in $SEEDS; do
    echo "xe_s$seed $TRAIN --objective xe --seed $seed"
    echo "kde-xe_l${KDE_MAIN}_s$seed $TRAIN --objective kde-xe --lambda $KDE_MAIN --seed $seed"
    echo "kde-xe-debiased_l${DEBIASED_MAIN}_s$seed $TRAIN --objective kde-xe-debiased --lambda $DEBIASED_MAIN --seed $seed"
    for l in $MMCE_LAMBDAS; do echo "mmce_l${l}_s$seed $TRAIN --objective mmce --lambda $l --seed $seed"; done
    echo "focal53_s$seed $TRAIN --objective focal53 --seed $seed"
  done
  for l in $KDE_MORE; do
    for seed in $SEEDS; do echo "kde-xe_l${l}_s$seed $TRAIN --objective kde-xe --lambda $l --seed $seed"; done
  done
  for l in $DEBIASED_MORE; do
    for seed in $SEEDS; do
      echo "kde-xe-debiased_l${l}_s$seed $TRAIN --objective kde-xe-debiased --lambda $l --seed $seed"
    done
  done
}

run_one() {  # NAME ARGS...: one training run, skipped when its result exists
  local name=$1
  shift
  local out=$RESULTS/runs/$name.json
  [ -s "$out" ] && return 0
  # The JSON appears only when the run completed; progress lines go to the log (and the terminal).
  if nice -n "$NICE" "$TOOL" run "$@" $SIZE --threads "$THREADS" --out "$out.part" \
       --save-probs "$RESULTS/probs/$name" 2>&1 | tee "$RESULTS/logs/$name.log" | grep -E "epoch +[0-9]+/[0-9]+ .*val|error" ; then
    :
  fi
  if [ -s "$out.part" ]; then mv "$out.part" "$out"; else echo "run $name failed (see $RESULTS/logs/$name.log)" >&2; fi
}
export -f run_one
export TOOL RESULTS SIZE THREADS NICE

if [ -n "${ONLY:-}" ]; then
  jobs | awk -v only="$ONLY" '$1 ~ only' | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
  exit 0
fi

total=$(jobs | wc -l)
done_before=$(jobs | while read -r name _; do if [ -s "$RESULTS/runs/$name.json" ]; then echo "$name"; fi; done | wc -l)
echo "overconfident study: $total runs ($done_before already done), $JOBS at a time, results in $RESULTS"
start=$(date +%s)
jobs | xargs -P "$JOBS" -L 1 bash -c 'run_one "$@"' _
echo "training took $(( $(date +%s) - start )) s"

missing=$(jobs | while read -r name _; do [ -s "$RESULTS/runs/$name.json" ] || echo "$name"; done)
if [ -n "$missing" ]; then echo "not written (runs failed or diverged):" $missing >&2; fi
if [ "${NO_REPORT:-0}" = 1 ]; then exit 0; fi

# The report re-scores every run with the crossfit estimator (cached in RESULTS/scores) and writes the
# tables and the figure: into docs/ for the study, under RESULTS for QUICK.
if [ "$QUICK" = 1 ]; then
  report="--doc $RESULTS/training-quick.md --figures $RESULTS/figures"
else
  report="--doc $ROOT/docs/training.md --figures $ROOT/docs/training"
fi
PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" nice -n "$NICE" "$PYTHON" \
  "$ROOT/experiments/training/report_overconfident.py" --results "$RESULTS" --threads "$THREADS" $report
