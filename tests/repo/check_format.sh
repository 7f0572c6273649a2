#!/usr/bin/env bash
# check_format.sh SOURCE_DIR: every tracked C++ and CUDA source is formatted as
# .clang-format says (clang-format 14, Debian 12's, installed by scripts/setup.sh;
# other versions format some constructs differently, so the check names 14).
# Prints the files that differ and how to fix them; exits 1 if there is one.
set -u
cd "$1" || exit 2
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "check_format: not a git checkout, nothing to check"; exit 0; }
tool=$(command -v clang-format-14 || true)
if [ -z "$tool" ]; then
  echo "check_format: clang-format-14 not found: scripts/setup.sh installs it (Debian's clang-format-14)"
  exit 1
fi
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c' '*.cc')
# One clang-format run for all files; each file that differs is named in its diagnostics.
mapfile -t bad < <("$tool" --dry-run -Werror "${files[@]}" 2>&1 | sed -nE 's/^([^: ]+):[0-9]+:[0-9]+: error:.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  printf '%s: not formatted as .clang-format says\n' "${bad[@]}"
  echo "fix: clang-format-14 -i ${bad[*]}"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
