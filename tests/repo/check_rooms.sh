#!/usr/bin/env bash
# check_rooms.sh SOURCE_DIR: the rooms form a ladder (docs/architecture.md,
# section 2): a source file may include headers of its own room and of rooms
# on lower rungs, never of a room on its own rung or above. Every
# #include "..." of the C++/CUDA sources under the rooms below is checked;
# includes that name no room (generated headers, system headers) are skipped.
# Prints each climbing include and exits 1 if there is one.
set -u
cd "$1" || exit 2

# The ladder, lowest rung first: the one place it is written down (each
# room's CMake library links only rooms below it). The benchmark apps
# (apps/bench) sit above the apps' libraries and the benchmark library (bench).
ladder=(
  "core"
  "io dense"
  "spmm"
  "solver/base"
  "solver/blocks"
  "solver/operator"
  "solver/precond"
  "solver/lobpcg solver/cg"
  "solver/chfsi"
  "solver/window"
  "solver/plan"
  "solver/petsc"
  "config"
  "apps python/src"
  "bench"
  "apps/bench"
)

rungs=""
for i in "${!ladder[@]}"; do
  for room in ${ladder[$i]}; do rungs+="$room=$i "; done
done

dirs=()
for room in ${ladder[*]}; do [ -d "$room" ] && dirs+=("$room"); done
grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cu' --include='*.cuh' \
  '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "${dirs[@]}" |
  awk -v rungs="$rungs" '
    BEGIN {
      n = split(rungs, pairs, " ")
      for (i = 1; i <= n; ++i) { split(pairs[i], kv, "="); rung[kv[1]] = kv[2] }
    }
    # The room of a path: the longest room name that is a prefix of it.
    function room_of(path,    r, best) {
      best = ""
      for (r in rung)
        if (index(path, r "/") == 1 && length(r) > length(best)) best = r
      return best
    }
    {
      split($0, parts, ":")
      file = parts[1]; line = parts[2]
      target = $0; sub(/^[^"]*"/, "", target); sub(/".*$/, "", target)
      from = room_of(file); to = room_of(target)
      if (from == "" || to == "" || from == to) next
      if (rung[to] >= rung[from]) {
        printf "%s:%s: room %s (rung %d) includes %s of room %s (rung %d)\n", file, line, from, rung[from], target,
               to, rung[to]
        ++failures
      }
    }
    END { printf "check_rooms: %d climbing include(s)\n", failures; exit failures > 0 }'
