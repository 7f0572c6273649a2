#!/usr/bin/env bash
# check_layout.sh SOURCE_DIR: the codebase's shape rules (issue 57), checked on
# the tracked files so that they hold from now on:
#  - no source file under spmm/, solver/ or bench/ past 600 lines, none under
#    tests/ past 500;
#  - no folder holding more than 25 source files directly;
#  - no numbered working-period label or private target name in the tree;
#  - no tracked file over 1 MB, docs/benchmarks under 5 MB;
#  - no source comment with a before->after timing (a number, an arrow, a
#    number and a unit of time): the history lives in docs/benchmarks;
#  - README.md a front door: at most 150 lines, no table cell over 300
#    characters, no commit hash (7-40 hex digits with a digit and a letter);
#  - backends chosen by CMake, not by #if: a preprocessor test naming CUDA,
#    NCCL, PETSc or (PT-)Scotch in core/ io/ dense/ spmm/ solver/ apps/
#    python/src/ bench/ only in the files that implement or stub a backend
#    (*_cuda.*, *_nccl.*, *_stub.*, cuda/), besides PETSc's version and
#    scalar checks and nvcc's __CUDACC__;
#  - no function past 80 lines (lizard, pinned in scripts/setup.sh, in
#    PYTHON_DEPS) in core/ io/ dense/ spmm/ solver/ apps/ python/src/ bench/.
#    Exempt, and only these: CUDA kernels (__global__ functions in .cu and
#    .cuh files; the host and device functions there are checked) and the tests (tests/ is not
#    checked: its tables of cases are data).
# Usage: check_layout.sh SOURCE_DIR [PYTHON_DEPS]. Prints each breach and
# exits 1 if there is one.
set -u
cd "$1" || exit 2
command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "check_layout: not a git checkout, nothing to check"; exit 0; }
failures=0
breach() { echo "$1"; failures=$((failures + 1)); }
sources=$(git ls-files -- spmm solver bench core io apps tests | grep -E '\.(cpp|hpp|cu|cuh|h|c)$')
for f in $(printf '%s\n' "$sources" | grep -E '^(spmm|solver|bench)/'); do
  n=$(wc -l < "$f")
  [ "$n" -le 600 ] || breach "$f: $n lines (at most 600)"
done
for f in $(printf '%s\n' "$sources" | grep -E '^tests/'); do
  n=$(wc -l < "$f")
  [ "$n" -le 500 ] || breach "$f: $n lines (a test file holds at most 500)"
done
while read -r count dir; do
  [ "$count" -le 25 ] || breach "$dir/: $count source files directly (at most 25)"
done < <(printf '%s\n' "$sources" | xargs -n1 dirname | sort | uniq -c)
labels=$(git grep -nIiE 'session[s]? [0-9]|the bar\b' -- . ':!tests/repo/check_layout.sh' | head -5)
[ -z "$labels" ] || breach "working-period labels or private target names: $labels"
while read -r size file; do
  [ "$size" -le 1024 ] || breach "$file: ${size} KB (at most 1 MB)"
done < <(git ls-files -z | xargs -0 du -k 2>/dev/null)
bench_kb=$(git ls-files -z docs/benchmarks | xargs -0 du -ck 2>/dev/null | tail -1 | cut -f1)
[ "${bench_kb:-0}" -le 5120 ] || breach "docs/benchmarks: ${bench_kb} KB (at most 5 MB)"
timings=$(git ls-files -z -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.py' '*.sh' '*.cmake' '*CMakeLists.txt' |
  xargs -0 grep -nE '[0-9][0-9.]* ?(s|ms|us)? ?(->|→) ?[0-9][0-9.]* ?(s|ms|us)\b' -- 2>/dev/null | head -5)
[ -z "$timings" ] || breach "before->after timings in source comments (move them to docs/benchmarks): $timings"
if [ -f README.md ]; then
  n=$(wc -l < README.md)
  [ "$n" -le 150 ] || breach "README.md: $n lines (at most 150)"
  cells=$(awk -F'|' '/^\|/ {for (i = 2; i < NF; i++) if (length($i) > 300) print FILENAME ":" FNR ": a cell of " length($i) " characters"}' README.md)
  [ -z "$cells" ] || breach "README.md table cells over 300 characters: $cells"
  hashes=$(grep -noP '(?<![0-9A-Za-z._-])[0-9a-f]{7,40}(?![0-9A-Za-z_])' README.md | grep -E ':.*[0-9].*$' |
    grep -E ':.*[a-f].*$' | head -5)
  [ -z "$hashes" ] || breach "README.md: commit hashes (they belong in docs/benchmarks): $hashes"
fi
function_folders=(core io dense spmm solver apps python/src bench)
backend_ifs=$(git grep -nE '^\s*#\s*(if|ifdef|ifndef|elif).*(CUDA|NCCL|PETSC|PTSCOTCH|SCOTCH)' -- "${function_folders[@]}" |
  grep -vE '^[^:]*(_cuda|_nccl|_stub)\.[a-z]+:|^[^:]*/cuda/[^:]*:' |
  grep -vE 'PETSC_VERSION_GE|PETSC_SUCCESS|PETSC_USE_REAL_DOUBLE|__CUDACC__' | head -5)
[ -z "$backend_ifs" ] || breach "#if naming a backend outside its implementing or stub file (move each half there; CMake picks one): $backend_ifs"
python_deps=${2:-$PWD/build/python-deps}
case $python_deps in /*) ;; *) python_deps=$OLDPWD/$python_deps ;; esac  # relative to where it was called
if ! PYTHONPATH=$python_deps python3 -c 'import lizard' 2>/dev/null; then
  breach "function lengths: lizard is not installed in $python_deps: run scripts/setup.sh (it installs the pinned version)"
else
  # lizard reads .cu and .cuh files as C++ when named .cpp: a copy of each, under its own path.
  cuda_copy=$(mktemp -d)
  trap 'rm -rf "$cuda_copy"' EXIT
  git ls-files -- "${function_folders[@]/%//*.cu}" "${function_folders[@]/%//*.cuh}" | while read -r f; do
    mkdir -p "$cuda_copy/$(dirname "$f")" && cp "$f" "$cuda_copy/$f.cpp"; done
  long=$( { PYTHONPATH=$python_deps python3 -m lizard -l cpp -L 80 -C 100000 -a 100000 -w "${function_folders[@]}"
            (cd "$cuda_copy" && PYTHONPATH=$python_deps python3 -m lizard -l cpp -L 80 -C 100000 -a 100000 -w .)
          } | sed -e 's|^\./||' -e 's|\.\(cuh\?\)\.cpp:|.\1:|' |
          while IFS=: read -r file line rest; do
            # A kernel: __global__ on the line lizard names or the three before it.
            case "$file" in *.cu | *.cuh) sed -n "$((line > 3 ? line - 3 : 1)),${line}p" "$file" | grep -q __global__ && continue ;; esac
            echo "$file:$line:$rest"
          done)
  [ -z "$long" ] || breach "functions past 80 lines (split them): $long"
fi
echo "check_layout: $failures breach(es)"
[ "$failures" -eq 0 ]
