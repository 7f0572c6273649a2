#!/usr/bin/env bash
# On the GPU machine: build with the cuda preset, run the GPU tests and the
# benchmarks asked for, and end with a short table. Logs go to $OUT (the
# device tool's folder) or /tmp/gpu-check.
#   scripts/gpu-check.sh [tests] [bench-quick|bench-full] [operator] [eigs]
# Matrices: gpu-carry/matrices (a copy of ../shared/data/matrices, which does
# not travel to the GPU machine).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests)
[ -d gpu-carry/matrices ] && export BLOCKEIGS_DATA_DIR=$PWD/gpu-carry/matrices
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
summary=()
note() { summary+=("$1"); }

echo "== device"; nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
gpus=$(nvidia-smi -L | wc -l)
echo "commit $(git rev-parse --short HEAD 2>/dev/null || cat gpu-carry/COMMIT 2>/dev/null || echo unknown)  date $(date -u +%F)"

echo "== build"
start=$SECONDS
if cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
   cmake --build --preset cuda -j "$(nproc)" >"$out/build.log" 2>&1; then
  note "build            ok ($((SECONDS - start)) s)"
else
  tail -40 "$out/configure.log" "$out/build.log"; note "build            FAILED"; printf '%s\n' "${summary[@]}"; exit 1
fi
bin=build/cuda/apps

for step in "${steps[@]}"; do
  case $step in
    tests)
      echo "== ctest -L cuda"
      ctest --preset cuda -L cuda -j 4 --timeout 600 2>&1 | tee "$out/ctest-cuda.log" | grep -vE '^ +Start|Passed' | tail -40
      note "ctest -L cuda    $(grep -E 'tests passed' "$out/ctest-cuda.log" | tail -1)"
      skipped=$(grep -c 'Skipped' "$out/ctest-cuda.log"); note "  skipped         $skipped" ;;
    bench-quick|bench-full)
      echo "== spmm-bench ${step#bench-}"
      if [ -x $bin/spmm-bench ]; then
        $bin/spmm-bench --suite "${step#bench-}" ${BLOCKEIGS_DATA_DIR:+--data "$BLOCKEIGS_DATA_DIR"} --csv "$out/spmm-bench.csv" \
          2>&1 | tee "$out/spmm-bench.log" | tail -60
        note "spmm-bench       exit ${PIPESTATUS[0]}"
      else
        note "spmm-bench       not built"
      fi ;;
    operator)
      echo "== operator-bench (7-point Laplacian, fp64, width 16)"
      for grid in 128 256; do
        mpirun -np 1 $bin/operator-bench --grid $grid --width 16 --reps 20 2>&1 | tee -a "$out/operator.log"
        [ "$gpus" -ge 2 ] && mpirun -np 2 --bind-to none $bin/operator-bench --grid $grid --width 16 --reps 20 2>&1 | tee -a "$out/operator.log"
      done
      note "$(grep '^CSV,operator' "$out/operator.log" | awk -F, '{printf "operator %s^3 np%s %.3f ms; ", $3, $6, $7}')" ;;
    eigs)
      echo "== block-eigs"
      mpirun -np 1 $bin/block-eigs configs/laplacian3d-128.yaml 2>&1 | tee "$out/eigs.log" | tail -40
      note "block-eigs 128^3 exit ${PIPESTATUS[0]}" ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done

echo; echo "== summary"; printf '%s\n' "${summary[@]}"
