#!/usr/bin/env bash
# On the GPU machine: build with the cuda preset, run the GPU tests and the
# benchmarks asked for, and end with a short table. Logs go to $OUT (the
# device tool's folder) or /tmp/gpu-check.
#   scripts/gpu-check.sh [memplan] [dmma] [tests] [sanitize] [bench-quick|bench-full] [operator] [layouts] [blockops] [profile] [ncu] [ncu-lobpcg] [ncu-gram] [ncu-ritz] [compare] [compare-pencil] [tts] [scaling] [partition] [halo-scaling] [ab-eigs] [ab-blockops] [ab-spmm] [eigs-precision]
# BUILD_TARGETS="a b": build only these targets (a probe that needs one app).
# dmma: the fp64 tensor-core rate of each mma.sync shape (bench/micro/dmma_rate.cu) and the MMA
# opcodes in our LOBPCG kernels' SASS.
# ncu: Nsight Compute on LOBPCG's Gram-pair kernel (k = 20) and the n = 1 merge SpMV body (Oregon-2, fp32).
# ncu-lobpcg: Nsight Compute on the Gram-pair and Ritz-update kernels at k = 20, and row_split at
# fp64 n = 20 on the 7-point Laplacian (LOBPCG's SpMM for k = 16).
# ab-spmm: spmm-bench at non-power-of-two widths on the generated matrices, base and this tree.
# ab-blockops: block-ops-bench at k = 16 and 20, base and this tree alternately (twice each).
# ab-eigs: block-eigs on the 128^3 LOBPCG comparison's problem, this tree against a base
# (`git archive <base> -o gpu-carry/base.tar`) built beside it, alternating
# AB_RUNS (3) times on the same machine, where the host's share varies by
# machine more than a change moves it.
# partition: the 256^3 7-point Laplacian from HDF5 (mtx2h5 --generate), natural and randomly
# renumbered, on 4 GPUs: block-eigs (100 iterations) and block-cg (200) with the natural order
# (contiguous), the renumbered one contiguous and with execution.partition: graph, each rank's rows
# as they came (local_order none) and ordered by band (auto), and 1 rank loading the renumbered file
# (none and band); each run's total, SpMM and halo times, partitioning and row-order times.
# PARTITION_GRID (256), PARTITION_RANKS (4), PARTITION_APPS ("eigs cg"), PARTITION_RUNS (which of the
# runs, "FILE PARTITION RANKS LOCAL_ORDER" separated by ';', RANKS N for PARTITION_RANKS). Needs a build
# with PT-Scotch: gpu-carry/ptscotch (../shared/tools/carry-debs.sh, see docs/benchmarks/scaling.md).
# compare: block-eigs and block-cg against torch and CuPy (bench/scripts/compare_solvers.py eigs, cg), then compare-pencil.
# compare-pencil: K x = lambda M x on fem_p1's 128^3 cube: block-eigs with B, without (K alone), torch.lobpcg(K, B=M).
# eigs-precision: block-eigs on the 128^3 LOBPCG comparison with the residual block in fp64 and in fp32 (auto).
# tts: time to solution: wall from mpirun to exit beside the run's account, 128^3 and 256^3, generator and
# HDF5, 1 and 2 GPUs, natural and renumbered (bench/scripts/time-to-solution.sh; TTS_CASES picks).
# memplan: block-eigs --dry-run, then the real run, on configs/laplacian3d-256.yaml (1 GPU): the plan's
# device peak beside the measured one (Buffers' peak, and the device's use at it above its use before loading).
# tests: CUDA_TESTS (a ctest -R regex) narrows it to the GPU tests a change touched.
# sanitize: SANITIZE_RUNS (';'-separated test commands) narrows it to the kernels a change touched,
# SANITIZE_TOOLS (default "memcheck racecheck") to the tools.
# halo-scaling: block-eigs (100 iterations, k 16) and block-cg (16 RHS, 200 iterations) on the 256^3 7-point
# Laplacian in natural order at 1, 2 and 4 GPUs (HALO_SCALING_RANKS), halos through CUDA IPC, and with
# BLOCKEIGS_HALO_PEER=0 (as across nodes) through NCCL (nccl-1ch, nccl-2ch: at most 1 or 2 channels a peer),
# NCCL kept off NVLink (nccl-shm: host memory; nccl-net: its network transport) and MPI (HALO_SCALING_CASES
# picks); times and speedups over 1 GPU.
# halo-apply: one operator apply (256^3, 16 columns, 4 ranks) per halo transport (IPC, NCCL with NCCL's
# account of its transport, staged MPI), and an nsys profile of the NCCL case where nsys is installed.
# Matrices: gpu-carry/matrices (a copy of ../shared/data/matrices, which does
# not travel to the GPU machine).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests)
[ -d gpu-carry/matrices ] && export BLOCKEIGS_DATA_DIR=$PWD/gpu-carry/matrices
# PT-Scotch unpacked from Debian's packages (../shared/tools/carry-debs.sh gpu-carry/ptscotch ...): found by CMake.
[ -f gpu-carry/ptscotch/env.sh ] && source gpu-carry/ptscotch/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# NCCL for the halo transport: the CUDA toolkit's where it has one, else PyTorch's pip package (nvidia-nccl).
if [ -z "${NCCL_ROOT:-}" ] && [ ! -f /usr/local/cuda/include/nccl.h ]; then
  NCCL_ROOT=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))" 2>/dev/null) &&
    export NCCL_ROOT || unset NCCL_ROOT
