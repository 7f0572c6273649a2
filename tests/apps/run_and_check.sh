#!/usr/bin/env bash
# run_and_check.sh RESULT.h5 -- RUN... -- CHECK...
# Removes RESULT.h5, runs RUN (an app that writes it, and must exit 0), then
# CHECK (a checker that reads it). Prints both outputs; exits 1 where RUN
# failed, else with CHECK's status.
set -u
result=$1
shift
[ "$1" = "--" ] && shift
run=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do run+=("$1"); shift; done
[ $# -gt 0 ] && shift
rm -f "$result"
"${run[@]}" 2>&1
status=$?
[ $status -eq 0 ] || { echo "run_and_check: the run exited $status"; exit 1; }
"$@"
