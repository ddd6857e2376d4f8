#!/usr/bin/env bash
# bench-hip.sh: offcc vs clang-22 on a HIP translation unit compiled for
# several AMD GPUs (-c, without -fgpu-rdc), as clang 22's default offload
# driver builds it.
#
#   RUNS=7 scripts/bench-hip.sh
#
# Env: OFFCC (default bin/offcc), CLANG (default /usr/lib/llvm-22/bin/clang),
#      KERNELS (kernels in the generated TU, default 120),
#      ARCHS (default gfx906,gfx908,gfx90a,gfx1030), RUNS (default 5),
#      MODE (extra flags: e.g. "--offload-new-driver" or
#      "--offload-new-driver -fgpu-rdc"; default none, clang's old driver).
# The TU includes testdata/hip/hip_min.h, so no ROCm is needed
# (-nogpuinc -nogpulib). Prints a Markdown table (medians).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/benchlib.sh
setup_clang_offcc
KERNELS=${KERNELS:-120}
ARCHS=${ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
RUNS=${RUNS:-5}
inc=$PWD/testdata/hip

gen_hip_kernels "$KERNELS" scripts/bench-hip.sh >"$work/bench.hip"

cd "$work"
read -r -a mode <<<"${MODE:-}"
flags=(-x hip "--offload-arch=$ARCHS" -nogpuinc -nogpulib "-I$inc" -O2 "${mode[@]}" -c bench.hip -o out.o)
export OFFCC_CACHE_DIR="$work/cache"
echo "bench: $KERNELS HIP kernels, --offload-arch=$ARCHS, $RUNS runs each (alternating)" >&2
compare_clang_offcc "HIP compile: \`-x hip -O2 ${MODE:+$MODE }-c --offload-arch=$ARCHS -nogpuinc -nogpulib\`, $KERNELS kernels with launches" "$RUNS" "${flags[@]}"
