#!/usr/bin/env bash
# scripts_echo.sh SOURCE_DIR: the scripts print the commands they run exactly
# as run. show_command (scripts/preset.sh) prints a line that, pasted into a
# shell, gives back the same words; demo.sh prints and runs one array.
set -u
cd "$1" || exit 2
failures=0
source scripts/preset.sh
words=(mpirun --allow-run-as-root -np 2 "build/cpu/apps/block-eigs" "my configs/a b.yaml" 'x$y' "it's")
line=$(show_command "${words[@]}")
case $line in "+ "*) ;; *) echo "show_command: no '+ ' prefix: $line"; failures=$((failures + 1)) ;; esac
eval "back=(${line#+ })"
if [ "${back[*]}" != "${words[*]}" ] || [ ${#back[@]} -ne ${#words[@]} ]; then
  echo "show_command: '$line' reads back as ${#back[@]} words: ${back[*]}"
  failures=$((failures + 1))
fi
output=$(run printf '%s|' a "b c")
[ "$output" = "$(printf '+ printf %%s\\| a b\\ c\na|b c|')" ] || { echo "run: printed '$output'"; failures=$((failures + 1)); }
# demo.sh shows the array it runs (the launcher flags included), and echoes nothing else by hand.
grep -q '^show_command "${command\[@\]}"$' scripts/demo.sh && grep -q '^"${command\[@\]}" || status=$?$' scripts/demo.sh ||
  { echo "demo.sh: does not show and run the same command array"; failures=$((failures + 1)); }
if grep -nE '^[^#]*echo "\+ ' scripts/*.sh; then echo "a script echoes a command by hand"; failures=$((failures + 1)); fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
