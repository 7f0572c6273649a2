#!/usr/bin/env bash
# Experiment: row_split's Wide shapes (fp64, 16-byte vectors, 8 or 16 column lanes: LOBPCG's
# width 20 on the 7-point Laplacian) built for 3 resident blocks an SM (HEAD: 80 registers) and
# for more (BLOCKEIGS_WIDE_BLOCKS = 4, 5, 6: 64, 48, 40 registers, no spills with nvcc 13).
# Rebuilds only row_split.cu per variant, into a copy of the SpMM archive, and relinks
# spmm-bench and block-eigs beside the build: /tmp/row-split-blocks/N/.
#   scripts/dev/row_split_blocks.sh build   [BUILD_DIR]   # the variant binaries
#   scripts/dev/row_split_blocks.sh spmm    [BUILD_DIR]   # spmm-bench, HEAD and each variant
#   scripts/dev/row_split_blocks.sh eigs    [BUILD_DIR]   # the 128^3 LOBPCG comparison, alternating
# WIDE_BLOCKS="4 5 6" picks the variants; RUNS (2) the rounds; OUT the log folder.
set -euo pipefail
mode=$1
build=$(cd "${2:-build/cuda}" && pwd)
root=/tmp/row-split-blocks
out=${OUT:-$root}
variants=(${WIDE_BLOCKS:-4 5 6})
mkdir -p "$root" "$out"

build_variant() {
  local n=$1 dir=$root/$1
  mkdir -p "$dir"
  local entry
  entry=$(python3 - "$build/compile_commands.json" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1])):
    if e["file"].endswith("spmm/cuda/row_split.cu"):
        print(e["directory"]); print(e["command"]); break
EOF
)
  local directory command
  directory=$(sed -n 1p <<< "$entry"); command=$(sed -n 2p <<< "$entry")
  command=${command/ -o CMakeFiles\/blockeigs_spmm.dir\/cuda\/row_split.cu.o/ -o $dir/row_split.cu.o}
  (cd "$directory" && eval "$command -DBLOCKEIGS_WIDE_BLOCKS=$n -Xptxas -v") > "$dir/ptxas.log" 2>&1
  cp "$build/spmm/libblockeigs_spmm.a" "$dir/"
  ar r "$dir/libblockeigs_spmm.a" "$dir/row_split.cu.o"
  for app in spmm-bench block-eigs; do
    local link
    link=$(cat "$build/apps/CMakeFiles/$app.dir/link.txt")
    link=${link//..\/spmm\/libblockeigs_spmm.a/$dir/libblockeigs_spmm.a}
    link=${link/ -o $app / -o $dir/$app }
    (cd "$build/apps" && eval "$link")
  done
  echo "wide blocks $n: $(grep -A2 'row_split_kernelIdLi2ELi1ELi16ELb1' "$dir/ptxas.log" | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | tr '\n' ' ')"
}

bin_of() { [ "$1" = 3 ] && echo "$build/apps" || echo "$root/$1"; }

case $mode in
  build)
    pids=()
    for n in "${variants[@]}"; do build_variant "$n" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p"; done ;;
  spmm)
    # automatic's time per case and variant (the CSV's header names the columns).
    for n in 3 "${variants[@]}"; do
      "$(bin_of $n)/spmm-bench" --suite full --matrices "${MATRICES:-lap|uniform}" --n "${WIDTHS:-16,20,32}" \
        --precision fp64 --csv "$out/row-split-blocks-spmm-$n.csv" > "$out/row-split-blocks-spmm-$n.log" 2>&1 || true
    done
    for n in 3 "${variants[@]}"; do
      awk -F, -v n=$n 'FNR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
        $col["algorithm"] == "automatic" || $col["algorithm"] == "row_split" {
          printf "blocks %s  %-28s n=%-3s %-10s %8.1f us\n", n, $1, $col["n"], $col["algorithm"], $col["time_us"]}' \
        "$out/row-split-blocks-spmm-$n.csv"
    done | sort -k3,3 -k4,4 -k5,5 -k2,2n ;;
  eigs)
    cfg=configs/bench/eigs-laplacian-128.yaml
    for i in $(seq "${RUNS:-2}"); do
      for n in 3 "${variants[@]}"; do
        log="$out/row-split-blocks-eigs-$n-$i.log"
        "$(bin_of $n)/block-eigs" $cfg > "$log" 2>&1 || true
        echo "blocks $n run $i: $(grep -E '^iterations' "$log" | cut -d' ' -f1-2); $(grep -E '^solve time' "$log")"
      done
    done ;;
  *) echo "usage: $0 build|spmm|eigs [BUILD_DIR]"; exit 2 ;;
esac
