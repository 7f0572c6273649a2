#!/usr/bin/env bash
# checkpoint_resume.sh APP CONFIG WORKDIR SIGNAL TO AT PYTHON -- MPIEXEC NPFLAG
# Kill and resume as a batch system does it: APP runs CONFIG at 3 ranks and
# is sent SIGNAL once its monitor shows iteration AT, either to the ranks
# themselves (TO = ranks: what srun and slurmstepd do) or to mpirun (TO =
# mpirun: Open MPI forwards SIGUSR1 and SIGUSR2 only). It must exit 4 with a
# checkpoint and a result file marked interrupted; resumed from the
# checkpoint at 2 ranks it must reach the uninterrupted run's answer
# (check_resume.py) in at most 110% of its iterations, and its history plot
# must number the iterations on from the checkpoint's, as the monitor does
# (block-eigs from the checkpoint's own, re-tested; block-cg from the next).
set -u
app=$1 config=$2 dir=$3 signal=$4 to=$5 at=$6 python=$7
shift 7
[ "$1" = "--" ] && shift
mpiexec=$1 npflag=$2
name=$(basename "$app")
here=$(cd "$(dirname "$0")" && pwd)
app=$(cd "$(dirname "$app")" && pwd)/$name
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
mkdir -p "$dir" && cd "$dir" || exit 1
rm -f ref.h5 stopped.h5 resumed.h5 checkpoint.h5 ./*.log
export OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1
fail() { echo "FAIL: $1"; for f in ./*.log; do echo "--- $f"; tail -25 "$f"; done; exit 1; }

"$mpiexec" "$npflag" 3 "$app" "$config" --set output.path=ref.h5 --set output.monitor=false > ref.log 2>&1 ||
  fail "the uninterrupted run failed"

"$mpiexec" "$npflag" 3 "$app" "$config" --set output.path=stopped.h5 --set output.monitor_every=1 \
  --set "output.checkpoint={path: checkpoint.h5, every_iterations: 100000}" > stopped.log 2>&1 &
pid=$!
# Bounded in iterations: the signal goes once the monitor has printed iteration AT.
until grep -qE "^iter +$at/" stopped.log; do
  kill -0 $pid 2>/dev/null || fail "the run ended before iteration $at"
  sleep 0.05
done
if [ "$to" = mpirun ]; then kill -s "$signal" $pid; else pkill -"$signal" -P $pid; fi
wait $pid
status=$?
[ $status -eq 4 ] || fail "the interrupted run exited $status, expected 4"
grep -qE "^interrupted by SIG$signal after iteration [0-9]+; checkpoint checkpoint\.h5" stopped.log ||
  fail "no interruption line"
[ -f checkpoint.h5 ] || fail "no checkpoint written"
[ -f stopped.h5 ] || fail "no result file written"

"$mpiexec" "$npflag" 2 "$app" "$config" --set resume=checkpoint.h5 --set output.path=resumed.h5 \
  --set output.monitor=false > resumed.log 2>&1 || fail "the resumed run failed"
grep -qE "resumed after iteration [0-9]+" resumed.log || fail "the resumed run does not say where it went on from"
"$python" "$here/check_resume.py" "$name" ref.h5 stopped.h5 checkpoint.h5 resumed.h5 || fail "check_resume.py"
went_on=$(sed -n 's/^iterations [0-9]* (resumed after iteration \([0-9]*\).*/\1/p' resumed.log)
last=$(sed -n 's/^iterations \([0-9]*\) (resumed after.*/\1/p' resumed.log)
first=$went_on; [ "$name" = block-cg ] && first=$((went_on + 1))
plotted=$("$python" "$here/../../scripts/plot_history.py" resumed.h5 resumed.png 2>&1) || fail "plot_history.py: $plotted"
echo "$plotted" | grep -qE "\(iterations $first-$last\)$" ||
  fail "the resumed run's history is not numbered $first-$last (resumed after $went_on): $plotted"
echo "resume ok"
