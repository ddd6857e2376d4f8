#!/usr/bin/env bash
# bench-llvm19.sh: offcc against each LLVM release's own clang, LLVM 19
# beside 22, on the multi-architecture builds of the other benchmarks:
# OpenMP (bench-multiarch.sh's target regions, --offload-arch=gfx...),
# HIP (bench-hip.sh's kernels, clang's old offload driver) and CUDA
# (bench-cuda.sh's kernels, sm_70..sm_90), each -O2 -c.
#
#   RUNS=5 scripts/bench-llvm19.sh
#
# Env: OFFCC (default bin/offcc), RELEASES (default "22 19"; release R's
#      tools are /usr/lib/llvm-R/bin, offcc is pointed at them with
#      OFFCC_LLVM_DIR), BUILDS (default "openmp hip cuda"),
#      OMP_KERNELS (default 60), HIP_KERNELS (default 120),
#      CUDA_KERNELS (default 30), AMD_ARCHS (default
#      gfx906,gfx908,gfx90a,gfx1030), CUDA_ARCHS (default
#      sm_70,sm_80,sm_86,sm_90), RUNS (default 5).
# Every offcc run is a first build (OFFCC_CACHE=0: no build cache, no
# plan cache); clang and offcc alternate (benchlib's
# alternate_clang_offcc). The CUDA build needs a CUDA toolkit
# both clangs find (Debian's 11.8). Prints a Markdown table (medians) and,
# per build, what offcc planned (or the reason it handed the command line
# to clang whole), from its -v notes.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/benchlib.sh
OFFCC=${OFFCC:-$PWD/bin/offcc}
RELEASES=${RELEASES:-22 19}
BUILDS=${BUILDS:-openmp hip cuda}
OMP_KERNELS=${OMP_KERNELS:-60}
HIP_KERNELS=${HIP_KERNELS:-120}
CUDA_KERNELS=${CUDA_KERNELS:-30}
AMD_ARCHS=${AMD_ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
CUDA_ARCHS=${CUDA_ARCHS:-sm_70,sm_80,sm_86,sm_90}
RUNS=${RUNS:-5}
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench: RUNS=$RUNS: want a positive integer" >&2; exit 1; }
[ -x "$OFFCC" ] || { echo "bench: $OFFCC not found (run make build)" >&2; exit 1; }
for r in $RELEASES; do
	[ -x "/usr/lib/llvm-$r/bin/clang" ] || { echo "bench: /usr/lib/llvm-$r/bin/clang not found (run make deps)" >&2; exit 1; }
done

# Nothing from the caller's environment steers offcc or hands it a
# jobserver.
for v in "${!OFFCC_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL
work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OFFCC_PROGRESS=0 OFFCC_CACHE_DIR="$work/cache"

gen_target_regions "$OMP_KERNELS" scripts/bench-llvm19.sh >"$work/bench.c"
gen_hip_kernels "$HIP_KERNELS" scripts/bench-llvm19.sh >"$work/bench.hip"
gen_cuda_kernels "$CUDA_KERNELS" scripts/bench-llvm19.sh >"$work/bench.cu"
inc=$PWD/testdata/hip
cd "$work"

# flags <build>: the compile's arguments after the compiler.
flags() {
	case $1 in
	openmp) echo "-fopenmp -O2 -c --offload-arch=$AMD_ARCHS -nogpulib bench.c -o out.o" ;;
	hip) echo "-x hip --offload-arch=$AMD_ARCHS -nogpuinc -nogpulib -I$inc -O2 -c bench.hip -o out.o" ;;
	cuda) echo "-x cuda --offload-arch=$CUDA_ARCHS -O2 -c bench.cu -o out.o" ;;
	*)
		echo "bench: unknown build $1 (want openmp, hip or cuda)" >&2
		exit 1
		;;
	esac
}

rows=()
notes=()
offcc_bin=$OFFCC
for b in $BUILDS; do
	read -r -a args <<<"$(flags "$b")"
	for r in $RELEASES; do
		bin=/usr/lib/llvm-$r/bin
		CLANG=$bin/clang
		[ "$b" != cuda ] || CLANG=$bin/clang++
		# offcc drives release r, with no build cache and no plan cache.
		export OFFCC_LLVM_DIR=$bin OFFCC_CACHE=0
		OFFCC=$offcc_bin
		# Keep offcc's notes, untimed: what it planned, or why clang ran
		# the command line whole.
		"$OFFCC" -v "${args[@]}" 2>"$work/notes" >/dev/null
		plan=$(grep -E '^offcc: note: .*(plans only|does not recognise|whole)' "$work/notes" | head -1 | sed 's/^offcc: note: //' || true)
		notes+=("- $b, LLVM $r: ${plan:-planned by offcc}")
		alternate_clang_offcc "$b LLVM $r" "$RUNS" "${args[@]}"
		cw=$(median 1 "$work/clang.t") ow=$(median 1 "$work/offcc.t")
		cc=$(cpu_median "$work/clang.t") oc=$(cpu_median "$work/offcc.t")
		rows+=("| $b | $r | $cw | $ow | $(ratio "$ow" "$cw") | $cc | $oc | $(ratio "$oc" "$cc") |")
	done
done

echo
echo "offcc against each release's own clang; -O2 -c, OpenMP $OMP_KERNELS target regions and HIP $HIP_KERNELS kernels for $AMD_ARCHS, CUDA $CUDA_KERNELS kernels for $CUDA_ARCHS; median of $RUNS runs, $(nproc) CPUs, offcc without cache."
echo
echo "| build | LLVM | clang wall (s) | offcc wall (s) | wall ratio | clang CPU (s) | offcc CPU (s) | CPU ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
printf '%s\n' "${notes[@]}"