fi
summary=()
note() { summary+=("$1"); }
# Nsight Compute's sections for the ncu steps.
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis"
sections+=" --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
# The base tree of the A/B steps (gpu-carry/base.tar), built once beside this one; a warm machine
# keeps the build for the next call only while base.tar is the same.
base=/tmp/gpu-check-base
build_base() {
  [ -f gpu-carry/base.tar ] || { echo "no gpu-carry/base.tar"; return 1; }
  cmp -s gpu-carry/base.tar $base.tar && [ -x $base/build/cuda/apps/block-eigs ] &&
    [ -x $base/build/cuda/apps/block-ops-bench ] && [ -x $base/build/cuda/apps/spmm-bench ] && return 0
  rm -rf $base $base.tar; mkdir -p $base && tar -xf gpu-carry/base.tar -C $base
  (cd $base && cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure-base.log" 2>&1 &&
   cmake --build --preset cuda -j "$(nproc)" --target block-eigs block-ops-bench spmm-bench >"$out/build-base.log" 2>&1) &&
    cp gpu-carry/base.tar $base.tar
}

# K x = lambda M x (fem_p1 3D 128^3, k = 16, 1e-5): block-eigs with B, the same grid's K x = lambda x, and
# torch.lobpcg(K, B=M) with the same test (targets: B within 2x of the standard time, torch at least 4x slower).
compare_pencil() {
  echo "== compare pencil (one GPU)"
  PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0 python3 bench/scripts/compare_solvers.py pencil --bin $bin \
    ${COMPARE_MAXITER:+--maxiter $COMPARE_MAXITER} 2>&1 | tee "$out/compare-pencil.log" | tail -9
  note "compare pencil   $(grep -E "^B's cost" "$out/compare-pencil.log" || echo 'no result (see compare-pencil.log)')"
}

echo "== device"; nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
gpus=$(nvidia-smi -L | wc -l)
# The tree that travels is the working tree; its .git may lag, so gpu-carry/COMMIT (written
# before the call: `git describe --always --dirty > gpu-carry/COMMIT`) names it when present.
echo "commit $(cat gpu-carry/COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)  date $(date -u +%F)"

echo "== build"
start=$SECONDS
if cmake --preset cuda -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
   cmake --build --preset cuda -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} >"$out/build.log" 2>&1; then
  note "build            ok ($((SECONDS - start)) s)"
else
  tail -40 "$out/configure.log" "$out/build.log"; note "build            FAILED"; printf '%s\n' "${summary[@]}"; exit 1
fi
bin=build/cuda/apps

