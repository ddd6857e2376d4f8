#!/usr/bin/env bash
# bench-basedir.sh: a second checkout of a CMake project, built with the
# build cache that the first checkout's build filled: offcc through
# cmake/offcc-toolchain.cmake (its default base directory, the checkout;
# no environment variable) against ccache in front of clang-22 with
# CCACHE_BASEDIR.
#
#   RUNS=5 scripts/bench-basedir.sh
#
# The project is testdata/cmake-basedir: an OpenMP program (C, offload to
# the host device), a HIP library (Debian's ROCm 5.2, gfx90a and gfx1030)
# and a CUDA library (sm_80), Ninja, -j$JOBS. The HIP part needs ROCm
# (libamdhip64-dev, rocm-device-libs) and the CUDA part a CUDA toolkit
# (nvcc on PATH); a missing one is left out, and the table says so.
#
# For each compiler, checkout 1 lies at $work/<compiler>/one/src and is
# configured and built once (untimed) into src/build, filling the cache.
# Then, RUNS times: checkout 2, a fresh copy at
# $work/<compiler>/second/checkout/src, is configured (untimed) and built
# into src/build (timed: compiles, archives, link). Rows:
#   clang-22 with no cache (what the caches save);
#   offcc: CMAKE_TOOLCHAIN_FILE, OFFCC_CACHE_DIR shared with checkout 1;
#   ccache + clang-22: CMAKE_<LANG>_COMPILER_LAUNCHER=ccache (C, CXX,
#     CUDA), CCACHE_BASEDIR=$work/ccache (above both checkouts),
#     CCACHE_DIR shared with checkout 1.
# Jobs run: offcc: the cache misses of the build (offcc cache stats
# --json, total.misses, before and after): every job that ran a tool
# rather than take its outputs from the cache; ccache: its calls that were
# not hits (ccache --print-stats after ccache -z).
# offcc's checkout 2 objects and archives must be its checkout 1's byte for
# byte (ccache's that are not are named), and each OpenMP program must
# print what clang-22's prints.
#
# Env: OFFCC (default bin/offcc; offcc++ and the llvm-* links of make build
#      beside it), CLANG (default /usr/lib/llvm-22/bin/clang), CLANGXX
#      (default clang++ beside CLANG), LLVM_BIN (default
#      /usr/lib/llvm-22/bin), LLVM_LIB (default /usr/lib/llvm-22/lib),
#      CCACHE (default ccache on PATH), JOBS (default nproc), RUNS (default
#      5), HIP, CUDA (OFF leaves that part out; default ON where installed:
#      ccache 4.7 does not cache the HIP compile, whose several different
#      -Xarch_* options it does not support, so HIP=OFF compares the caches
#      on what both serve). Needs cmake and ninja. Takes about a minute on 2 CPUs with
#      RUNS=3.
# Prints a Markdown table (medians) ready to paste into docs/benchmarks.md.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
LLVM_LIB=${LLVM_LIB:-/usr/lib/llvm-22/lib}
CCACHE=${CCACHE:-$(command -v ccache || true)}
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-5}

