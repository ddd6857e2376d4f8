#!/usr/bin/env bash
# bench-hip-rocm.sh: offcc++ vs clang++-22 building a real HIP project:
# testdata/hip-rocm (six .hip files, four with kernels, two host code only;
# ROCm's <hip/hip_runtime.h>, its device libraries and libamdhip64, as
# Debian 12's ROCm 5.2 installs them: make deps) with its Makefile,
# make -j$JOBS, for gfx90a and gfx1030.
#
#   RUNS=5 scripts/bench-hip-rocm.sh
#   MODE='--offload-new-driver -fgpu-rdc' RUNS=3 scripts/bench-hip-rocm.sh
#
# Situations, alternating within each run, each timed as make -j$JOBS
# after make clean (the objects and the program removed):
#   clang++-22;
#   offcc++ cold: its cache directory emptied before every run;
#   offcc++ warm: the cache filled by an untimed build first, kept.
# Each has a copy of the project of its own. After the runs the objects
# and programs of clang's and offcc's builds must be the same bytes (the
# compile unit IDs hash the same relative names), or the script fails.
#
# Env: OFFCC (default bin/offcc; offcc++ beside it is run), CLANG (default
#      /usr/lib/llvm-22/bin/clang; clang++ beside it is run), RUNS (runs per
#      situation, default 5), JOBS (make -j, default 2), MODE (added to the
#      Makefile's HIPFLAGS, which go to the compiles and the link, e.g.
#      "-fgpu-rdc" or "--offload-new-driver"; default none).
# Prints a Markdown table (medians).
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

. scripts/benchlib.sh
OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
OFFCCXX=$OFFCC++
CLANGXX=${CLANG%clang*}clang++${CLANG##*clang}
RUNS=${RUNS:-5}
JOBS=${JOBS:-2}
MODE=${MODE:-}

for c in "$OFFCCXX" "$CLANGXX" "$(command -v make || true)"; do
	[ -n "$c" ] && [ -x "$c" ] || { echo "bench: ${c:-make} not found (run make build / make deps)" >&2; exit 1; }
done
for f in /usr/include/hip/hip_runtime.h /usr/lib/x86_64-linux-gnu/libamdhip64.so /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc; do
	[ -e "$f" ] || { echo "bench: $f not found: ROCm HIP is not installed (libamdhip64-dev, rocm-device-libs: make deps)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
for s in clang cold warm; do
	cp -r "$repo/testdata/hip-rocm" "$work/$s"
done
hipflags="-O2${MODE:+ $MODE}"

# build <situation> <compiler>: make clean (untimed), then make, timed
# into $work/<situation>.t.
build() {
	make -s -C "$work/$1" clean >/dev/null
	[ "$1" != cold ] || rm -rf "$work/cache-cold"
	time_one "$work/$1.t" env OFFCC_CACHE_DIR="$work/cache-$1" \
		make -s -C "$work/$1" -j"$JOBS" CXX="$2" HIPFLAGS="$hipflags"
}

echo "bench: testdata/hip-rocm, HIPFLAGS='$hipflags', make -j$JOBS, $RUNS runs each (alternating)" >&2
: >"$work/clang.t"
: >"$work/cold.t"
: >"$work/warm.t"
# Untimed: warm the system's caches, and fill offcc's warm cache.
build clang "$CLANGXX"
build warm "$OFFCCXX"
: >"$work/clang.t"
: >"$work/warm.t"
for ((i = 1; i <= RUNS; i++)); do
	build clang "$CLANGXX"
	build cold "$OFFCCXX"
	build warm "$OFFCCXX"
	echo "bench: run $i/$RUNS: clang $(tail -1 "$work/clang.t" | cut -d' ' -f1)s, offcc cold $(tail -1 "$work/cold.t" | cut -d' ' -f1)s, warm $(tail -1 "$work/warm.t" | cut -d' ' -f1)s" >&2
done

for s in cold warm; do
	for f in main.o vec_add.o reduce.o waves.o options.o report.o hip-rocm; do
		cmp -s "$work/clang/$f" "$work/$s/$f" || {
			echo "bench: offcc's $f ($s build) differs from clang's" >&2
			exit 1
		}
	done
done

cw=$(median 1 "$work/clang.t") cc=$(cpu_median "$work/clang.t")
echo
echo "testdata/hip-rocm (6 HIP files, ROCm 5.2 headers and device libraries, --offload-arch=gfx90a,gfx1030, HIPFLAGS='$hipflags'), make -j$JOBS after make clean; median of $RUNS runs, $(nproc) CPUs."
echo
echo "| build | wall (s) | CPU user+sys (s) | wall / clang | CPU / clang |"
echo "|---|---:|---:|---:|---:|"
echo "| clang++-22 | $cw | $cc | 1.000 | 1.000 |"
for s in cold warm; do
	w=$(median 1 "$work/$s.t") c=$(cpu_median "$work/$s.t")
	label="offcc++, cold cache (emptied every run)"
	[ $s = cold ] || label="offcc++, warm cache (objects removed)"
	echo "| $label | $w | $c | $(ratio "$w" "$cw") | $(ratio "$c" "$cc") |"
done
