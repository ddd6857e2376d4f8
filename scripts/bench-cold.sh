#!/usr/bin/env bash
# bench-cold.sh: offcc vs clang-22 building real multi-file projects cold
# (offcc's cache emptied before every build) under make -j$JOBS: the
# benchmark of the criterion "offcc's CPU at most 1.02x clang's for each
# project, wall time at most 1.00x clang's".
#
#   scripts/bench-cold.sh                        # RUNS=3, make -j2
#   RUNS=5 scripts/bench-cold.sh
#   RUNS=1 PROJECTS=omp scripts/bench-cold.sh    # a quick try, one project
#   OFFCC_BEFORE=/tmp/offcc-old RUNS=5 scripts/bench-cold.sh   # before/after
#
# Projects (PROJECTS, default "hip omp cuda"):
#   hip:  testdata/hip-rocm with its Makefile (six .hip files, four with
#         kernels; ROCm 5.2's headers and device libraries, gfx90a and
#         gfx1030, HIPFLAGS=-O2), as scripts/bench-hip-rocm.sh builds it.
#   omp:  a generated C project, OpenMP offload to the host: main.c and
#         $((OMP_TUS - 1)) files of $OMP_KERNELS target regions each (the
#         regions of scripts/bench-cache.sh's project), compiled with
#         -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 -c and linked
#         into a program.
#   cuda: a generated CUDA project: main.cu, $CU_FILES .cu files of
#         $CU_KERNELS kernels each (math library calls in loops) and a
#         plain C++ file, compiled with -x cuda --offload-arch=$CU_ARCHS -O2
#         -c (Debian's CUDA 11.8, /usr/lib/cuda, which clang-22 finds itself)
#         and linked with -lcudart. Not testdata/cmake-cuda with CMake: its
#         three .cu files hold four one-line kernels (each compile is
#         mostly clang's start and the CUDA headers), and its CMake build
#         adds a separable-compilation device link that CMake runs itself
#         (nvlink, fatbinary: the same for both compilers) and the CMake
#         and Ninja machinery, which would dilute the comparison; a
#         Makefile keeps all three projects under the same make -j$JOBS.
#
# For each project every compiler builds a copy of its own (same relative
# paths). Untimed first: one build of each (page cache, binaries). Then
# RUNS runs; in each, the compilers take turns (the first of a run
# rotates): make clean (untimed), offcc's cache directory emptied
# (OFFCC_CACHE_DIR a fresh directory: a first build for its plan cache
# too), then make -j$JOBS timed: wall, and CPU as user+sys of make and all
# its children. clang-22 and clang++-22 are run directly.
#
# Checks (the script fails loudly on any failed build or check):
#   hip, cuda: every object and the program of each offcc build are the same
#     bytes as clang's (the compile unit IDs hash the same relative names);
#   omp: the programs run offloaded (OMP_TARGET_OFFLOAD=MANDATORY) and print
#     what clang's prints. The objects are not compared: by default offcc
#     names OpenMP kernels after the source's path (stable names), clang
#     after its inode (e2e/stable_names_test.go compares objects only with
#     --no-offload-stable-names; scripts/bench-cache.sh checks the output).
#   The hip and cuda programs are not run (no AMD or NVIDIA GPU needed).
#
# Env: OFFCC (default bin/offcc; offcc++ beside it is run), CLANG (default
#      /usr/lib/llvm-22/bin/clang; clang++ beside it is run), OFFCC_BEFORE
#      (another offcc, e.g. a build of an older commit, timed in the same
#      loop with a cache of its own: rows of its own; its offcc++ is the
#      file beside it, else a link made here), RUNS (runs per compiler,
#      default 3), JOBS (make -j, default 2), PROJECTS (default
#      "hip omp cuda"), LLVM_LIB (to run the OpenMP programs, default
#      /usr/lib/llvm-22/lib), OMP_TUS (C files, default 8), OMP_KERNELS
#      (target regions per kernel file, default 40), CU_FILES (kernel .cu
#      files, default 6), CU_KERNELS (kernels per file, default 60),
#      CU_ARCHS (default sm_70,sm_80).
# Every other OFFCC_* and CCACHE_* variable of the caller is unset, and so
# are make's and the compilers' usual variables; offcc's config file and
# cache default under ~ are kept out (XDG_* under the scratch directory).
# Each project is built RUNS + 1 times per compiler: RUNS=1 took under 4
# minutes on 2 loaded CPUs, so RUNS=3 takes about 8 (a quiet machine: less).
# Prints a Markdown table (medians; ratios of the medians).
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