case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
CLANGXX=${CLANGXX:-${CLANG%clang*}clang++${CLANG##*clang}}
case $CLANGXX in /*) ;; *) CLANGXX=$start_dir/$CLANGXX ;; esac
for c in "$OFFCC" "$OFFCC++" "$CLANG" "$CLANGXX" "$LLVM_BIN/llvm-ar" "$CCACHE" "$(command -v cmake || true)" "$(command -v ninja || true)"; do
	if [ -z "$c" ] || [ ! -x "$c" ]; then
		echo "bench: ${c:-ccache/cmake/ninja} not found (run make build / make deps; apt-get install ccache)" >&2
		exit 1
	fi
done
[ "${OFFCC##*/}" = offcc ] || { echo "bench: OFFCC=$OFFCC: want a file named offcc (the toolchain file runs offcc and offcc++ of its directory)" >&2; exit 1; }
for v in RUNS JOBS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive integer" >&2; exit 1; }
done
[ "$RUNS" -ge 5 ] || echo "bench: RUNS=$RUNS: fewer than 5 runs, for trying the script only" >&2

# Nothing from the caller's environment steers the caches, the compilers or
# CMake: OFFCC_BASE_DIR in particular must not be there (the toolchain file
# is what gives offcc its base directory).
for v in "${!OFFCC_@}" "${!CCACHE_@}" "${!CMAKE_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS CUDAFLAGS HIPFLAGS LIBRARY_PATH

# shellcheck source=scripts/benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OFFCC_CACHE_DIR="$work/offcc-cache" CCACHE_DIR="$work/ccache-cache"
# No user configuration: HOME's offcc.conf and ccache.conf stay out.
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config"
mkdir -p "$HOME"

# The optional parts.
hip=${HIP:-ON} cuda=${CUDA:-ON} parts="OpenMP (C)"
for v in hip cuda; do
	[[ ${!v} =~ ^(ON|OFF)$ ]] || { echo "bench: ${v^^}=${!v}: want ON or OFF" >&2; exit 1; }
done
for f in /usr/include/hip/hip_runtime.h /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc; do
	[ -e "$f" ] || hip=OFF
done
command -v nvcc >/dev/null || cuda=OFF
[ "$hip" = OFF ] || parts+=", HIP (gfx90a, gfx1030)"
[ "$cuda" = OFF ] || parts+=", CUDA (sm_80)"
[ "$hip" = ON ] || echo "bench: leaving out the HIP library (HIP=OFF, or ROCm HIP not installed)" >&2
[ "$cuda" = ON ] || echo "bench: leaving out the CUDA library (CUDA=OFF, or no nvcc on PATH)" >&2

common=(-G Ninja -DCMAKE_BUILD_TYPE= -DBASEDIR_HIP=$hip -DBASEDIR_CUDA=$cuda)
offcc_args=(-DCMAKE_TOOLCHAIN_FILE="$repo/cmake/offcc-toolchain.cmake" -DOFFCC_BIN_DIR="$(dirname "$OFFCC")"
	-DOFFCC_OPENMP_TARGETS=x86_64-pc-linux-gnu -DOFFCC_OPENMP=OFF -DOFFCC_OFFLOAD_ARCH=sm_80)
clang_args=(-DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX" -DCMAKE_CUDA_COMPILER="$CLANGXX"
	-DCMAKE_CUDA_ARCHITECTURES=80 -DCMAKE_AR="$LLVM_BIN/llvm-ar" -DCMAKE_RANLIB="$LLVM_BIN/llvm-ranlib")
ccache_args=("${clang_args[@]}" -DCMAKE_C_COMPILER_LAUNCHER="$CCACHE" -DCMAKE_CXX_COMPILER_LAUNCHER="$CCACHE"
	-DCMAKE_CUDA_COMPILER_LAUNCHER="$CCACHE")

# configure <src> <cmake args...>: configures <src>/build (untimed).
configure() {
	local src=$1
	shift
	cmake -S "$src" -B "$src/build" "${common[@]}" "$@" >"$work/configure.log" 2>&1 || {
		echo "bench: cmake configure of $src failed:" >&2
		cat "$work/configure.log" >&2
		exit 1
	}
}
# build <src>: builds <src>/build (time_one times it).
build() { ninja -C "$1/build" -j"$JOBS"; }
# checkout <dir>: a fresh copy of the project at <dir>/src.
checkout() { rm -rf "$1" && mkdir -p "$1" && cp -r "$repo/testdata/cmake-basedir" "$1/src"; }
# args_of <compiler>: the cmake arguments of clang, offcc or ccache.
args_of() {
	case $1 in
	clang) printf '%s\n' "${clang_args[@]}" ;;
	offcc) printf '%s\n' "${offcc_args[@]}" ;;
	ccache) printf '%s\n' "${ccache_args[@]}" ;;
	esac
}
# built <src>: the objects and archives of a build directory, with their
# checksums (CMake's compiler checks left out).
built() { (cd "$1/build" && find . \( -name '*.o' -o -name '*.a' \) -not -path '*/CMakeFiles/3.*' | sort | xargs sha256sum); }
# offcc_misses: total.misses of offcc cache stats --json.
offcc_misses() {
	"$OFFCC" cache stats --json | awk '/"total": *\{/ { t = 1 } t && /"misses":/ { gsub(/[^0-9]/, ""); print; exit }'
}
# ccache_outcome: the nonzero outcome counters of the ccache directory.
ccache_outcome() {
	"$CCACHE" --print-stats | awk -F'\t' '$2 != 0 && $1 !~ /^(local_storage_|remote_storage_|cache_size|files_in_cache|stats_|cleanups|direct_cache_miss|preprocessed_cache_miss)/ {
		printf "%s%s=%s", sep, $1, $2; sep = ", " } END { if (sep == "") printf "nothing counted" }'
}
# ccache_not_hits: ccache's calls that were not cache hits.
ccache_not_hits() {
	"$CCACHE" --print-stats | awk -F'\t' '$1 !~ /^(local_storage_|remote_storage_|cache_size|files_in_cache|stats_|cleanups|direct_cache_|preprocessed_cache_|max_|called_for_link)/ { n += $2 }
		END { print n + 0 }'
}
# t_file <compiler>: its file of time_one lines.
t_file() { echo "$work/t.$1"; }
# with_basedir <cmd...>: cmd with ccache's base directory above both
# checkouts.
with_basedir() {
	local -x CCACHE_BASEDIR="$work/ccache"
	"$@"
}
runs_ok() { OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$LLVM_LIB "$1" 2>&1; }

echo "bench: testdata/cmake-basedir ($parts), second checkout, Ninja -j$JOBS, $RUNS runs (compilers alternating)" >&2
# Checkout 1 of each compiler, built once: it fills offcc's and ccache's
# caches (and warms the page cache).
for c in clang offcc ccache; do
	checkout "$work/$c/one"
	mapfile -t a < <(args_of "$c")
	configure "$work/$c/one/src" "${a[@]}"
	if [ "$c" = ccache ]; then
		with_basedir build "$work/$c/one/src" >/dev/null
	else
		build "$work/$c/one/src" >/dev/null
	fi
	built "$work/$c/one/src" >"$work/$c.sums"
