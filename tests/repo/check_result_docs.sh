#!/usr/bin/env bash
# check_result_docs.sh SOURCE_DIR: every dataset and root attribute the apps
# write into result, checkpoint and partition files (apps/run/: the literal
# names given to Hdf5Writer's write, write_matrix, write_string and
# attribute, the time_* names of their timing lists, and time_<name> for each
# row of the solvers' phase tables, which the apps write as attributes:
# kLobpcgPhases, kBlockCgPhases) is documented: named in backquotes in
# docs/usage.md or docs/config.md (a name ending in _ as the prefix of a
# `name_<part>`).
set -u
cd "$1" || exit 2
names=$( (grep -rhoE 'attribute\("/", "[a-z_0-9]+"|write(_matrix|_string)?\("/[a-z_/0-9]+"|\{"time_[a-z_]+", ' apps/run |
  sed -E 's/.*"([^"]+)".*/\1/'
  grep -hoE '\{"[a-z_]+", &(LobpcgTimings|BlockCgTimings)::' solver/lobpcg/lobpcg.hpp solver/cg/block_cg.hpp |
  sed -E 's/\{"([a-z_]+)".*/time_\1/') | sort -u)
missing=0
for name in $names; do
  if [[ $name == *_ ]]; then pattern="\`${name}<"; else pattern="\`${name}\`"; fi
  if ! grep -qF -- "$pattern" docs/usage.md docs/config.md; then
    echo "undocumented: $name (written in $(grep -rlF "\"$name\"" apps/run | tr '\n' ' '))"
    missing=$((missing + 1))
  fi
done
echo "check_result_docs: $(echo "$names" | wc -w) names, $missing undocumented"
[ "$missing" -eq 0 ]
