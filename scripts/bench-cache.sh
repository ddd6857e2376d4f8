#!/usr/bin/env bash
# bench-cache.sh: offcc's build cache vs no cache and vs ccache 4, on one
# heavy multi-architecture OpenMP offload TU, on a generated multi-TU
# project built with make -j, and on the CMake example project
# testdata/cmake built with make -j.
#
#   RUNS=5 scripts/bench-cache.sh
#   RUNS=2 KERNELS=20 TU_KERNELS=10 scripts/bench-cache.sh   # a quick try
#
# 1. The TU of bench-multiarch.sh ($KERNELS target regions), plus a header
#    host_only.h that only host code includes (#ifndef __AMDGCN__: the
#    device compiles never open it), compiled with
#    -fopenmp -O2 -c --offload-arch=$ARCHS -nogpulib, in these situations:
#      clang-22 with no cache (4 archs, and with $EXTRA_ARCH added);
#      offcc with its cache off (OFFCC_CACHE=0);
#      offcc cold: an empty cache directory every run;
#      offcc warm: the same command again, the cache filled;
#      offcc +$EXTRA_ARCH: the cache of a 4-arch build (restored every run),
#        then the command with $EXTRA_ARCH added;
#      offcc after a host-only edit: the 4-arch cache restored, host_only.h
#        edited, the 4-arch command;
#      ccache in front of clang-22: cold, warm, +$EXTRA_ARCH, host-only edit;
#      ccache in front of offcc (offcc's cache on, as by default; empty
#        in the cold runs): cold, warm.
#    "Cache off" and "cold" both start from an empty OFFCC_CACHE_DIR, so
#    both are first builds for offcc's plan cache too.
# 2. A generated Makefile project: $TUS C files (main.c and $((TUS - 1))
#    kernel files of $TU_KERNELS target regions, a shared header), OpenMP
#    offload to the host (-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2),
#    linked into a program, make -j$JOBS after make clean (the caches are
#    kept): clang-22, offcc with the cache off, offcc cold and warm, ccache
#    in front of clang-22 cold and warm (the link runs without ccache).
# 3. The CMake example testdata/cmake (a static library of three sources
#    with target regions, C and C++, and a program of two), configured as
#    bench-cmake.sh does but with the Unix Makefiles generator and OpenMP
#    offload to the host (flags -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
#    -O2), each situation in its own build directory, configured once and
#    built once before the timed runs (neither timed): clang-22 and
#    clang++-22 with LLVM 22's llvm-ar; offcc with the cache off, cold and
#    warm, through cmake/offcc-toolchain.cmake (OFFCC_OPENMP_TARGETS);
#    clang-22 with CMAKE_<LANG>_COMPILER_LAUNCHER=ccache, cold and warm.
#    Timed: make -j$JOBS after make clean (compiles, archive, link; the
#    caches are kept).
#
# The programs of sections 2 and 3 must run offloaded
# (OMP_TARGET_OFFLOAD=MANDATORY) and print what clang-22's prints.
#
# The situations alternate within each run; every cache directory
# (OFFCC_CACHE_DIR, CCACHE_DIR) is under the scratch directory, never the
# user's. When offcc has no build cache (offcc cache stats --json fails),
# its cache rows are left out and the rest runs.
#
# Env: OFFCC (default bin/offcc; section 3 runs it and offcc++ beside it
#      through cmake/offcc-toolchain.cmake), CLANG (default
#      /usr/lib/llvm-22/bin/clang), CLANGXX (default: clang++ beside CLANG),
#      LLVM_BIN (LLVM 22's llvm-ar and llvm-ranlib, default
#      /usr/lib/llvm-22/bin), CCACHE (default ccache on PATH), LLVM_LIB
#      (default /usr/lib/llvm-22/lib, to run the projects' programs),
#      KERNELS (target regions in the heavy TU, default 120),
#      ARCHS (default gfx906,gfx908,gfx90a,gfx1030),
#      EXTRA_ARCH (the architecture added, default gfx942),
#      RUNS (runs per situation, default 5; use at least 5 for the README),
#      TUS (C files in the project, default 8), TU_KERNELS (target regions
#      per kernel file, default 40), JOBS (make -j, default nproc).
# Needs make and cmake. Takes about 6 minutes on 2 CPUs with the defaults
# (the CMake project about 1 of them).
# Prints Markdown tables (medians) ready to paste into the README.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
CCACHE=${CCACHE:-$(command -v ccache || true)}
LLVM_LIB=${LLVM_LIB:-/usr/lib/llvm-22/lib}
KERNELS=${KERNELS:-120}
ARCHS=${ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
EXTRA_ARCH=${EXTRA_ARCH:-gfx942}
RUNS=${RUNS:-5}
TUS=${TUS:-8}
TU_KERNELS=${TU_KERNELS:-40}
JOBS=${JOBS:-$(nproc)}

# We cd around: relative paths are the caller's.
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
# clang++ beside clang: .../clang -> .../clang++, clang-22 -> clang++-22.
CLANGXX=${CLANGXX:-${CLANG%clang*}clang++${CLANG##*clang}}
case $CLANGXX in /*) ;; *) CLANGXX=$start_dir/$CLANGXX ;; esac
case $LLVM_BIN in /*) ;; *) LLVM_BIN=$start_dir/$LLVM_BIN ;; esac
for c in "$OFFCC" "$OFFCC++" "$CLANG" "$CLANGXX" "$LLVM_BIN/llvm-ar" "$LLVM_BIN/llvm-ranlib" "$CCACHE" "$(command -v make || true)" "$(command -v cmake || true)"; do
	if [ -z "$c" ] || [ ! -x "$c" ]; then
		echo "bench: ${c:-ccache/make/cmake} not found (run make build / make deps; apt-get install ccache)" >&2
		exit 1
	fi
done
# The toolchain file runs offcc and offcc++ of OFFCC's directory.
[ "${OFFCC##*/}" = offcc ] || { echo "bench: OFFCC=$OFFCC: want a file named offcc (cmake/offcc-toolchain.cmake runs offcc and offcc++ of its directory)" >&2; exit 1; }
for v in RUNS KERNELS TUS TU_KERNELS JOBS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive integer" >&2; exit 1; }
done
[ "$TUS" -ge 2 ] || { echo "bench: TUS=$TUS: want at least 2 (main.c and a kernel file)" >&2; exit 1; }
[ "$RUNS" -ge 5 ] || echo "bench: RUNS=$RUNS: fewer than 5 runs, for trying the script only" >&2

# Nothing from the caller's environment steers the caches or make: every
# cache directory is set per command below, and these defaults keep
# anything else out of ~/.cache too.
for v in "${!OFFCC_@}" "${!CCACHE_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS
for v in "${!CMAKE_@}"; do unset "$v"; done

# shellcheck source=scripts/benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OFFCC_CACHE_DIR="$work/offcc-default" CCACHE_DIR="$work/ccache-default"

# with_env <NAME=VALUE>... -- <cmd...>: runs cmd, a program or a function,
# with the variables exported, in this shell (no env process to time).
with_env() {
	while [ "$1" != -- ]; do
		local -x "$1"
		shift
	done
	shift
	"$@"
}

# fresh <dir>: an empty directory. restore <dir> <from>: dir becomes a copy
# of from.
fresh() { rm -rf "$1" && mkdir -p "$1"; }
restore() { rm -rf "$1" && cp -a "$2" "$1"; }

# ccache_outcome <dir>: the nonzero outcome counters of a ccache directory
# (hits, misses, and why a call was not cached).
ccache_outcome() {
	CCACHE_DIR=$1 "$CCACHE" --print-stats | awk -F'\t' '$2 != 0 && $1 !~ /^(local_storage_|remote_storage_|cache_size|files_in_cache|stats_|cleanups|direct_cache_miss|preprocessed_cache_miss)/ {
		printf "%s%s=%s", sep, $1, $2; sep = ", " } END { if (sep == "") printf "nothing counted" }'
}

# offcc_stats <dir>: offcc cache stats --json of a cache directory, on one
# line.
offcc_stats() { OFFCC_CACHE_DIR=$1 "$OFFCC" cache stats --json 2>&1 | tr -s ' \t\n' ' '; }

# t <name>: a file of time_one lines.
t() { echo "$work/t.$1"; }

# row <label> <name> [<baseline name> <baseline label>]: a table row of the
# medians of t <name>, with the ratios to the baseline's.
row() {
	local w c
	w=$(median 1 "$(t "$2")") c=$(cpu_median "$(t "$2")")
	if [ $# -ge 4 ]; then
		echo "| $1 | $w | $c | $(ratio "$w" "$(median 1 "$(t "$3")")") | $(ratio "$c" "$(cpu_median "$(t "$3")")") | $4 |"
	else
		echo "| $1 | $w | $c | | | |"
	fi
}

# --- is offcc's build cache there? -----------------------------------------
has_cache=1
if ! probe=$(OFFCC_CACHE_DIR="$work/probe" "$OFFCC" cache stats --json 2>&1) || [[ $probe != \{* ]]; then
	has_cache=0
	probe=$(printf '%s' "$probe" | head -3 | tr '\n' ' ')
	echo "bench: \`offcc cache stats --json\` failed ($probe): this offcc has no build cache; leaving out the offcc cache rows" >&2
fi

# --- 1. the heavy TU ---------------------------------------------------------
mkdir "$work/tu"
cd "$work/tu"
{
	gen_target_regions "$KERNELS" scripts/bench-cache.sh
	cat <<'C'
// Host code only: the device compiles (__AMDGCN__) do not see the header.
#ifndef __AMDGCN__
#include "host_only.h"
const char *bench_name(void) { return bench_banner(); }
#endif
C
} >bench.c
cat >host_only.orig <<'C'
// host_only.h: included by bench.c for the host compile only.
#ifndef HOST_ONLY_H
#define HOST_ONLY_H
static inline const char *bench_banner(void) { return "bench v1"; }
#endif
C
sed 's/"bench v1"/"bench v1, edited"/' host_only.orig >host_only.edited
cp -p host_only.orig host_only.h
# edit_header / unedit_header: the host-only edit, and back to the original
# file (its mtime too). Each waits a second, untimed, as between saving in
# an editor and typing make: a header changed just before (or while) a
# compile reads it is one ccache and offcc do not trust (ccache: "include
# file too new"; offcc: "input modified during the compile").
edit_header() { cp host_only.edited host_only.h && sleep 1; }
unedit_header() { cp -p host_only.orig host_only.h && sleep 1; }

args=(-fopenmp -O2 -c "--offload-arch=$ARCHS" -nogpulib bench.c -o out.o)
args5=(-fopenmp -O2 -c "--offload-arch=$ARCHS,$EXTRA_ARCH" -nogpulib bench.c -o out.o)
oc=$work/offcc-dirs cc=$work/ccache-dirs
mkdir -p "$oc" "$cc"

echo "bench: heavy TU: $KERNELS target regions, --offload-arch=$ARCHS (+$EXTRA_ARCH), $RUNS runs (situations alternating)" >&2
# Warm the page cache / tool binaries, then fill the caches the warm rows
# use and keep a copy of the 4-arch state for the +arch and edit rows.
"$CLANG" "${args[@]}"
with_env OFFCC_CACHE=0 OFFCC_CACHE_DIR="$oc/warmup" -- "$OFFCC" "${args[@]}"
if [ "$has_cache" = 1 ]; then
	with_env OFFCC_CACHE_DIR="$oc/warm" -- "$OFFCC" "${args[@]}"
	cp -a "$oc/warm" "$oc/primed"
fi
with_env CCACHE_DIR="$cc/warm" -- "$CCACHE" "$CLANG" "${args[@]}"
cp -a "$cc/warm" "$cc/primed"
# ccache in front of offcc: kept only if it compiles at all.
cco=1
if ! with_env CCACHE_DIR="$cc/offcc-warm" OFFCC_CACHE_DIR="$oc/ccache-warm" -- "$CCACHE" "$OFFCC" "${args[@]}" 2>"$work/cco.err"; then
	cco=0
	echo "bench: ccache $OFFCC failed; leaving out the ccache + offcc rows:" >&2
	cat "$work/cco.err" >&2
fi

for ((i = 1; i <= RUNS; i++)); do
	time_one "$(t clang)" "$CLANG" "${args[@]}"
	time_one "$(t clang5)" "$CLANG" "${args5[@]}"
	fresh "$oc/off"
	time_one "$(t off)" with_env OFFCC_CACHE=0 OFFCC_CACHE_DIR="$oc/off" -- "$OFFCC" "${args[@]}"
	line="clang $(tail -1 "$(t clang)" | cut -d' ' -f1)s, offcc cache off $(tail -1 "$(t off)" | cut -d' ' -f1)s"
	if [ "$has_cache" = 1 ]; then
		fresh "$oc/cold"
		time_one "$(t cold)" with_env OFFCC_CACHE_DIR="$oc/cold" -- "$OFFCC" "${args[@]}"
		time_one "$(t warm)" with_env OFFCC_CACHE_DIR="$oc/warm" -- "$OFFCC" "${args[@]}"
		restore "$oc/arch" "$oc/primed"
		time_one "$(t arch)" with_env OFFCC_CACHE_DIR="$oc/arch" -- "$OFFCC" "${args5[@]}"
		restore "$oc/edit" "$oc/primed"
		edit_header
		time_one "$(t edit)" with_env OFFCC_CACHE_DIR="$oc/edit" -- "$OFFCC" "${args[@]}"
		unedit_header
		line+=", cold $(tail -1 "$(t cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t warm)" | cut -d' ' -f1)s"
	fi
	fresh "$cc/cold"
	time_one "$(t cc_cold)" with_env CCACHE_DIR="$cc/cold" -- "$CCACHE" "$CLANG" "${args[@]}"
	time_one "$(t cc_warm)" with_env CCACHE_DIR="$cc/warm" -- "$CCACHE" "$CLANG" "${args[@]}"
	restore "$cc/arch" "$cc/primed"
	time_one "$(t cc_arch)" with_env CCACHE_DIR="$cc/arch" -- "$CCACHE" "$CLANG" "${args5[@]}"
	restore "$cc/edit" "$cc/primed"
	edit_header
	time_one "$(t cc_edit)" with_env CCACHE_DIR="$cc/edit" -- "$CCACHE" "$CLANG" "${args[@]}"
	unedit_header
	line+=", ccache cold $(tail -1 "$(t cc_cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t cc_warm)" | cut -d' ' -f1)s"
	if [ "$cco" = 1 ]; then
		fresh "$cc/offcc-cold"
		fresh "$oc/ccache-cold"
		time_one "$(t cco_cold)" with_env CCACHE_DIR="$cc/offcc-cold" OFFCC_CACHE_DIR="$oc/ccache-cold" -- "$CCACHE" "$OFFCC" "${args[@]}"
		time_one "$(t cco_warm)" with_env CCACHE_DIR="$cc/offcc-warm" OFFCC_CACHE_DIR="$oc/ccache-warm" -- "$CCACHE" "$OFFCC" "${args[@]}"
	fi
	echo "bench: run $i/$RUNS: $line" >&2
done

# --- 1b. another build directory, another checkout ---------------------------
# The heavy TU as a checkout (src/bench.c, src/host_only.h). Situations:
#   a warm rebuild in a fresh build directory under a new -o, with absolute
#   paths as CMake writes them: offcc with OFFCC_BASE_DIR, ccache in front
#   of clang-22 with CCACHE_BASEDIR, each cache filled by a first build from
#   another build directory (untimed);
#   a second checkout at another path (a fresh copy each run), the relative
#   command from its root, with the cache of a build of the first checkout.
loc=$work/loc
mkdir -p "$loc/ckA/src"
cp "$work/tu/bench.c" "$work/tu/host_only.orig" "$loc/ckA/src/"
mv "$loc/ckA/src/host_only.orig" "$loc/ckA/src/host_only.h"
largs=(-fopenmp -O2 -c "--offload-arch=$ARCHS" -nogpulib)
# abs_build <dir> <out> <cmd...>: the CMake-style compile from dir.
abs_build() { local d=$1 o=$2; shift 2; mkdir -p "$d/$(dirname "$o")" && (cd "$d" && "$@" "${largs[@]}" "$loc/ckA/src/bench.c" -o "$o"); }
# rel_build <checkout> <cmd...>: the relative compile from a checkout's root.
rel_build() { local d=$1; shift; (cd "$d" && "$@" "${largs[@]}" src/bench.c -o bench.o); }
echo "bench: another build directory, another checkout: $RUNS runs" >&2
if [ "$has_cache" = 1 ]; then
	with_env OFFCC_CACHE_DIR="$oc/loc" OFFCC_BASE_DIR="$loc/ckA" -- abs_build "$loc/ckA/build0" CMakeFiles/b.dir/bench.c.o "$OFFCC"
	with_env OFFCC_CACHE_DIR="$oc/loc-ck" -- rel_build "$loc/ckA" "$OFFCC"
	cp "$loc/ckA/bench.o" "$loc/offcc-first.o" # (ccache's build below replaces it)
	cp -a "$oc/loc-ck" "$oc/loc-ck-primed"
fi
with_env CCACHE_DIR="$cc/loc" CCACHE_BASEDIR="$loc/ckA" -- abs_build "$loc/ckA/build0" CMakeFiles/b.dir/bench.c.o "$CCACHE" "$CLANG"
with_env CCACHE_DIR="$cc/loc-ck" -- rel_build "$loc/ckA" "$CCACHE" "$CLANG"
cp -a "$cc/loc-ck" "$cc/loc-ck-primed"
for ((i = 1; i <= RUNS; i++)); do
	line=""
	if [ "$has_cache" = 1 ]; then
		time_one "$(t l_fresh)" with_env OFFCC_CACHE_DIR="$oc/loc" OFFCC_BASE_DIR="$loc/ckA" -- abs_build "$loc/ckA/b-off$i" "CMakeFiles/k.dir/bench-$i.c.o" "$OFFCC"
		restore "$oc/loc-ck2" "$oc/loc-ck-primed"
		restore "$loc/ck-off$i" "$loc/ckA"
		time_one "$(t l_ck2)" with_env OFFCC_CACHE_DIR="$oc/loc-ck2" -- rel_build "$loc/ck-off$i" "$OFFCC"
		cmp -s "$loc/ck-off$i/bench.o" "$loc/offcc-first.o" || { echo "bench: the second checkout's object differs from the first's" >&2; exit 1; }
		line+="offcc fresh dir $(tail -1 "$(t l_fresh)" | cut -d' ' -f1)s, second checkout $(tail -1 "$(t l_ck2)" | cut -d' ' -f1)s, "
	fi
	time_one "$(t l_cc_fresh)" with_env CCACHE_DIR="$cc/loc" CCACHE_BASEDIR="$loc/ckA" -- abs_build "$loc/ckA/b-cc$i" "CMakeFiles/k.dir/bench-$i.c.o" "$CCACHE" "$CLANG"
	restore "$cc/loc-ck2" "$cc/loc-ck-primed"
	restore "$loc/ck-cc$i" "$loc/ckA"
	time_one "$(t l_cc_ck2)" with_env CCACHE_DIR="$cc/loc-ck2" -- rel_build "$loc/ck-cc$i" "$CCACHE" "$CLANG"
	line+="ccache fresh dir $(tail -1 "$(t l_cc_fresh)" | cut -d' ' -f1)s, second checkout $(tail -1 "$(t l_cc_ck2)" | cut -d' ' -f1)s"
	echo "bench: run $i/$RUNS: $line" >&2
done

# --- 2. the multi-TU project ------------------------------------------------
proj=$work/proj
mkdir "$proj"
cd "$proj"
nk=$((TUS - 1))
gen_omp_project . "$TUS" "$TU_KERNELS" scripts/bench-cache.sh
objs=$(omp_project_objs "$TUS")
flags="-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2"
{
	echo "# Generated by scripts/bench-cache.sh: make CC=<compile> LINK=<link>"
	echo "CFLAGS := $flags"
	echo "OBJS := $objs"
	cat <<'MK'
app: $(OBJS)
	$(LINK) $(CFLAGS) $(OBJS) -o $@
%.o: %.c proj.h
	$(CC) $(CFLAGS) -c $< -o $@
clean:
	rm -f $(OBJS) app
MK
} >Makefile

# build <compile> <link>: builds the program (time_one times it);
# clean: make clean, untimed, before each build.
build() { make -s -j"$JOBS" CC="$1" LINK="$2" app; }
clean() { make -s clean >/dev/null; }

echo "bench: project: $TUS files ($nk x $TU_KERNELS target regions), make -j$JOBS, $RUNS runs (situations alternating)" >&2
clean
build "$CLANG" "$CLANG" >/dev/null # warm, untimed
if [ "$has_cache" = 1 ]; then
	clean
	with_env OFFCC_CACHE_DIR="$oc/proj-warm" -- build "$OFFCC" "$OFFCC" >/dev/null
fi
clean
with_env CCACHE_DIR="$cc/proj-warm" -- build "$CCACHE $CLANG" "$CLANG" >/dev/null
for ((i = 1; i <= RUNS; i++)); do
	clean
	time_one "$(t p_clang)" build "$CLANG" "$CLANG"
	cp app app.clang
	clean
	fresh "$oc/proj-off"
	time_one "$(t p_off)" with_env OFFCC_CACHE=0 OFFCC_CACHE_DIR="$oc/proj-off" -- build "$OFFCC" "$OFFCC"
	line="clang $(tail -1 "$(t p_clang)" | cut -d' ' -f1)s, offcc cache off $(tail -1 "$(t p_off)" | cut -d' ' -f1)s"
	if [ "$has_cache" = 1 ]; then
		clean
		fresh "$oc/proj-cold"
		time_one "$(t p_cold)" with_env OFFCC_CACHE_DIR="$oc/proj-cold" -- build "$OFFCC" "$OFFCC"
		clean
		time_one "$(t p_warm)" with_env OFFCC_CACHE_DIR="$oc/proj-warm" -- build "$OFFCC" "$OFFCC"
		cp app app.offcc-warm
		line+=", cold $(tail -1 "$(t p_cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t p_warm)" | cut -d' ' -f1)s"
	fi
	clean
	fresh "$cc/proj-cold"
	time_one "$(t p_cc_cold)" with_env CCACHE_DIR="$cc/proj-cold" -- build "$CCACHE $CLANG" "$CLANG"
	clean
	time_one "$(t p_cc_warm)" with_env CCACHE_DIR="$cc/proj-warm" -- build "$CCACHE $CLANG" "$CLANG"
	cp app app.ccache-warm
	line+=", ccache cold $(tail -1 "$(t p_cc_cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t p_cc_warm)" | cut -d' ' -f1)s"
	echo "bench: run $i/$RUNS: $line" >&2
done

# The programs of the warm builds must print what clang-22's prints.
# runs_ok <program>: its output, run offloaded (a name without a slash is
# the current directory's).
runs_ok() {
	local p=$1
	[[ $p == */* ]] || p=./$p
	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$LLVM_LIB "$p" 2>&1
}
want=$(runs_ok app.clang || echo "failed")
check="the program built by clang-22 prints $want"
for p in app.offcc-warm app.ccache-warm; do
	[ -e "$p" ] || continue
	got=$(runs_ok "$p" || echo "failed")
	if [ "$got" = "$want" ]; then check+="; ${p#app.} prints the same"; else check+="; **${p#app.} prints $got**"; fi
done

# --- 3. the CMake example project -------------------------------------------
# Built in a copy of testdata/cmake; one build directory per situation.
cm=$work/cmake
mkdir -p "$cm"
cp -r "$repo/testdata/cmake" "$cm/src"
cmflags="-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2"
cm_common=(-S "$cm/src" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=$cmflags" "-DCMAKE_CXX_FLAGS=$cmflags")
cm_clang=(-DCMAKE_C_COMPILER="$CLANG" -DCMAKE_CXX_COMPILER="$CLANGXX"
	-DCMAKE_AR="$LLVM_BIN/llvm-ar" -DCMAKE_RANLIB="$LLVM_BIN/llvm-ranlib")
cm_offcc=(-DCMAKE_TOOLCHAIN_FILE="$repo/cmake/offcc-toolchain.cmake"
	-DOFFCC_BIN_DIR="$(dirname "$OFFCC")" -DOFFCC_OPENMP_TARGETS=x86_64-pc-linux-gnu)
cm_ccache=("${cm_clang[@]}" -DCMAKE_C_COMPILER_LAUNCHER="$CCACHE" -DCMAKE_CXX_COMPILER_LAUNCHER="$CCACHE")

# cm_configure <dir> <cmake args...>: configures a build directory of the
# copy (with the scratch directory's default caches; untimed).
cm_configure() {
	local d=$cm/$1
	shift
	cmake "${cm_common[@]}" -B "$d" "$@" >"$d.log" 2>&1 || {
		echo "bench: cmake configure of $d failed:" >&2
		cat "$d.log" >&2
		exit 1
	}
}
# cm_build <dir>: builds everything (time_one times it); cm_clean <dir>:
# make clean, untimed, before each build.
cm_build() { make -s -C "$cm/$1" -j"$JOBS"; }
cm_clean() { make -s -C "$cm/$1" clean >/dev/null; }

echo "bench: CMake project testdata/cmake (Unix Makefiles), make -j$JOBS, $RUNS runs (situations alternating)" >&2
cm_configure clang "${cm_clang[@]}"
cm_configure off "${cm_offcc[@]}"
cm_configure cc-cold "${cm_ccache[@]}"
cm_configure cc-warm "${cm_ccache[@]}"
if [ "$has_cache" = 1 ]; then
	cm_configure cold "${cm_offcc[@]}"
	cm_configure warm "${cm_offcc[@]}"
fi
# A first build in every directory, untimed: it warms the page cache, fills
# the warm caches, and leaves each directory as a rebuild finds it.
cm_build clang >/dev/null
with_env OFFCC_CACHE=0 OFFCC_CACHE_DIR="$oc/cmake-off" -- cm_build off >/dev/null
with_env CCACHE_DIR="$cc/cmake-cold" -- cm_build cc-cold >/dev/null
with_env CCACHE_DIR="$cc/cmake-warm" -- cm_build cc-warm >/dev/null
if [ "$has_cache" = 1 ]; then
	with_env OFFCC_CACHE_DIR="$oc/cmake-cold" -- cm_build cold >/dev/null
	with_env OFFCC_CACHE_DIR="$oc/cmake-warm" -- cm_build warm >/dev/null
fi
for ((i = 1; i <= RUNS; i++)); do
	cm_clean clang
	time_one "$(t c_clang)" cm_build clang
	cm_clean off
	fresh "$oc/cmake-off"
	time_one "$(t c_off)" with_env OFFCC_CACHE=0 OFFCC_CACHE_DIR="$oc/cmake-off" -- cm_build off
	line="clang $(tail -1 "$(t c_clang)" | cut -d' ' -f1)s, offcc cache off $(tail -1 "$(t c_off)" | cut -d' ' -f1)s"
	if [ "$has_cache" = 1 ]; then
		cm_clean cold
		fresh "$oc/cmake-cold"
		time_one "$(t c_cold)" with_env OFFCC_CACHE_DIR="$oc/cmake-cold" -- cm_build cold
		cm_clean warm
		time_one "$(t c_warm)" with_env OFFCC_CACHE_DIR="$oc/cmake-warm" -- cm_build warm
		line+=", cold $(tail -1 "$(t c_cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t c_warm)" | cut -d' ' -f1)s"
	fi
	cm_clean cc-cold
	fresh "$cc/cmake-cold"
	time_one "$(t c_cc_cold)" with_env CCACHE_DIR="$cc/cmake-cold" -- cm_build cc-cold
	cm_clean cc-warm
	time_one "$(t c_cc_warm)" with_env CCACHE_DIR="$cc/cmake-warm" -- cm_build cc-warm
	line+=", ccache cold $(tail -1 "$(t c_cc_cold)" | cut -d' ' -f1)s, warm $(tail -1 "$(t c_cc_warm)" | cut -d' ' -f1)s"
	echo "bench: run $i/$RUNS: $line" >&2
done

# Every directory's program (of its last build) must print what clang-22's
# prints.
cm_want=$(runs_ok "$cm/clang/offcc_example" || echo "failed")
cm_check="the program built by clang-22 prints ${cm_want//$'\n'/; }"
[[ $cm_want != *failed ]] || cm_check="**${cm_check}**"
for d in off cold warm cc-cold cc-warm; do
	[ -e "$cm/$d/offcc_example" ] || continue
	got=$(runs_ok "$cm/$d/offcc_example" || echo "failed")
	if [ "$got" = "$cm_want" ]; then cm_check+="; $d prints the same"; else cm_check+="; **$d prints ${got//$'\n'/; }**"; fi
done

# --- 4. the tables ----------------------------------------------------------
cpus=$(nproc 2>/dev/null || echo "?")
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
rev=$(git -C "$start_dir" rev-parse --short HEAD 2>/dev/null || git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo "?")
note=""
[ "$RUNS" -ge 5 ] || note=" (RUNS=$RUNS: a trial, not for the README)"
echo
echo "Machine: $cpus CPUs, ${cpu_model:-unknown CPU}, $(uname -sr). Tools: $("$CLANG" --version | head -1); $("$CCACHE" --version | head -1); $(make --version | head -1); offcc $OFFCC (source at $rev)."
echo
echo "Heavy TU: \`-fopenmp -O2 -c --offload-arch=$ARCHS -nogpulib\`, $KERNELS target regions, a header only the host code includes; median of $RUNS runs$note. Ratios: of wall and of CPU time to the named row's."
echo
echo "| compiler, situation | wall (s) | CPU user+sys (s) | wall ratio | CPU ratio | ratio to |"
echo "|---|---:|---:|---:|---:|---|"
row "clang-22, no cache" clang
row "clang-22, no cache, +$EXTRA_ARCH" clang5 clang "clang-22"
row "offcc, cache off (\`OFFCC_CACHE=0\`)" off clang "clang-22"
if [ "$has_cache" = 1 ]; then
	row "offcc, cold (empty cache)" cold off "offcc, cache off"
	row "offcc, warm (same command again)" warm clang "clang-22"
	row "offcc, +$EXTRA_ARCH after a warm 4-arch build" arch clang5 "clang-22, +$EXTRA_ARCH"
	row "offcc, host-only header edit after a warm build" edit clang "clang-22"
fi
row "ccache + clang-22, cold" cc_cold clang "clang-22"
row "ccache + clang-22, warm" cc_warm clang "clang-22"
row "ccache + clang-22, +$EXTRA_ARCH after a warm 4-arch build" cc_arch clang5 "clang-22, +$EXTRA_ARCH"
row "ccache + clang-22, host-only header edit after a warm build" cc_edit clang "clang-22"
if [ "$cco" = 1 ]; then
	row "ccache + offcc, cold" cco_cold off "offcc, cache off"
	row "ccache + offcc, warm" cco_warm off "offcc, cache off"
fi
echo
if [ "$has_cache" = 1 ]; then
	awk -v c="$(median 1 "$(t cold)")" -v o="$(median 1 "$(t off)")" -v cc="$(cpu_median "$(t cold)")" -v oc="$(cpu_median "$(t off)")" -v w="$(median 1 "$(t warm)")" 'BEGIN {
		printf "offcc cold vs cache off: %+.1f%% wall, %+.1f%% CPU (goal: < 3%%). offcc warm: %.0f ms wall (goal: < 20 ms).\n", (c / o - 1) * 100, (cc / oc - 1) * 100, w * 1000 }'
else
	echo "offcc's build cache rows are left out: \`offcc cache stats --json\` failed ($probe)."
fi
echo
echo "What the caches did (counters of each situation's cache directory after the last run; the warm directories hold their priming build and every warm run):"
echo
echo "- ccache + clang-22: cold: $(ccache_outcome "$cc/cold"); warm: $(ccache_outcome "$cc/warm"); +$EXTRA_ARCH: $(ccache_outcome "$cc/arch"); host-only edit: $(ccache_outcome "$cc/edit")"
if [ "$cco" = 1 ]; then
	echo "- ccache + offcc: cold: $(ccache_outcome "$cc/offcc-cold"); warm: $(ccache_outcome "$cc/offcc-warm")"
else
	echo "- ccache + offcc: failed: $(head -3 "$work/cco.err" | tr '\n' ' ')"
fi
if [ "$has_cache" = 1 ]; then
	echo "- offcc cold: \`$(offcc_stats "$oc/cold")\`"
	echo "- offcc warm: \`$(offcc_stats "$oc/warm")\`"
	echo "- offcc +$EXTRA_ARCH: \`$(offcc_stats "$oc/arch")\`"
	echo "- offcc host-only edit: \`$(offcc_stats "$oc/edit")\`"
	[ "$cco" = 1 ] && echo "- offcc under ccache, warm: \`$(offcc_stats "$oc/ccache-warm")\`"
fi
echo
echo "Another build directory and another checkout, the heavy TU (median of $RUNS runs$note): a warm rebuild in a fresh build directory under a new \`-o\`, with absolute paths as CMake writes them (offcc: \`OFFCC_BASE_DIR\`, ccache: \`CCACHE_BASEDIR\`, each with the cache of a build from another directory); a second checkout at another path, the relative command from its root, with the cache of the first checkout's build."
echo
echo "| compiler, situation | wall (s) | CPU user+sys (s) | wall ratio | CPU ratio | ratio to |"
echo "|---|---:|---:|---:|---:|---|"
if [ "$has_cache" = 1 ]; then
	row "offcc, fresh build directory, new \`-o\`" l_fresh clang "clang-22"
	row "offcc, second checkout" l_ck2 clang "clang-22"
fi
row "ccache + clang-22, fresh build directory, new \`-o\`" l_cc_fresh clang "clang-22"
row "ccache + clang-22, second checkout" l_cc_ck2 clang "clang-22"
if [ "$has_cache" = 1 ]; then
	echo
	echo "- offcc fresh build directories: \`$(offcc_stats "$oc/loc")\`"
	echo "- offcc second checkout (last run): \`$(offcc_stats "$oc/loc-ck2")\`"
fi
echo "- ccache fresh build directories: $(ccache_outcome "$cc/loc"); second checkout (last run): $(ccache_outcome "$cc/loc-ck2")"
echo
echo "Project: $TUS C files ($nk with $TU_KERNELS target regions each, main.c), a shared header, \`$flags\`, linked into a program; \`make -j$JOBS\` after \`make clean\` (caches kept); median of $RUNS runs$note."
echo
echo "| compiler, situation | wall (s) | CPU user+sys (s) | wall ratio | CPU ratio | ratio to |"
echo "|---|---:|---:|---:|---:|---|"
row "clang-22, no cache" p_clang
row "offcc, cache off (\`OFFCC_CACHE=0\`)" p_off p_clang "clang-22"
if [ "$has_cache" = 1 ]; then
	row "offcc, cold (empty cache)" p_cold p_off "offcc, cache off"
	row "offcc, warm" p_warm p_clang "clang-22"
fi
row "ccache + clang-22 (CC only; the link without), cold" p_cc_cold p_clang "clang-22"
row "ccache + clang-22 (CC only; the link without), warm" p_cc_warm p_clang "clang-22"
echo
echo "Check: $check."
echo "ccache + clang-22 project: cold: $(ccache_outcome "$cc/proj-cold"); warm: $(ccache_outcome "$cc/proj-warm")."
[ "$has_cache" = 1 ] && echo "offcc project, warm: \`$(offcc_stats "$oc/proj-warm")\`"
echo
echo "CMake project testdata/cmake (a static library of three sources with target regions, C and C++, and a program of two), Unix Makefiles generator, \`$cmflags\` (offcc: through cmake/offcc-toolchain.cmake); \`make -j$JOBS\` after \`make clean\` (caches kept), each situation in its own build directory, configured once (not timed); median of $RUNS runs$note."
echo
echo "| compiler, situation | wall (s) | CPU user+sys (s) | wall ratio | CPU ratio | ratio to |"
echo "|---|---:|---:|---:|---:|---|"
row "clang-22, no cache" c_clang
row "offcc, cache off (\`OFFCC_CACHE=0\`)" c_off c_clang "clang-22"
if [ "$has_cache" = 1 ]; then
	row "offcc, cold (empty cache)" c_cold c_off "offcc, cache off"
	row "offcc, warm" c_warm c_clang "clang-22"
fi
row "ccache + clang-22 (compiler launcher), cold" c_cc_cold c_clang "clang-22"
row "ccache + clang-22 (compiler launcher), warm" c_cc_warm c_clang "clang-22"
echo
echo "Check: $cm_check."
echo "ccache + clang-22 CMake project: cold: $(ccache_outcome "$cc/cmake-cold"); warm: $(ccache_outcome "$cc/cmake-warm")."
[ "$has_cache" = 1 ] && echo "offcc CMake project, warm: \`$(offcc_stats "$oc/cmake-warm")\`"
exit 0