done
want=$(runs_ok "$work/clang/one/src/build/omp_prog" || echo failed)

: >"$work/offcc.jobs"
: >"$work/ccache.jobs"
check="the OpenMP program built by clang-22 prints ${want//$'\n'/; }"
for ((i = 1; i <= RUNS; i++)); do
	line=""
	for c in clang offcc ccache; do
		ck=$work/$c/second/checkout
		checkout "$ck"
		mapfile -t a < <(args_of "$c")
		configure "$ck/src" "${a[@]}"
		case $c in
		clang) time_one "$(t_file clang)" build "$ck/src" ;;
		offcc)
			before=$(offcc_misses)
			time_one "$(t_file offcc)" build "$ck/src"
			echo $(($(offcc_misses) - before)) >>"$work/offcc.jobs"
			;;
		ccache)
			"$CCACHE" -z >/dev/null
			time_one "$(t_file ccache)" with_basedir build "$ck/src"
			ccache_not_hits >>"$work/ccache.jobs"
			ccache_last=$(ccache_outcome)
			;;
		esac
		line+="$c $(tail -1 "$(t_file "$c")" | cut -d' ' -f1)s, "
		# offcc's objects must be checkout 1's; ccache's that are not are
		# reported.
		if [ "$c" = offcc ] && ! cmp -s <(built "$ck/src") "$work/$c.sums"; then
			echo "bench: offcc: checkout 2's objects differ from checkout 1's:" >&2
			diff <(built "$ck/src") "$work/$c.sums" >&2 || true
			exit 1
		fi
		if [ "$c" = ccache ]; then
			ccache_differ=$(comm -23 <(built "$ck/src" | sort) <(sort "$work/$c.sums") | awk '{ printf "%s%s", sep, $2; sep = ", " }')
		fi
		got=$(runs_ok "$ck/src/build/omp_prog" || echo failed)
		[ "$got" = "$want" ] || check+="; **$c's (run $i) prints ${got//$'\n'/; }**"
	done
	echo "bench: run $i/$RUNS: ${line%, }; jobs run: offcc $(tail -1 "$work/offcc.jobs"), ccache $(tail -1 "$work/ccache.jobs")" >&2
done
[[ $check == *"**"* ]] || check+="; so do offcc's and ccache's, every run"

# --- the table ----------------------------------------------------------------
cpus=$(nproc 2>/dev/null || echo "?")
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
rev=$(git -C "$start_dir" rev-parse --short HEAD 2>/dev/null || git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "?")
note=""
[ "$RUNS" -ge 5 ] || note=" (RUNS=$RUNS: a trial)"
# jobs <file>: the jobs run of each run, "0, 0, 0".
jobs() { paste -sd, "$1" | sed 's/,/, /g'; }
cw=$(median 1 "$(t_file clang)") ow=$(median 1 "$(t_file offcc)") xw=$(median 1 "$(t_file ccache)")
echo
echo "Machine: $cpus CPUs, ${cpu_model:-unknown CPU}, $(uname -sr). Tools: $("$CLANG" --version | head -1); $("$CCACHE" --version | head -1); $(cmake --version | head -1); ninja $(ninja --version); offcc $OFFCC (source at $rev)."
echo
echo "Second checkout of testdata/cmake-basedir ($parts), Ninja -j$JOBS, configured (untimed) and built in a fresh copy at another path, with the cache checkout 1's build filled; median of $RUNS runs$note. Jobs run: offcc: cache misses of the build (\`offcc cache stats\`); ccache: calls that were not hits (\`ccache --print-stats\`); each run's."
echo
echo "| compiler | jobs run | wall (s) | CPU user+sys (s) | wall / ccache's |"
echo "|---|---|---:|---:|---:|"
echo "| clang-22, no cache | every compile | $cw | $(cpu_median "$(t_file clang)") | $(ratio "$cw" "$xw") |"
echo "| offcc, toolchain file (default base directory) | $(jobs "$work/offcc.jobs") | $ow | $(cpu_median "$(t_file offcc)") | $(ratio "$ow" "$xw") |"
echo "| ccache + clang-22, \`CCACHE_BASEDIR\` | $(jobs "$work/ccache.jobs") | $xw | $(cpu_median "$(t_file ccache)") | 1.000 |"
echo
same="checkout 2's objects and archives are checkout 1's byte for byte: offcc's every run"
if [ -z "$ccache_differ" ]; then same+=", ccache's too"; else same+="; ccache's (last run) differ in ${ccache_differ//.\//}"; fi
echo "Check: $check; $same."
echo "ccache, last run: $ccache_last."
awk -v o="$ow" -v x="$xw" -v j="$(sort -n "$work/offcc.jobs" | tail -1)" 'BEGIN {
	printf "Goal: offcc runs no job (most in a run: %d) and takes at most 2x ccache'"'"'s wall time (%.2fx).\n", j, (x > 0 ? o / x : 0) }'