for step in "${steps[@]}"; do
  case $step in
    dmma)
      echo "== fp64 MMA rate by shape"
      nvcc -O3 -arch=sm_90 -o /tmp/dmma_rate bench/micro/dmma_rate.cu && /tmp/dmma_rate 2>&1 | tee "$out/dmma-rate.log"
      note "dmma             $(grep -E ' 16 warps' "$out/dmma-rate.log" | awk '{printf "%s %s TF; ", $1, $(NF-1)}')"
      for o in $(find build/cuda/solver -name 'ritz_update.cu.o' -o -name 'tall_skinny_gram.cu.o' \
                   -o -name 'dmma_update.cu.o'); do
        echo "-- $o: $(cuobjdump --dump-sass "$o" | grep -oE 'DMMA\.[0-9A-Z.]+' | sort | uniq -c | tr '\n' ' ')"
      done ;;
    ncu-lobpcg)
      echo "== ncu (LOBPCG kernels, k = 20, clocks left alone)"
      for k in tall_skinny_gram ritz_update_; do
        timeout 200 ncu --clock-control none -k regex:$k --launch-skip 3 --launch-count 1 $sections \
          $bin/block-ops-bench --rows 2097152 --width 20 > "$out/ncu-$k.txt" 2>&1
        note "ncu              $k: exit $?"
        grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible" "$out/ncu-$k.txt" | head -12
      done
      # LOBPCG's SpMM width for k = 16 (block 20) on the 7-point Laplacian, row_split.
      timeout 200 ncu --clock-control none -k regex:row_split_kernel --launch-skip 3 --launch-count 1 $sections \
        $bin/spmm-bench --suite full --matrices lap7pt --n 20 --precision fp64 > "$out/ncu-row-split-n20.txt" 2>&1
      note "ncu              row_split n = 20: exit $?"
      grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Eligible Warps" "$out/ncu-row-split-n20.txt" | head -10 ;;
    ncu-gram)
      # Nsight Compute on the Gram pair at k = 20 with Z in fp32 (block-ops-bench's "Z fp32 apart"
      # case, the only launch of that kernel; demangled names read "(int)5, (int)2, (int)1, (bool)1").
      echo "== ncu (Gram pair, Z in fp32, k = 20)"
      timeout 200 ncu --clock-control none --kernel-name-base demangled \
        -k "regex:tall_skinny_gram_kernel<.int.5, .int.2, .int.1, .bool.1" --launch-skip 2 --launch-count 1 \
        $sections --section SourceCounters --section InstructionStats \
        $bin/block-ops-bench --rows 2097152 --width 20 > "$out/ncu-gram-single.txt" 2>&1
      note "ncu              gram single: exit $?"
      grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Executed Ipc|Local Memory" "$out/ncu-gram-single.txt" | head -12 ;;
    ncu-ritz)
      # Nsight Compute on the staged Ritz update at k = 20 with A X implied: Z in fp64 (bool 0)
      # and in fp32 (bool 1), the third launch of each in block-ops-bench.
      echo "== ncu (Ritz update, A X implied, Z in fp64 and fp32, k = 20)"
      for v in 0 1; do
        timeout 200 ncu --clock-control none --kernel-name-base demangled \
          -k "regex:ritz_update_staged_kernel<.int.5, .int.2, .bool.1, .bool.$v>" --launch-skip 2 --launch-count 1 \
          $sections --section SourceCounters --section InstructionStats \
          $bin/block-ops-bench --rows 2097152 --width 20 > "$out/ncu-ritz-single$v.txt" 2>&1
        note "ncu              ritz single=$v: exit $?"
        grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Executed Ipc|Local Memory" "$out/ncu-ritz-single$v.txt" | head -12
      done ;;
    tests)
      echo "== ctest -L cuda"
      # CUDA_TESTS="regex": only the GPU tests whose names match (the ones a change touched).
      ctest --preset cuda -L cuda ${CUDA_TESTS:+-R "$CUDA_TESTS"} -j 4 --timeout 600 2>&1 | tee "$out/ctest-cuda.log" |
        grep -vE '^ +Start|Passed' | tail -40
      note "ctest -L cuda    $(grep -E 'tests passed' "$out/ctest-cuda.log" | tail -1)"
      skipped=$(grep -c 'Skipped' "$out/ctest-cuda.log"); note "  skipped         $skipped" ;;
    sanitize)
      # compute-sanitizer over our kernels' device tests: memcheck (out-of-bounds and misaligned
      # accesses, leaks) and racecheck (shared-memory hazards: the row-group and Ritz-update staging,
      # the merge kernels).
      echo "== compute-sanitizer"
      san=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda-*/bin/compute-sanitizer 2>/dev/null | head -1)
      if [ -z "$san" ]; then note "sanitize         compute-sanitizer not found"; continue; fi
      tb=build/cuda/tests; : > "$out/sanitize.log"
      runs=("test_spmm_kernels --gtest_filter=-*DeterministicBits*" "test_spmm_kernel_paths --gtest_filter=-*100k*"
            "test_spmm_heuristic" "test_merge_partition_device" "test_device_block_ops" "test_ritz_update")
      # SANITIZE_RUNS="test_a --gtest_filter=X;test_b": only these (the kernels a change touched).
      [ -n "${SANITIZE_RUNS:-}" ] && IFS=';' read -r -a runs <<< "$SANITIZE_RUNS"
      # SANITIZE_TOOLS="memcheck": fewer tools (racecheck matters where a kernel's staging changed).
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
        for run in "${runs[@]}"; do
          set -- $run
          # cuSPARSE's kernels run in the SpMM tests as the comparison; they are not ours to check
          # (racecheck reports a hazard in its csrmv_v3_kernel).
          extra=(--kernel-name-exclude kns=cusparse); [ $tool = memcheck ] && extra+=(--leak-check full)
          timeout 200 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 $tb/$run >> "$out/sanitize.log" 2>&1
          rc=$?; echo "$tool $1: exit $rc" | tee -a "$out/sanitize.log"
          note "sanitize         $tool $1: exit $rc"
        done
      done
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitize.log" | sort | uniq -c ;;
    bench-quick|bench-full)
      echo "== spmm-bench ${step#bench-}"
      if [ -x $bin/spmm-bench ]; then
        $bin/spmm-bench --suite "${step#bench-}" ${BLOCKEIGS_DATA_DIR:+--data "$BLOCKEIGS_DATA_DIR"} --csv "$out/spmm-bench.csv" \
          2>&1 | tee "$out/spmm-bench.log" | tail -60
        note "spmm-bench       exit ${PIPESTATUS[0]}"
      else
        note "spmm-bench       not built"
      fi ;;
    layouts)
      # Odd widths, odd columns and LOBPCG's view (ld 120) beside even compact widths: the
      # SpMM's alignment paths (docs/benchmarks/spmm.md). Apply time in ms per layout.
      echo "== operator-bench layouts (7-point Laplacian 128^3)"
      for prec in fp64 fp32; do
        flag=; [ $prec = fp32 ] && flag=--fp32
        for w in 8 9 16 17 18 19 20; do
          mpirun -np 1 $bin/operator-bench --grid 128 --width $w --reps 20 $flag 2>&1 | grep '^CSV' | sed "s/^/compact /"
        done
        for w in 17 20; do for c in 40 41; do
          mpirun -np 1 $bin/operator-bench --grid 128 --width $w --ld 120 --column $c --reps 20 $flag 2>&1 |
            grep '^CSV' | sed "s/^/ld120-col$c /"
        done; done
      done | tee "$out/layouts.log"
      note "layouts          $(awk -F, '{printf "%s %s w%s %.3f; ", $1, $5, $4, $7}' "$out/layouts.log" | sed 's/CSV//g')" ;;
    operator)
      echo "== operator-bench (7-point Laplacian, fp64, width 16)"
      for grid in 128 256; do
        mpirun -np 1 $bin/operator-bench --grid $grid --width 16 --reps 20 2>&1 | tee -a "$out/operator.log"
        if [ "$gpus" -ge 2 ]; then
          # Halo device to device (CUDA IPC, the default), then through MPI for comparison.
          mpirun -np 2 --bind-to none $bin/operator-bench --grid $grid --width 16 --reps 20 2>&1 | tee -a "$out/operator.log"
          BLOCKEIGS_HALO_PEER=0 mpirun -x BLOCKEIGS_HALO_PEER -np 2 --bind-to none $bin/operator-bench --grid $grid --width 16 --reps 20 2>&1 | tee -a "$out/operator.log"
        fi
      done
      # In order per grid: 1 rank, 2 ranks with CUDA IPC, 2 ranks through MPI.
      note "$(grep '^CSV,operator' "$out/operator.log" | awk -F, '{printf "operator %s^3 np%s %.3f ms; ", $3, $6, $7}')" ;;
    blockops)
      echo "== block-ops-bench (2097152 rows, fp64)"
      # 16: block CG's width; 20: LOBPCG's block for k = 16 (its S and A S have 60 columns).
      for k in 16 20; do $bin/block-ops-bench --rows 2097152 --width $k 2>&1 | tee -a "$out/block-ops.log" | grep -v '^CSV'; done
      note "block-ops: $(grep -c '^CSV,block_ops' "$out/block-ops.log") cases timed" ;;
    profile)
      # Where a solver's time goes, kernel by kernel and between kernels (Nsight Systems):
      # block-cg by default, block-eigs with PROFILE_APP=block-eigs (the same 128^3 problems).
      # The GPU machine has only the nsys inside Nsight Compute; it leaves a .qdstrm that its
      # QdstrmImporter turns into a report, and that needs libdw, which the machine lacks: copy
      # libdw.so.1, libelf.so.1, liblzma.so.5 and libbz2.so.1.0 from here into gpu-carry/libdw.
      # PROFILE_CONFIG and PROFILE_ARGS: another problem (the complex filter: bench/configs/eigs-bloch-128.yaml and
      # PROFILE_ANCHOR=row_split, since the filter launches no ritz_update).
      app=${PROFILE_APP:-block-cg}; cfg=${PROFILE_CONFIG:-bench/configs/${app#block-}-laplacian-128.yaml}
      echo "== profile (nsys, $app 128^3)"
      nsys_bin=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
                   /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
      if [ -z "$nsys_bin" ]; then note "profile          nsys not found"; continue; fi
      rm -f "$out/$app".{nsys-rep,qdstrm,sqlite}
      "$nsys_bin" profile -t cuda -o "$out/$app" --force-overwrite true $bin/$app $cfg ${PROFILE_ARGS:-} > "$out/profile-run.log" 2>&1
      if [ ! -f "$out/$app.nsys-rep" ] && [ -f "$out/$app.qdstrm" ]; then
        importer=$(ls /opt/nvidia/nsight-compute/*/host/linux-desktop-*/QdstrmImporter 2>/dev/null | head -1)
        LD_LIBRARY_PATH=$PWD/gpu-carry/libdw:${LD_LIBRARY_PATH:-} "$importer" -i "$out/$app.qdstrm" > "$out/profile-import.log" 2>&1
        rm -f "$out/$app.qdstrm"  # ~0.7 GB for a block-eigs run
      fi
      if [ -f "$out/$app.nsys-rep" ] &&
         "$nsys_bin" export --type sqlite -o "$out/$app.sqlite" "$out/$app.nsys-rep" > "$out/profile-export.log" 2>&1; then
        anchor=${PROFILE_ANCHOR:-ritz_update_}; [ $app = block-cg ] && anchor=${PROFILE_ANCHOR:-row_split_kernel}
        python3 bench/scripts/nsys_gaps.py "$out/$app.sqlite" $anchor | tee "$out/profile-gaps.txt"
        note "profile          $(head -1 "$out/profile-gaps.txt")"
      else
        note "profile          no report (see $out/profile-*.log)"
      fi ;;
    ncu)
      echo "== ncu (Nsight Compute, clocks left alone)"
      timeout 200 ncu --clock-control none -k regex:tall_skinny_gram --launch-skip 3 --launch-count 1 $sections \
        $bin/block-ops-bench --rows 2097152 --width 20 > "$out/ncu-gram.txt" 2>&1
      note "ncu              gram pair: exit $?"
      timeout 200 ncu --clock-control none -k regex:merge_spmv_kernel --launch-skip 3 --launch-count 1 $sections \
        $bin/spmm-bench --suite full ${BLOCKEIGS_DATA_DIR:+--data "$BLOCKEIGS_DATA_DIR"} --matrices Oregon --n 1 --precision fp32 \
        > "$out/ncu-spmv.txt" 2>&1
      note "ncu              merge SpMV body: exit $?" ;;
    compare)
      # Issue targets: block-eigs vs torch.lobpcg and cupyx lobpcg; block-cg vs cupyx cg per column; then
      # each with the Chebyshev preconditioner (degree COMPARE_CHEB_DEGREE, default the apps' auto; its
      # precision COMPARE_CHEB_PRECISION, default auto), CuPy given the same polynomial; and our rows again
      # with the polynomial in the other precisions of COMPARE_CHEB_ALSO (default fp32,fp64; none: no extra rows).
      echo "== compare (one GPU)"
      export PYTHONUNBUFFERED=1
      cheb="${COMPARE_CHEB_DEGREE:+--cheb-degree $COMPARE_CHEB_DEGREE} --cheb-precision ${COMPARE_CHEB_PRECISION:-auto}"
      cheb="$cheb --cheb-also-precision ${COMPARE_CHEB_ALSO:-fp32,fp64}"
      # COMPARE_MAXITER=4000: the others get twice block-eigs' iterations (the default caps them at 1000).
      CUDA_VISIBLE_DEVICES=0 python3 bench/scripts/compare_solvers.py eigs --bin $bin ${COMPARE_SKIP_CUPY:+--skip-cupy} \
        ${COMPARE_MAXITER:+--maxiter $COMPARE_MAXITER} $cheb 2>&1 | tee "$out/compare-eigs.log" | tail -17
      CUDA_VISIBLE_DEVICES=0 python3 bench/scripts/compare_solvers.py cg --bin $bin $cheb \
        2>&1 | tee "$out/compare-cg.log" | tail -13
      note "$(grep -E '^\| block-(eigs|cg) ' "$out"/compare-{eigs,cg}.log | tr '\n' ' ')"
      compare_pencil ;;
    compare-pencil)
      compare_pencil ;;
    ab-eigs)
      echo "== A/B block-eigs 128^3 (base $(cat gpu-carry/BASE 2>/dev/null || echo '?') against this tree)"
      if ! build_base; then note "ab-eigs          base build FAILED"; continue; fi
      for i in $(seq ${AB_RUNS:-3}); do
        for side in base this; do
          b=$bin; [ $side = base ] && b=$base/build/cuda/apps
          line=$($b/block-eigs bench/configs/eigs-laplacian-128.yaml 2>&1 | tee -a "$out/ab-eigs-$side.log" | grep -E '^solve time')
          its=$(grep -E '^iterations' "$out/ab-eigs-$side.log" | tail -1)
          echo "$side: $its; $line" | tee -a "$out/ab-eigs.log"
        done
      done
      note "ab-eigs          $(grep -c . "$out/ab-eigs.log") runs" ;;
    eigs-precision)
      # The 128^3 LOBPCG comparison's problem with the residual block in fp64 and in fp32 (eigensolver.search_precision),
      # one binary, alternating PRECISION_RUNS (2) times; 2D 200^2 and 1138_bus-like hard cases
      # are the tests' business, this is the timing.
      echo "== block-eigs 128^3: search_precision fp64 against auto"
      for p in fp64 auto; do
        sed "s/^  preconditioner: none/  preconditioner: none\n  search_precision: $p/" \
          bench/configs/eigs-laplacian-128.yaml > /tmp/eigs-$p.yaml
      done
      for i in $(seq ${PRECISION_RUNS:-2}); do
        for p in fp64 auto; do
          $bin/block-eigs /tmp/eigs-$p.yaml > "$out/eigs-$p-$i.log" 2>&1
          echo "$p (run $i, exit $?): $(grep -E '^iterations' "$out/eigs-$p-$i.log"); $(grep -E '^solve time' "$out/eigs-$p-$i.log")" |
            tee -a "$out/eigs-precision.log"
          awk '$NF == "yes" || $NF == "NO" {if ($4 + 0 > m) m = $4 + 0} END {print "  max rel. residual " m}' "$out/eigs-$p-$i.log" |
            tee -a "$out/eigs-precision.log"
        done
      done
      note "eigs-precision   $(grep -c iterations "$out/eigs-precision.log") runs" ;;
    ab-spmm)
      # Our kernels at the widths AB_SPMM_N (default: around the three-vectors-a-lane shapes, with
      # 16 and 32 as controls) on the generated matrices, base and this tree in turn.
      echo "== A/B spmm-bench (base $(cat gpu-carry/BASE 2>/dev/null || echo '?') against this tree)"
      if ! build_base; then note "ab-spmm          base build FAILED"; continue; fi
      for side in base this; do
        b=$bin; [ $side = base ] && b=$base/build/cuda/apps
        $b/spmm-bench --suite full --matrices "${AB_SPMM_MATRICES:-lap|uniform|powerlaw}" \
          --n "${AB_SPMM_N:-11,16,17,18,20,24,32,40,48}" --csv "$out/ab-spmm-$side.csv" > "$out/ab-spmm-$side.log" 2>&1
        note "ab-spmm          $side exit $?"
      done
      # automatic's time per case: base, this, base / this.
      # Columns by their header names (the CSV has gained columns over time).
      awk -F, 'FNR == 1 {side++; delete col; for (i = 1; i <= NF; i++) col[$i] = i; next}
        $col["algorithm"] == "automatic" {key = $1 " " $col["precision"] " n=" $col["n"]; t[key, side] = $col["time_us"];
          c[key, side] = $col["chosen"] (("slab" in col) && $col["slab"] != "" ? "/" $col["slab"] : ""); keys[key] = 1}
        END {for (k in keys) printf "%-34s %9.1f %9.1f  %5.2fx  %s -> %s\n", k, t[k, 1], t[k, 2], t[k, 1] / t[k, 2], c[k, 1], c[k, 2]}' \
        "$out/ab-spmm-base.csv" "$out/ab-spmm-this.csv" | sort -k2,2 -k1,1 -k3,3V ;;
    ab-blockops)
      # The block operations at LOBPCG's k = 20 (and block CG's 16), base and this tree alternately.
      echo "== A/B block-ops-bench (base $(cat gpu-carry/BASE 2>/dev/null || echo '?') against this tree)"
      if ! build_base; then note "ab-blockops      base build FAILED"; continue; fi
      for i in 1 2; do
        for side in base this; do
          b=$bin; [ $side = base ] && b=$base/build/cuda/apps
          for k in 16 20; do
            $b/block-ops-bench --rows 2097152 --width $k 2>&1 | sed "s/^CSV,/CSV,$side,/" >> "$out/ab-blockops.log"
          done
        done
      done
      grep -E '^CSV' "$out/ab-blockops.log" | grep -E 'S\^T \[W AW\]|Ritz \+ R|\[X P W\] M|odd P|W T in place|W -= ' |
        awk -F, '{key=$7" k="$5" "$2; sum[key]+=$NF; n[key]++} END {for (k in sum) printf "%-52s %.3f ms\n", k, sum[k]/n[k]}' | sort
      note "ab-blockops      $(grep -c '^CSV' "$out/ab-blockops.log") timings" ;;
    scaling)
      # 1, 2 (and SCALING_RANKS) GPUs, fixed iteration counts so every rank count does the same arithmetic;
      # SCALING_PRECOND (a preconditioner mapping, e.g. "{type: chebyshev}") for both apps.
      echo "== scaling (7-point Laplacian, fp64, 16 columns${SCALING_PRECOND:+, preconditioner $SCALING_PRECOND})"
      pc=${SCALING_PRECOND:+, preconditioner: $SCALING_PRECOND}
      for grid in ${SCALING_GRIDS:-256}; do
        printf 'matrix:\n  generator: {type: laplacian_3d, nx: %s, ny: %s, nz: %s}\neigensolver: {k: 16, tolerance: 1.0e-5, convergence_test: relative, max_iterations: %s%s}\noutput: {monitor: false}\n' \
          $grid $grid $grid "${SCALING_EIGS_ITERATIONS:-100}" "$pc" > /tmp/eigs-$grid.yaml
        printf 'matrix:\n  generator: {type: laplacian_3d, nx: %s, ny: %s, nz: %s}\nblock_cg: {rhs: {source: random, columns: 16}, rtol: 1.0e-8, max_iterations: %s%s}\noutput: {monitor: false}\n' \
          $grid $grid $grid "${SCALING_CG_ITERATIONS:-200}" "$pc" > /tmp/cg-$grid.yaml
        for np in ${SCALING_RANKS:-1 2}; do
          [ "$np" -gt "$gpus" ] && continue
          echo "-- block-eigs ${grid}^3 np $np"
          mpirun -np $np --bind-to none $bin/block-eigs /tmp/eigs-$grid.yaml 2>&1 | tee "$out/scaling-eigs-$grid-np$np.log" | grep -E '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +cuda|^iterations|^solve time'
          echo "-- block-cg ${grid}^3 np $np"
          mpirun -np $np --bind-to none $bin/block-cg /tmp/cg-$grid.yaml 2>&1 | tee "$out/scaling-cg-$grid-np$np.log" | grep -E '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +cuda|^iterations'
        done
      done
      note "scaling: $(grep -h '^solve time' "$out"/scaling-eigs-*.log | awk '{print $3}' | tr '\n' ' ')(eigs s); $(grep -h '^iterations' "$out"/scaling-cg-*.log | sed 's/.*time \([0-9.]*\) s.*/\1/' | tr '\n' ' ')(cg s)" ;;
    halo-scaling)
      # Fixed iteration counts, so that every rank count does the same arithmetic; one run per case.
      echo "== halo scaling (256^3 7-point Laplacian, natural order, fp64, 16 columns)"
      printf 'matrix:\n  generator: {type: laplacian_3d, nx: 256, ny: 256, nz: 256}\neigensolver: {k: 16, tolerance: 1.0e-5, convergence_test: relative, max_iterations: 100}\noutput: {monitor: false}\n' > /tmp/halo-eigs.yaml
      printf 'matrix:\n  generator: {type: laplacian_3d, nx: 256, ny: 256, nz: 256}\nblock_cg: {rhs: {source: random, columns: 16}, rtol: 1.0e-8, max_iterations: 200}\noutput: {monitor: false}\n' > /tmp/halo-cg.yaml
      # case name, then the environment it runs with
      # (NCCL between GPUs of one node still uses NVLink through its own IPC; nccl-shm keeps it to host memory,
      # nccl-net to its network transport, the NIC with GPUDirect RDMA where there is one, else sockets.)
      all_cases=("ipc:" "nccl:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=auto"
                 "nccl-1ch:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=auto NCCL_MAX_P2P_NCHANNELS=1"
                 "nccl-2ch:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=auto NCCL_MAX_P2P_NCHANNELS=2"
                 "nccl-shm:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=nccl NCCL_P2P_DISABLE=1"
                 "nccl-net:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=nccl NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1"
                 "mpi:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=mpi")
      cases=()
      for c in "${all_cases[@]}"; do
        [[ " ${HALO_SCALING_CASES:-ipc nccl nccl-shm nccl-net mpi} " == *" ${c%%:*} "* ]] && cases+=("$c")
      done
      halo_run() {  # app np case env...: prints the solve time in seconds
        local app=$1 np=$2 name=$3; shift 3
        local log="$out/halo-$app-$name-np$np.log" xs=()
        for v in "$@"; do xs+=(-x "${v%%=*}"); done
        env "$@" mpirun -np "$np" --bind-to none "${xs[@]}" $bin/block-$app /tmp/halo-$app.yaml > "$log" 2>&1
        grep -h '^backend' "$log" | sed 's/^/   /' >&2
        if [ "$app" = eigs ]; then grep -h '^solve time' "$log" | awk '{print $3}'
        else grep -h '^iterations' "$log" | sed 's/.*time \([0-9.]*\) s.*/\1/'; fi
      }
      for app in eigs cg; do
        t1=$(halo_run $app 1 one)
        echo "-- block-$app np 1: ${t1:-FAILED} s"
        line="$app 1 GPU ${t1:-?} s"
        for c in "${cases[@]}"; do
          name=${c%%:*}; env_list=${c#*:}
          for np in ${HALO_SCALING_RANKS:-2 4}; do
            [ "$np" -gt "$gpus" ] && continue
            # shellcheck disable=SC2086
            t=$(halo_run $app $np $name $env_list)
            speedup=$(awk -v a="$t1" -v b="$t" 'BEGIN {if (a > 0 && b > 0) printf "%.2f", a / b; else print "?"}')
            echo "-- block-$app np $np $name: ${t:-FAILED} s, ${speedup}x over 1 GPU"
            line+="; $name np$np ${t:-?} s ${speedup}x"
          done
        done
        note "halo-scaling     $line"
      done ;;
    halo-apply)
      # One apply of the 256^3 operator (16 columns) per halo transport at 4 ranks (or as many GPUs as there
      # are), NCCL's own account of the transport it chose, and an nsys profile of the NCCL case where nsys is.
      np=4; [ "$np" -gt "$gpus" ] && np=$gpus
      echo "== halo transports, one apply (256^3, width 16, np $np)"
      for c in "ipc:" "nccl:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=nccl NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P" \
               "mpi:BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=mpi"; do
        name=${c%%:*}; env_list=${c#*:}; xs=()
        for v in $env_list; do xs+=(-x "${v%%=*}"); done
        # shellcheck disable=SC2086
        env $env_list mpirun -np $np --bind-to none "${xs[@]}" $bin/operator-bench --grid 256 --width 16 --reps 50 \
          > "$out/halo-apply-$name.log" 2>&1
        grep -E '^CSV|via|Channel' "$out/halo-apply-$name.log" | sort | uniq -c | head -20 | sed "s/^/$name /"
      done
      if command -v nsys > /dev/null; then
        BLOCKEIGS_HALO_PEER=0 BLOCKEIGS_HALO_TRANSPORT=nccl nsys profile -o "$out/halo-nccl" --force-overwrite true \
          -t cuda,nvtx,mpi --stats=true mpirun -np $np --bind-to none -x BLOCKEIGS_HALO_PEER -x BLOCKEIGS_HALO_TRANSPORT \
          $bin/operator-bench --grid 256 --width 16 --reps 20 > "$out/halo-nccl-nsys.log" 2>&1
        grep -A25 'cuda_gpu_kern_sum' "$out/halo-nccl-nsys.log" | head -30
      else
        echo "(no nsys on this machine)"
      fi
      note "halo-apply       $(grep -h '^CSV,operator' "$out"/halo-apply-*.log | awk -F, '{printf "np%s %.3f ms; ", $6, $7}')" ;;
    tts)
      echo "== time to solution (bench/scripts/time-to-solution.sh; TTS_CASES picks)"
      bench/scripts/time-to-solution.sh $bin "$out"
      note "tts              $(tail -n +2 "$out/tts-table.txt" | awk '{printf "%s %s/%s s; ", $1, $3, $5}')" ;;
    memplan)
      echo "== memory plan against the run (256^3 Laplacian, k = 16, 1 GPU)"
      cfg=configs/laplacian3d-256.yaml
      mpirun -np 1 $bin/block-eigs --dry-run --set output.path=$out/memplan-256.h5 $cfg 2>&1 | tee "$out/memplan-dry.log"
      mpirun -np 1 $bin/block-eigs --set output.path=$out/memplan-256.h5 $cfg 2>&1 | tee "$out/memplan-run.log" |
        grep -E '^(iterations|solve time|memory)'
      note "memplan          plan: $(grep -E '^  peak' "$out/memplan-dry.log" | sed 's/^ *//'); run: $(grep '^memory' "$out/memplan-run.log" | sed 's/^memory *//')" ;;
    partition)
      grid=${PARTITION_GRID:-256}; np=${PARTITION_RANKS:-4}; [ "$np" -gt "$gpus" ] && np=$gpus
      echo "== partition (7-point Laplacian ${grid}^3 from HDF5, natural and renumbered, $np GPUs)"
      grep -q 'PT-Scotch ON' "$out/configure.log" || echo "warning: this build has no PT-Scotch: partition: graph will fail"
      spec="type: laplacian_3d, nx: $grid, ny: $grid, nz: $grid"
      h5=/tmp/partition-$grid
      for order in natural renumbered; do
        extra=; [ $order = renumbered ] && extra=", renumber: {seed: 1}"
        if [ ! -f $h5-$order.h5 ]; then
          t0=$SECONDS
          $bin/mtx2h5 --generate "{$spec$extra}" $h5-$order.h5 || { note "partition        mtx2h5 FAILED"; continue 2; }
          echo "mtx2h5 $order: $((SECONDS - t0)) s"
        fi
        printf 'matrix:\n  hdf5: {file: %s}\neigensolver: {k: 16, tolerance: 1.0e-5, convergence_test: relative, max_iterations: 100}\noutput: {monitor: false}\n' \
          $h5-$order.h5 > /tmp/partition-eigs-$order.yaml
        printf 'matrix:\n  hdf5: {file: %s}\nblock_cg: {rhs: {source: random, columns: 16}, rtol: 1.0e-8, max_iterations: 200}\noutput: {monitor: false}\n' \
          $h5-$order.h5 > /tmp/partition-cg-$order.yaml
      done
      runs=${PARTITION_RUNS:-natural contiguous N auto;renumbered contiguous N none;renumbered graph N none;renumbered graph N auto;renumbered contiguous 1 none;renumbered contiguous 1 auto}
      IFS=';' read -ra run_list <<< "$runs"
      for run in "${run_list[@]}"; do
        set -- $run; ranks=$3; [ "$ranks" = N ] && ranks=$np; tag=$1-$2-np$ranks-$4
        line=
        for app in ${PARTITION_APPS:-eigs cg}; do
          echo "-- block-$app $1, partition $2, np $ranks, local_order $4"
          log="$out/partition-$app-$tag.log"
          mpirun -np $ranks --bind-to none $bin/block-$app /tmp/partition-$app-$1.yaml --set execution.partition=$2 \
            --set execution.local_order=$4 2>&1 | tee "$log" |
            grep -E '^partition|^row order|^note|^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +cuda|^iterations|^solve time|^error'
          # "solve time T s: SpMM S (halo H)" (block-eigs), "iterations ...; time T s: SpMM S (halo H)" (block-cg)
          times=$(sed -n 's/.*time \([0-9.]*\) s: SpMM \([0-9.]*\) (halo \([0-9.]*\)).*/\1 s (SpMM \2, halo \3)/p' "$log" | head -1)
          line+="; $app ${times:-?}"
        done
        part_s=$(sed -n 's/^partition  graph ([^)]*), \([0-9.]*\) s.*/\1/p' "$out"/partition-*-$tag.log | head -1)
        order_s=$(sed -n 's/^row order  band ([^)]*), \([0-9.]*\) s.*/\1/p' "$out"/partition-*-$tag.log | head -1)
        note "partition        $tag${line}${part_s:+; partitioning $part_s s}${order_s:+; row order $order_s s}"
      done ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
done

echo; echo "== summary"; printf '%s\n' "${summary[@]}"
