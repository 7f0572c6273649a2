#!/usr/bin/env bash
# On the GPU machine: spmm-bench from BIN_DIR at
# the widths N (default 1) over the full suite, by groups of matrices (one
# CSV each, so that a timeout loses one group), RUNS times. KNOBS (default
# "1 0") sets BLOCKEIGS_ROW_STREAM for each pass, "rule" leaves it unset.
# That variable was read only by the measurement build behind row_stream_pays
# (docs/benchmarks/spmm.md#heuristic-row-stream; a throwaway patch to row_split.cu: 0 the group-per-row n = 1 body
# everywhere, 1 the stream body everywhere); built from the committed code,
# use KNOBS=rule.
#   scripts/dev/row_stream_ab.sh BIN_DIR MATRIX_DIR OUT_DIR
# The CSVs and logs go to a work folder, packed into OUT_DIR after
# every group (the device tool returns at most 8 files). Name: n<widths>-ab.tgz.
set -uo pipefail
bin=$1 data=$2 dest=$3
out=$(mktemp -d)
tag=n$(echo "${N:-1}" | tr , -)
groups=('^(lap|uniform|powerlaw|rows16k)' '^dense' '^[0-9A-Ea-e].*_blockdiag$' '^[F-Pf-p].*_blockdiag$'
        '^[Q-Zq-z].*_blockdiag$')
for run in $(seq "${RUNS:-1}"); do
  for knob in ${KNOBS:-1 0}; do
    for g in "${!groups[@]}"; do
      start=$SECONDS
      env=(env BLOCKEIGS_ROW_STREAM=$knob); [ "$knob" = rule ] && env=(env -u BLOCKEIGS_ROW_STREAM)
      "${env[@]}" timeout "${GROUP_TIMEOUT:-200}" "$bin/spmm-bench" --suite full --data "$data" \
        --matrices "${groups[$g]}" --n "${N:-1}" --csv "$out/$tag-k$knob-g$g-r$run.csv" > "$out/$tag-k$knob-g$g-r$run.log" 2>&1
      echo "knob $knob group $g run $run: exit $? in $((SECONDS - start)) s" | tee -a "$out/progress.txt"
      tar -czf "$dest/$tag-ab.tgz" -C "$out" .
    done
  done
done
