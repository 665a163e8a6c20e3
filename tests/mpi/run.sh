#!/usr/bin/env bash
# The CLI under mpirun, as ctest runs it: run.sh ECEKDE MPIRUN WORKDIR CASE [RANKS]
#   same-numbers R   estimate (crossfit and paper, every type) and report (B = 8) on R ranks print exactly
#                    what they print alone (the JSON documents compared byte for byte)
#   missing-file     one rank cannot read its input: the job ends, non-zero, naming the file and the rank
#   different-data   the ranks read different files: one line saying so, non-zero
#   bad-input        every rank reads a bad row: one line (from rank 0), non-zero
#   killed-rank      a rank is killed (SIGKILL) mid-run: the job ends, non-zero, within the timeout
#   own-rows R       --own-rows (each rank reads its own rows; canonical: centre blocks pass around a ring;
#                    marginal: classes owned by ranks; top-label: its scores gathered): crossfit and paper,
#                    fixed and automatic h, within 1e-12 relative of the estimate alone (precision float:
#                    within 1e-6 of the float estimate alone)
#   own-rows-bad     --own-rows with a bad value only in rank 1's rows: one line naming rank 1 and the whole
#                    input's row, non-zero
#   ring-entries R   here ECEKDE is tests/mpi/ring_entries.cpp's program: the ring's bootstrap, test and
#                    gradient on R ranks against alone
# Every mpirun is bounded by `timeout`, so a hang fails the test instead of stalling ctest.
set -uo pipefail
ecekde=$1 mpirun_bin=$2 work=$3 case=$4 ranks=${5:-2}
mkdir -p "$work" && cd "$work" || exit 1
mpi=("$mpirun_bin" --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
fail() { echo "FAIL: $*"; exit 1; }

data() {  # data NAME N SEED: a synthetic K = 4 model (ecekde synth), once
  [ -f "$1_probs.npy" ] || "$ecekde" synth --n "$2" --classes 4 --t2 0.7 --seed "$3" --no-truth \
    --probs "$1_probs.npy" --labels "$1_labels.npy" > /dev/null || fail "synth"
}

within() {  # within TOLERANCE KEY A B: A and B from the line of KEY on, numbers within TOLERANCE relative, the rest equal
  paste <(grep -A100000 "\"$2\"" "$3") <(grep -A100000 "\"$2\"" "$4") | awk -v tol="$1" '
    { a = $0; sub(/\t.*/, "", a); b = $0; sub(/.*\t/, "", b)
      gsub(/[", \[\]]/, "", a); gsub(/[", \[\]]/, "", b); na = split(a, x, ":"); nb = split(b, y, ":")
      va = x[na]; vb = y[nb]
      if (va ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) {
        d = va - vb; if (d < 0) d = -d; s = va + 0 < 0 ? -va : va + 0
        if (d > tol * s + 1e-300) { print "differs: " a " vs " b; bad = 1 }
        ++numbers
      } else if (va != vb) { print "differs: " a " vs " b; bad = 1 } }
    END { if (numbers < 3) { print "no numbers compared"; bad = 1 }; exit bad }'
}

case "$case" in
  same-numbers)
    data a 1200 1
    for args in "estimate --type all" "estimate --type all --estimator paper" "report --replicates 8"; do
      # shellcheck disable=SC2086
      "$ecekde" $args --probs a_probs.npy --labels a_labels.npy --threads 1 --json > alone.json || fail "alone: $args"
      # shellcheck disable=SC2086
      timeout 300 "${mpi[@]}" -np "$ranks" "$ecekde" $args --probs a_probs.npy --labels a_labels.npy --threads 1 \
        --json > ranks.json 2> ranks.err || { cat ranks.err; fail "$ranks ranks: $args"; }
      cmp -s alone.json ranks.json || { diff alone.json ranks.json | head -20; fail "$ranks ranks differ: $args"; }
      echo "same on $ranks ranks: $args ($(wc -c < alone.json) bytes)"
    done ;;
  missing-file)  # [own-rows]: the other rank waits in the slicing's exchange of sizes instead
    data c 400 1
    extra=(); [ "$ranks" = own-rows ] && extra=(--own-rows --type canonical)
    timeout 120 "${mpi[@]}" -np 1 "$ecekde" estimate --probs c_probs.npy --labels c_labels.npy --threads 1 "${extra[@]}" : \
      -np 1 "$ecekde" estimate --probs nowhere.npy --labels c_labels.npy --threads 1 "${extra[@]}" > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status"
    grep -q "^ecekde: error: .*nowhere.npy.* (rank 1 of 2)$" err.txt || { cat err.txt; fail "no one-line error naming the file and rank"; }
    [ ! -s out.txt ] || fail "something was printed" ;;
  different-data)  # [own-rows]: the ranks slice their files instead of each holding one whole
    data c 400 1 && data d 300 2
    extra=(); [ "$ranks" = own-rows ] && extra=(--own-rows --type canonical)
    timeout 120 "${mpi[@]}" -np 1 "$ecekde" estimate --probs c_probs.npy --labels c_labels.npy --threads 1 "${extra[@]}" : \
      -np 1 "$ecekde" estimate --probs d_probs.npy --labels d_labels.npy --threads 1 "${extra[@]}" > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status"
    grep -q "^ecekde: error: the ranks were given different inputs or options (rank 0: n = 400, K = 4; rank 1: n = 300, K = 4)" err.txt \
      || { cat err.txt; fail "no one-line error"; }
    [ "$(grep -c '^ecekde: error' err.txt)" = 1 ] || { cat err.txt; fail "reported more than once"; } ;;
  bad-input)
    printf '0.5,0.5\n0.7,0.7\n0.2,0.8\n' > bad.csv && printf '0\n1\n1\n' > bad_labels.csv
    timeout 120 "${mpi[@]}" -np "$ranks" "$ecekde" estimate --probs bad.csv --labels bad_labels.csv > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status"
    grep -q "^ecekde: error: .*row 1" err.txt || { cat err.txt; fail "no one-line error naming the row"; }
    [ "$(grep -c '^ecekde: error' err.txt)" = 1 ] || { cat err.txt; fail "reported more than once"; } ;;
  killed-rank)  # [own-rows]: killed while the blocks travel around the ring
    # the data's name is the case's, so that pgrep finds only this case's ranks when ctest runs both at once
    big=big; extra=(); [ "$ranks" = own-rows ] && big=bigown && extra=(--own-rows)
    data "$big" 6000 3
    timeout 120 "${mpi[@]}" -np 2 "$ecekde" estimate --probs "${big}_probs.npy" --labels "${big}_labels.npy" --type canonical \
      --estimator paper --threads 1 "${extra[@]}" > out.txt 2> err.txt &
    job=$!
    for _ in $(seq 100); do  # both ranks running
      [ "$(pgrep -f "ecekde estimate --probs ${big}_probs" | wc -l)" -ge 2 ] && break
      sleep 0.1
    done
    sleep 0.5
    victim=$(pgrep -n -f "ecekde estimate --probs ${big}_probs") || fail "no rank to kill"
    kill -9 "$victim"
    wait "$job"
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || { cat err.txt; fail "exit status $status"; }
    # mpirun may return a moment before the surviving rank has gone (seen at load 7 on two cores): wait up
    # to 10 s, which still fails a rank left running
    for _ in $(seq 100); do pgrep -f "ecekde estimate --probs ${big}_probs" > /dev/null || break; sleep 0.1; done
    ! pgrep -f "ecekde estimate --probs ${big}_probs" > /dev/null || fail "a rank is still running" ;;
  own-rows)
    data e 1500 4
    for args in "--type canonical --estimator paper --bandwidth 0.05" "--type canonical --estimator paper --bandwidth 0.3 --p 2" \
                "--type canonical --estimator paper --criterion reference --max-rows 500" \
                "--type canonical --estimator paper" "--type canonical" "--type canonical --max-rows 400 --p 2" \
                "--type all" "--type all --estimator paper --bandwidth 0.1" \
                "--type canonical --estimator paper --bandwidth 0.05 --precision float" "--type canonical --precision float"; do
      tolerance=1e-12; case "$args" in *float*) tolerance=1e-6 ;; esac  # float: to float's rounding
      # shellcheck disable=SC2086
      "$ecekde" estimate $args --probs e_probs.npy --labels e_labels.npy \
        --threads 1 --json > alone.json || fail "alone: $args"
      # shellcheck disable=SC2086
      timeout 300 "${mpi[@]}" -np "$ranks" "$ecekde" estimate $args --own-rows \
        --probs e_probs.npy --labels e_labels.npy --threads 1 --json > ranks.json 2> ranks.err \
        || { cat ranks.err; fail "$ranks ranks: $args"; }
      # every number of the result (ce, ce_pow_p, bandwidth, the criterion's scores) within 1e-12 relative
      within "$tolerance" results alone.json ranks.json || fail "$ranks ranks differ: $args"
      echo "within $tolerance on $ranks ranks: $args"
    done ;;
  report-own-rows)
    data e 1500 4
    "$ecekde" report --replicates 8 --probs e_probs.npy --labels e_labels.npy --threads 1 --json > alone.json || fail "alone"
    timeout 300 "${mpi[@]}" -np "$ranks" "$ecekde" report --replicates 8 --own-rows --probs e_probs.npy \
      --labels e_labels.npy --threads 1 --json > ranks.json 2> ranks.err || { cat ranks.err; fail "$ranks ranks"; }
    # every number from the summary on: ECE^KDE canonical within 1e-12 (the ring), the rest bitwise (as
    # tests/report/test_report_own_rows.cpp checks it)
    within 1e-12 summary alone.json ranks.json || fail "$ranks ranks differ"
    echo "within 1e-12 on $ranks ranks: report --own-rows ($(grep -c . alone.json) lines)"
    timeout 120 "${mpi[@]}" -np 2 "$ecekde" report --own-rows --plot figures --probs e_probs.npy --labels e_labels.npy \
      > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "--plot with --own-rows: exit status $status"
    grep -q -- "--plot needs every row on one rank" err.txt || { cat err.txt; fail "no error for --plot with --own-rows"; }
    # a bad row in the last rank's share only: one line naming the rank and the row, from every stage's first check
    printf '0.5,0.5\n0.4,0.6\n0.2,0.8\n0.3,0.7\n0.9,0.9\n0.1,0.9\n' > half.csv && printf '0\n1\n1\n0\n1\n1\n' > half_labels.csv
    timeout 120 "${mpi[@]}" -np 2 "$ecekde" report --own-rows --probs half.csv --labels half_labels.csv > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "bad row: exit status $status"
    grep -q "^ecekde: error: rank 1: probs row 4 sums to 1.8" err.txt || { cat err.txt; fail "no one-line error naming rank 1 and row 4"; }
    [ "$(grep -c '^ecekde: error' err.txt)" = 1 ] || { cat err.txt; fail "reported more than once"; } ;;
  own-rows-bad)
    data e 1500 4
    printf '0.5,0.5\n0.4,0.6\n0.2,0.8\n0.3,0.7\n0.9,0.9\n0.1,0.9\n' > half.csv && printf '0\n1\n1\n0\n1\n1\n' > half_labels.csv
    timeout 120 "${mpi[@]}" -np 2 "$ecekde" estimate --estimator paper --type canonical --own-rows \
      --probs half.csv --labels half_labels.csv > out.txt 2> err.txt
    status=$?
    [ "$status" -ne 0 ] && [ "$status" -ne 124 ] || fail "exit status $status"
    grep -q "^ecekde: error: rank 1: probs row 4 sums to 1.8" err.txt || { cat err.txt; fail "no one-line error naming rank 1 and row 4"; }
    [ "$(grep -c '^ecekde: error' err.txt)" = 1 ] || { cat err.txt; fail "reported more than once"; } ;;
  ring-entries)
    timeout 300 "${mpi[@]}" -np "$ranks" "$ecekde" || fail "the ring's entry points on $ranks ranks" ;;
  *) fail "unknown case $case" ;;
esac
echo "ok: $case"