# (Read now: every OFFCC_ variable is unset below.)
BEFORE=${OFFCC_BEFORE:-}
OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
[ -z "$BEFORE" ] || case $BEFORE in /*) ;; *) BEFORE=$start_dir/$BEFORE ;; esac
# clang++ beside clang: .../clang -> .../clang++, clang-22 -> clang++-22.
CLANGXX=${CLANG%clang*}clang++${CLANG##*clang}
LLVM_LIB=${LLVM_LIB:-/usr/lib/llvm-22/lib}
RUNS=${RUNS:-3}
JOBS=${JOBS:-2}
PROJECTS=${PROJECTS:-hip omp cuda}
OMP_TUS=${OMP_TUS:-8}
OMP_KERNELS=${OMP_KERNELS:-40}
CU_FILES=${CU_FILES:-6}
CU_KERNELS=${CU_KERNELS:-60}
CU_ARCHS=${CU_ARCHS:-sm_70,sm_80}

for v in RUNS JOBS OMP_TUS OMP_KERNELS CU_FILES CU_KERNELS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive integer" >&2; exit 1; }
done
[ "$OMP_TUS" -ge 2 ] || { echo "bench: OMP_TUS=$OMP_TUS: want at least 2 (main.c and a kernel file)" >&2; exit 1; }
for p in $PROJECTS; do
	case $p in hip | omp | cuda) ;; *) echo "bench: PROJECTS: unknown project $p (want hip, omp, cuda)" >&2; exit 1 ;; esac
done
for c in "$OFFCC" "$OFFCC++" "$CLANG" "$CLANGXX" ${BEFORE:+"$BEFORE"} "$(command -v make || true)"; do
	if [ -z "$c" ] || [ ! -x "$c" ]; then
		echo "bench: ${c:-make} not found (run make build / make deps)" >&2
		exit 1
	fi
done
if [[ " $PROJECTS " == *" hip "* ]]; then
	for f in /usr/include/hip/hip_runtime.h /usr/lib/x86_64-linux-gnu/libamdhip64.so /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc; do
		[ -e "$f" ] || { echo "bench: $f not found: ROCm HIP is not installed (make deps), or leave hip out of PROJECTS" >&2; exit 1; }
	done
fi
if [[ " $PROJECTS " == *" cuda "* ]]; then
	for f in /usr/include/cuda_runtime.h /usr/lib/x86_64-linux-gnu/libcudart.so; do
		[ -e "$f" ] || { echo "bench: $f not found: the CUDA toolkit is not installed (make deps-cuda), or leave cuda out of PROJECTS" >&2; exit 1; }
	done
	command -v ptxas >/dev/null || [ -x /usr/lib/cuda/bin/ptxas ] || { echo "bench: ptxas not found (make deps-cuda)" >&2; exit 1; }
fi

# Nothing from the caller's environment steers offcc, ccache, make or the
# compilers.
for v in "${!OFFCC_@}" "${!CCACHE_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS HIPFLAGS CUDAFLAGS LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH

# shellcheck source=scripts/benchlib.sh
. "$repo/scripts/benchlib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tmp" "$work/xdg-config" "$work/xdg-cache" "$work/bin"
export TMPDIR=$work/tmp XDG_CONFIG_HOME=$work/xdg-config XDG_CACHE_HOME=$work/xdg-cache

# The compilers: cc[v] and cxx[v] of each variant; label[v] for the table.
variants=(clang new)
declare -A cc=([clang]=$CLANG [new]=$OFFCC) cxx=([clang]=$CLANGXX [new]=$OFFCC++)
declare -A label=([clang]=clang [new]=offcc)
if [ -n "$BEFORE" ]; then
	variants+=(before)
	cc[before]=$BEFORE
	if [ -x "$BEFORE++" ]; then
		cxx[before]=$BEFORE++
	else
		# offcc is offcc++ when its name ends in ++.
		ln -s "$BEFORE" "$work/bin/offcc++"
		cxx[before]=$work/bin/offcc++
	fi
	label[before]="offcc before"
fi

# --- the projects ------------------------------------------------------------
# gen_<project> <dir>: writes the project's sources and Makefile into dir.
# Each Makefile takes CC and CXX (compile and link), has "all" and "clean",
# and builds the program "app" (hip-rocm: "hip-rocm").

gen_hip() { cp -r "$repo/testdata/hip-rocm/." "$1/"; }

gen_omp() {
	local d=$1 objs
	gen_omp_project "$d" "$OMP_TUS" "$OMP_KERNELS" scripts/bench-cold.sh
	objs=$(omp_project_objs "$OMP_TUS")
	{
		echo "# Generated by scripts/bench-cold.sh: make CC=<compiler>"
		echo "CFLAGS := -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2"
		echo "OBJS := $objs"
		cat <<'MK'
all: app
app: $(OBJS)
	$(CC) $(CFLAGS) $(OBJS) -o $@
%.o: %.c proj.h
	$(CC) $(CFLAGS) -c $< -o $@
clean:
	rm -f $(OBJS) app
.PHONY: all clean
MK
	} >"$d/Makefile"
}

# gen_cuda_file <file number> <kernels>: a .cu file of kernels f<n>_k<i>
# (math library calls in loops of 4 to 10 steps) and run_f<n>, which
# launches them all.
gen_cuda_file() {
	awk -v f="$1" -v n="$2" 'BEGIN {
	split("sinf cosf expf logf sqrtf tanhf erff cbrtf", m, " ")
	print "// Generated by scripts/bench-cold.sh: " n " CUDA kernels."
	print "#include \"proj.cuh\""
	print ""
	for (k = 0; k < n; k++) {
		a = m[(f + k) % 8 + 1]; b = m[(f * 3 + k * 5) % 8 + 1]
		printf "__global__ void f%d_k%d(float *out, const float *x, int n) {\n", f, k
		printf "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n"
		printf "  float v = x[i], acc = 0.0f;\n"
		printf "  for (int j = 0; j < %d; j++)\n", 4 + k % 7
		printf "    acc += %s(v * %d.5f + j * 0.25f) * %s(fabsf(acc) * 0.5f + 1.0f);\n", a, k % 5 + 1, b
		printf "  out[i] = acc;\n}\n\n"
	}
	printf "float run_f%d(float *out, const float *x, int n) {\n  float h[4], s = 0.0f;\n", f
	for (k = 0; k < n; k++) {
		printf "  f%d_k%d<<<(n + 255) / 256, 256>>>(out, x, n);\n", f, k
		printf "  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);\n  s += h[0] + h[3];\n"
	}
	print "  return s;\n}"
}'
}

gen_cuda() {
	local d=$1 k objs="main.o report.o"
	{
		echo "// proj.cuh: shared by every .cu file of the project."
		echo "#pragma once"
		echo "#include <cuda_runtime.h>"
		for ((k = 1; k <= CU_FILES; k++)); do echo "float run_f$k(float *out, const float *x, int n);"; done
	} >"$d/proj.cuh"
	for ((k = 1; k <= CU_FILES; k++)); do
		gen_cuda_file "$k" "$CU_KERNELS" >"$d/k$k.cu"
		objs+=" k$k.o"
	done
	cat >"$d/report.h" <<'C'
#pragma once
int report(const char *what, double got);
C
	cat >"$d/report.cpp" <<'C'
// Plain C++ (no device code).
#include "report.h"
#include <cstdio>
#include <string>
int report(const char *what, double got) {
  std::string s = std::string(what) + ": " + std::to_string(got);
  std::puts(s.c_str());
  return 0;
}
C
	{
		echo '#include <cstdio>'
		echo '#include "proj.cuh"'
		echo '#include "report.h"'
		echo 'int main() {'
		cat <<'C'
  const int n = 1 << 16;
  float *x, *out;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(x, 0, n * sizeof(float));
  double sum = 0;
C
		for ((k = 1; k <= CU_FILES; k++)); do echo "  sum += run_f$k(out, x, n);"; done
		echo '  return report("sum", sum);'
		echo '}'
	} >"$d/main.cu"
	{
		echo "# Generated by scripts/bench-cold.sh: make CXX=<compiler>"
		echo "CUFLAGS := -x cuda --offload-arch=$CU_ARCHS -O2"
		echo "OBJS := $objs"
		cat <<'MK'
all: app
app: $(OBJS)
	$(CXX) $(OBJS) -lcudart -o $@
%.o: %.cu proj.cuh
	$(CXX) $(CUFLAGS) -c $< -o $@
report.o: report.cpp report.h
	$(CXX) -O2 -c $< -o $@
clean:
	rm -f $(OBJS) app
.PHONY: all clean
MK
	} >"$d/Makefile"
}

declare -A title=(
	[hip]="testdata/hip-rocm (6 HIP files, ROCm 5.2, gfx90a,gfx1030, -O2)"
	[omp]="OpenMP host offload ($OMP_TUS C files, $((OMP_TUS - 1))×$OMP_KERNELS target regions, -O2)"
	[cuda]="CUDA ($((CU_FILES + 1)) .cu files, $CU_FILES×$CU_KERNELS kernels, and a .cpp; $CU_ARCHS, -O2)"
)
declare -A prog=([hip]=hip-rocm [omp]=app [cuda]=app)

# build <project> <variant>: make clean (untimed), a fresh cache directory,
# then make -j$JOBS, timed into $work/t.<project>.<variant>.
build() {
	local d=$work/$1/${2}
	make -s -C "$d" clean >/dev/null
	rm -rf "$work/cache-$2"
	mkdir "$work/cache-$2"
	time_one "$work/t.$1.$2" env OFFCC_CACHE_DIR="$work/cache-$2" \
		make -s -C "$d" -j"$JOBS" CC="${cc[$2]}" CXX="${cxx[$2]}" HIPFLAGS=-O2 all
}

# runs_ok <program>: its output, run offloaded.
runs_ok() { OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$LLVM_LIB "$1" 2>&1; }

# check <project>: the outputs of the last builds (see the header).
check() {
	local p=$1 v f want got
	case $p in
	hip | cuda)
		for v in "${variants[@]:1}"; do
			for f in "$work/$p/clang/"*.o "$work/$p/clang/${prog[$p]}"; do
				f=${f##*/}
				cmp -s "$work/$p/clang/$f" "$work/$p/$v/$f" || {
					echo "bench: $p: ${label[$v]}'s $f differs from clang's" >&2
					exit 1
				}
			done
		done
		echo "bench: $p: every object and the program of ${label[new]}${BEFORE:+ and ${label[before]}} are clang's bytes" >&2
		;;
	omp)
		want=$(runs_ok "$work/$p/clang/app") || { echo "bench: omp: clang's program failed: $want" >&2; exit 1; }
		for v in "${variants[@]:1}"; do
			got=$(runs_ok "$work/$p/$v/app") || { echo "bench: omp: ${label[$v]}'s program failed: $got" >&2; exit 1; }
			[ "$got" = "$want" ] || { echo "bench: omp: ${label[$v]}'s program prints $got, clang's $want" >&2; exit 1; }
		done
		echo "bench: omp: the programs run offloaded and print the same ($want)" >&2
		;;
	esac
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
for p in $PROJECTS; do
	for v in "${variants[@]}"; do
		mkdir -p "$work/$p/$v"
		"gen_$p" "$work/$p/$v"
	done
	echo "bench: $p: ${title[$p]}, make -j$JOBS, $RUNS runs each (alternating); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	# Untimed: page cache, binaries.
	for v in "${variants[@]}"; do
		build "$p" "$v"
		: >"$work/t.$p.$v"
	done
	n=${#variants[@]}
	for ((i = 0; i < RUNS; i++)); do
		line="bench: $p: run $((i + 1))/$RUNS:"
		for ((j = 0; j < n; j++)); do
			v=${variants[$(((i + j) % n))]}
			build "$p" "$v"
			line+=" ${label[$v]} $(tail -1 "$work/t.$p.$v" | cut -d' ' -f1)s,"
		done
		echo "${line%,}" >&2
	done
	check "$p"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit+=" (modified)"
echo
echo "Cold builds (offcc's cache emptied before every build), make -j$JOBS after make clean; median of $RUNS runs; CPU is user+sys of make and all its children; ratios are offcc / clang of the medians."
echo
echo "| project | clang wall (s) | clang CPU (s) | offcc wall (s) | offcc CPU (s) | wall ratio | CPU ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
verdict=""
for p in $PROJECTS; do
	cw=$(median 1 "$work/t.$p.clang") cu=$(cpu_median "$work/t.$p.clang")
	for v in "${variants[@]:1}"; do
		w=$(median 1 "$work/t.$p.$v") c=$(cpu_median "$work/t.$p.$v")
		wr=$(ratio "$w" "$cw") cr=$(ratio "$c" "$cu")
		name=${title[$p]}
		[ "$v" = new ] || name+=", ${label[$v]} (OFFCC_BEFORE)"
		echo "| $name | $cw | $cu | $w | $c | $wr | $cr |"
		if [ "$v" = new ]; then
			if awk -v w="$wr" -v c="$cr" 'BEGIN { exit !(w <= 1.00 && c <= 1.02) }'; then
				verdict+=" $p: met;"
			else
				verdict+=" $p: NOT met (wall $wr, CPU $cr);"
			fi
		fi
	done
done
echo
echo "Criterion (wall ratio ≤ 1.00, CPU ratio ≤ 1.02):${verdict%;}."
echo
echo "Machine: $(nproc) CPUs, $cpu_model; load average $load_start at the start, $load_end at the end; $date_start; $("$CLANG" --version | head -1); offcc of commit $commit${BEFORE:+; OFFCC_BEFORE=$BEFORE}."
