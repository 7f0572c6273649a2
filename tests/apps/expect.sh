#!/usr/bin/env bash
# expect.sh EXIT PATTERN COUNT -- COMMAND...
# Runs COMMAND and checks its exit code (a number, or "nonzero") and that the
# extended regex PATTERN occurs in its combined output exactly COUNT times
# ("any" for at least once). Prints the output when a check fails.
set -u
want_exit=$1 pattern=$2 count=$3
shift 3
[ "$1" = "--" ] && shift
output=$("$@" 2>&1)
status=$?
fail() { printf '%s\n--- output ---\n%s\n' "$1" "$output"; exit 1; }
if [ "$want_exit" = nonzero ]; then
  [ "$status" -ne 0 ] || fail "expected a non-zero exit, got 0"
else
  [ "$status" -eq "$want_exit" ] || fail "expected exit $want_exit, got $status"
fi
found=$(printf '%s\n' "$output" | grep -cE -- "$pattern")
if [ "$count" = any ]; then
  [ "$found" -ge 1 ] || fail "pattern not found: $pattern"
else
  [ "$found" -eq "$count" ] || fail "pattern found $found times, expected $count: $pattern"
fi
printf '%s\n' "$output"
