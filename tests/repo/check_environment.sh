#!/usr/bin/env bash
# check_environment.sh SOURCE_DIR: one configuration channel (docs/config.md).
#  - getenv only in core/env_overrides.cpp, the one file that reads the
#    environment, among core/, io/, spmm/, solver/ and apps/;
#  - setenv (and putenv, unsetenv) only in apps/environment.cpp, which sets
#    NCCL's defaults, and never in the library (core/, io/, spmm/, solver/).
# Comments are not code: lines whose text starts with // are skipped.
# Prints each breach and exits 1 if there is one.
set -u
cd "$1" || exit 2
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "check_environment: not a git checkout, nothing to check"; exit 0; }
failures=0
# Files under the given folders whose code calls `pattern`, less the allowed file.
calls() {  # pattern allowed folders...
  local pattern=$1 allowed=$2; shift 2
  git grep -nIE "\b($pattern)\s*\(" -- "$@" | grep -vE '^[^:]+:[0-9]+:\s*//' | grep -v "^$allowed:"
}
while read -r line; do
  [ -n "$line" ] && { echo "reads the environment outside core/env_overrides.cpp: $line"; failures=$((failures + 1)); }
done < <(calls 'getenv|secure_getenv' core/env_overrides.cpp core io spmm solver apps)
while read -r line; do
  [ -n "$line" ] && { echo "sets the environment outside apps/environment.cpp: $line"; failures=$((failures + 1)); }
done < <(calls 'setenv|putenv|unsetenv' apps/environment.cpp core io spmm solver apps)
echo "check_environment: $failures breach(es)"
[ "$failures" -eq 0 ]
