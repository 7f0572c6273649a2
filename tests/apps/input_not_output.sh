#!/usr/bin/env bash
# input_not_output.sh EIGS CG MTX2H5 WORKDIR -- MPIEXEC NPFLAG
# Every way of naming an input as an output is refused before anything is
# written: exit 1, the message once (rank 0 of 2) naming both keys, the input
# byte-identical after, no result or temporary left. Matrix Market and HDF5
# inputs; output.path, output.checkpoint.path, output.stop_file and
# execution.partition_file over the matrix; a hard link, a symbolic link and
# `./` spellings; block-cg's right-hand sides; two outputs in one file; and
# mtx2h5 writing over its input. A checkpoint over the one resumed from is
# allowed (its run is read whole first): that run is not refused.
set -u
eigs=$1 cg=$2 mtx2h5=$3 dir=$4
shift 4
[ "$1" = "--" ] && shift
mpiexec=$1 npflag=$2
rm -rf "$dir" && mkdir -p "$dir/data" && cd "$dir" || exit 1
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# A 1D Laplacian of 40 rows as Matrix Market (gzip) and as HDF5, and copies to compare with.
{
  echo "%%MatrixMarket matrix coordinate real symmetric"
  echo "40 40 79"
  for i in $(seq 1 40); do echo "$i $i 2"; done
  for i in $(seq 1 39); do echo "$((i + 1)) $i -1"; done
} | gzip -n > data/A.mtx.gz
"$mtx2h5" data/A.mtx.gz data/A.h5 > /dev/null || { echo "FAIL: mtx2h5 could not make the HDF5 input"; exit 1; }
cp data/A.mtx.gz data/A.mtx.gz.orig && cp data/A.h5 data/A.h5.orig
ln data/A.h5 data/hard.h5
ln -s A.h5 data/soft.h5
printf 'matrix: {matrix_market: {file: A.mtx.gz}}\neigensolver: {k: 2}\nexecution: {backend: cpu}\n' > data/mtx.yaml
printf 'matrix: {hdf5: {file: A.h5}}\neigensolver: {k: 2}\nexecution: {backend: cpu}\n' > data/h5.yaml
printf 'matrix: {matrix_market: {file: A.mtx.gz}}\nblock_cg: {rhs: {source: random, columns: 2}}\nexecution: {backend: cpu}\n' \
  > data/cg.yaml
# Right-hand sides in a file: a run's own /B.
"$mpiexec" "$npflag" 2 "$cg" data/cg.yaml --set output.path=data/rhs.h5 > rhs.log 2>&1 ||
  { echo "FAIL: block-cg could not write right-hand sides: $(tail -3 rhs.log)"; exit 1; }
cp data/rhs.h5 data/rhs.h5.orig

# refused NAME PATTERN INPUT COMMAND...: exit 1, PATTERN once, INPUT unchanged, no stray files.
refused() {
  local name=$1 pattern=$2 input=$3
  shift 3
  local output status found before=$failures
  output=$("$@" 2>&1)
  status=$?
  found=$(printf '%s\n' "$output" | grep -cE -- "$pattern")
  [ $status -eq 1 ] || fail "$name: exit $status, expected 1"
  [ "$found" -eq 1 ] || fail "$name: the message was printed $found times, expected once: $pattern"
  cmp -s "$input" "$input.orig" || fail "$name: $input changed"
  ls data | grep -qE '\.(partial|replaced)$|\.tmp-' && fail "$name: a temporary was left: $(ls data)"
  [ $failures -eq "$before" ] || printf '%s\n--- output ---\n%s\n' "$name" "$output"
}
run2() { "$mpiexec" "$npflag" 2 "$@"; }

refused mtx_output "error: output.path data/A.mtx.gz is matrix.matrix_market.file data/A.mtx.gz, which the run reads" \
  data/A.mtx.gz run2 "$eigs" data/mtx.yaml --set output.path=data/A.mtx.gz
refused mtx_checkpoint "error: output.checkpoint.path data/A.mtx.gz is matrix.matrix_market.file" data/A.mtx.gz \
  run2 "$eigs" data/mtx.yaml --set "output.checkpoint={path: data/A.mtx.gz, every_iterations: 1}"
refused h5_output "error: output.path data/A.h5 is matrix.hdf5.file data/A.h5, which the run reads" data/A.h5 \
  run2 "$eigs" data/h5.yaml --set output.path=data/A.h5
refused h5_checkpoint "error: output.checkpoint.path \./data/A.h5 is the same file as matrix.hdf5.file data/A.h5" \
  data/A.h5 run2 "$eigs" data/h5.yaml --set "output.checkpoint={path: ./data/A.h5, every_iterations: 1}"
refused hard_link "error: output.path data/hard.h5 is the same file as matrix.hdf5.file data/A.h5" data/A.h5 \
  run2 "$eigs" data/h5.yaml --set output.path=data/hard.h5
refused symbolic_link "error: output.path data/soft.h5 is the same file as matrix.hdf5.file data/A.h5" data/A.h5 \
  run2 "$eigs" data/h5.yaml --set output.path=data/soft.h5
refused stop_file "error: output.stop_file data/A.h5 is matrix.hdf5.file data/A.h5" data/A.h5 \
  run2 "$eigs" data/h5.yaml --set output.stop_file=data/A.h5
refused partition_file "error: output.path data/A.h5 is execution.partition_file data/A.h5" data/A.h5 \
  run2 "$eigs" data/mtx.yaml --set output.path=data/A.h5 --set execution.partition_file=A.h5
refused cg_rhs "error: output.path data/rhs.h5 is block_cg.rhs.file data/rhs.h5" data/rhs.h5 \
  run2 "$cg" data/cg.yaml --set "block_cg.rhs={source: hdf5, file: rhs.h5, dataset: /B}" --set output.path=data/rhs.h5
refused two_outputs "error: output.path data/out.h5 and output.checkpoint.path \./data/out.h5 are the same file" \
  data/A.h5 run2 "$eigs" data/h5.yaml --set output.path=data/out.h5 --set "output.checkpoint={path: ./data/out.h5}"
[ -e data/out.h5 ] && fail "two_outputs: data/out.h5 was written"
refused mtx2h5_itself "^mtx2h5: the output data/A.mtx.gz is the input data/A.mtx.gz" data/A.mtx.gz \
  "$mtx2h5" data/A.mtx.gz data/A.mtx.gz --force
ln data/A.mtx.gz data/hard.mtx.gz
refused mtx2h5_link "^mtx2h5: the output data/hard.mtx.gz is the same file as the input data/A.mtx.gz" data/A.mtx.gz \
  "$mtx2h5" data/A.mtx.gz data/hard.mtx.gz --force

# Allowed: a checkpoint written over the one the run resumed from.
run2 "$eigs" data/h5.yaml --set "output.checkpoint={path: data/ck.h5, every_iterations: 1}" > first.log 2>&1 ||
  fail "the run writing a checkpoint failed: $(tail -3 first.log)"
run2 "$eigs" data/h5.yaml --set resume=data/ck.h5 --set "output.checkpoint={path: data/ck.h5, every_iterations: 1}" \
  > resumed.log 2>&1 || fail "resuming over its own checkpoint was refused: $(tail -3 resumed.log)"

[ $failures -eq 0 ] || exit 1
echo "inputs never outputs: ok"
