#!/usr/bin/env bash
# signal_stop.sh APP NP TO SIGNAL -- MPIEXEC NPFLAG
# A long run on the GPU (execution.backend: cuda, a tolerance it cannot reach)
# is sent SIGNAL once its monitor shows iteration 20: to the ranks (TO = ranks,
# what srun does) or to mpirun (TO = mpirun). It must stop within 10
# iterations of the signal with exit 4, its checkpoint and its result file.
# Exit 77 (skipped): no GPU, more ranks than GPUs, or SIGUSR1 to an mpirun
# started with it blocked (the run's header says so; see docs/config.md).
set -u
app=$1 np=$2 to=$3 signal=$4
shift 4
[ "$1" = "--" ] && shift
mpiexec=$1 npflag=$2
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$gpus" -ge "$np" ] || { echo "skipped: $np rank(s), $gpus GPU(s)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
cat > run.yaml <<YAML
matrix: {generator: {type: laplacian_3d, nx: 96, ny: 96, nz: 96}}
eigensolver: {k: 8, tolerance: 1.0e-15, max_iterations: 100000, stagnation_window: 100000}
execution: {backend: cuda}
output: {path: result.h5, monitor_every: 1, checkpoint: {path: checkpoint.h5}}
YAML
fail() { echo "FAIL: $1"; tail -30 run.log; exit 1; }
"$mpiexec" "$npflag" "$np" "$app" run.yaml > run.log 2>&1 &
pid=$!
until grep -qE "^iter +20/" run.log; do
  kill -0 $pid 2>/dev/null || fail "the run ended before iteration 20"
  sleep 0.02
done
if [ "$to" = mpirun ] && [ "$signal" = USR1 ] && grep -q "started these processes with SIGUSR1 blocked" run.log; then
  kill -TERM $pid; wait $pid
  echo "skipped: $(grep -m1 'SIGUSR1 blocked' run.log)"; exit 77
fi
at=$(grep -E "^iter +[0-9]+/" run.log | tail -1 | sed -E 's/^iter +([0-9]+)\/.*/\1/')
start=$(date +%s.%N)
if [ "$to" = mpirun ]; then kill -s "$signal" $pid; else pkill -"$signal" -P $pid; fi
for _ in $(seq 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -9 $pid; pkill -9 -P $pid; fail "still running 60 s after SIG$signal"; fi
wait $pid
status=$?
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
[ $status -eq 4 ] || fail "exit $status after SIG$signal, expected 4"
stopped=$(sed -nE "s/^interrupted by SIG$signal after iteration ([0-9]+);.*/\1/p" run.log)
[ -n "$stopped" ] || fail "no interruption line"
[ $((stopped - at)) -le 10 ] || fail "signalled at iteration $at, stopped after $stopped"
[ -f checkpoint.h5 ] && [ -f result.h5 ] || fail "no checkpoint or no result file"
echo "stopped ok: SIG$signal to $to at iteration $at, stopped after $stopped, exit 4 after $took s"
