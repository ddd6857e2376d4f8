#!/usr/bin/env bash
# bench-cmake.sh: a real CMake build with offcc vs clang-22, and what
# offcc's compile-commands database costs per compile.
#
#   RUNS=5 CC_RUNS=20 scripts/bench-cmake.sh
#
# Builds testdata/cmake's static library (target regions in C and C++) with
# Ninja (-j $JOBS), clean each time, configured once
# with clang-22 and LLVM 22's binutils and once through
# cmake/offcc-toolchain.cmake, with the same flags:
# -fopenmp --offload-arch=$ARCHS -nogpulib -O2. The builds alternate.
# Then it times one offload compile and one plain compile with and without
# OFFCC_COMPILE_COMMANDS.
#
# Env: OFFCC (default bin/offcc; its directory needs offcc++ and the llvm-*
#      links of make build), LLVM_BIN (default /usr/lib/llvm-22/bin),
#      ARCHS (default gfx906,gfx908,gfx90a,gfx1030), JOBS (default nproc),
#      RUNS (builds per compiler, default 5), CC_RUNS (compiles per case,
#      default 20).
# Prints Markdown tables (medians) ready to paste into the README.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

OFFCC=${OFFCC:-$PWD/bin/offcc}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
ARCHS=${ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
JOBS=${JOBS:-$(nproc)}
RUNS=${RUNS:-5}
CC_RUNS=${CC_RUNS:-20}

for c in "$OFFCC" "$LLVM_BIN/clang" "$(command -v cmake || true)" "$(command -v ninja || true)"; do
	[ -n "$c" ] && [ -x "$c" ] || { echo "bench: ${c:-cmake/ninja} not found (run make build / make deps)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r testdata/cmake "$work/src"
export OFFCC_CACHE_DIR="$work/cache"

flags="-fopenmp --offload-arch=$ARCHS -nogpulib -O2"
common=(-S "$work/src" -G Ninja -DCMAKE_BUILD_TYPE= "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags")
cmake "${common[@]}" -B "$work/clang" \
	-DCMAKE_C_COMPILER="$LLVM_BIN/clang" -DCMAKE_CXX_COMPILER="$LLVM_BIN/clang++" \
	-DCMAKE_AR="$LLVM_BIN/llvm-ar" -DCMAKE_RANLIB="$LLVM_BIN/llvm-ranlib" >/dev/null
cmake "${common[@]}" -B "$work/offcc" \
	-DCMAKE_TOOLCHAIN_FILE="$repo/cmake/offcc-toolchain.cmake" \
	-DOFFCC_BIN_DIR="$(dirname "$OFFCC")" >/dev/null 2>&1

. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

# The static library with the device code: its three sources (C and C++)
# and the archive. The program's link is left out: linking gfx* images
# needs the AMD device runtime, which Debian's LLVM 22 does not ship.
build() { # build <dir>: a clean build
	cmake --build "$1" --target clean >/dev/null
	cmake --build "$1" -j "$JOBS" --target kernels
}

echo "bench: testdata/cmake, --offload-arch=$ARCHS, ninja -j$JOBS, $RUNS clean builds each (alternating)" >&2
: >"$work/clang.t"
: >"$work/offcc.t"
build "$work/clang" >/dev/null # warm caches, untimed
build "$work/offcc" >/dev/null
for ((i = 1; i <= RUNS; i++)); do
	time_one "$work/clang.t" build "$work/clang"
	time_one "$work/offcc.t" build "$work/offcc"
	echo "bench: run $i/$RUNS: clang $(tail -1 "$work/clang.t" | cut -d' ' -f1)s, offcc $(tail -1 "$work/offcc.t" | cut -d' ' -f1)s" >&2
done

# Compile-commands cost: the same compile with and without the database.
cd "$work/src/src"
db="$work/compile_commands.json"
offload=(-fopenmp "--offload-arch=$ARCHS" -nogpulib -O2 -I../include -c saxpy.c -o "$work/saxpy.o")
plain=(-O2 -I../include -c saxpy.c -o "$work/plain.o")
for f in off.t on.t poff.t pon.t; do : >"$work/$f"; done
echo "bench: one compile with and without OFFCC_COMPILE_COMMANDS, $CC_RUNS runs each (alternating)" >&2
for ((i = 1; i <= CC_RUNS; i++)); do
	time_one "$work/off.t" "$OFFCC" "${offload[@]}"
	time_one "$work/on.t" env OFFCC_COMPILE_COMMANDS="$db" "$OFFCC" "${offload[@]}"
	time_one "$work/poff.t" "$OFFCC" "${plain[@]}"
	time_one "$work/pon.t" env OFFCC_COMPILE_COMMANDS="$db" "$OFFCC" "${plain[@]}"
done
entries=$(grep -c '"directory"' "$db")

cw=$(median 1 "$work/clang.t") ow=$(median 1 "$work/offcc.t")
cc=$(cpu_median "$work/clang.t") oc=$(cpu_median "$work/offcc.t")
echo
echo "CMake build of the library kernels of testdata/cmake (3 sources, C and C++, and the archive), Ninja -j$JOBS, \`$flags\`; median of $RUNS clean builds, $(nproc) CPUs."
echo
echo "| compilers | wall (s) | CPU user+sys (s) |"
echo "|---|---:|---:|"
echo "| clang-22, clang++-22 | $cw | $cc |"
echo "| offcc, offcc++ (toolchain file) | $ow | $oc |"
echo "| ratio offcc / clang | $(ratio "$ow" "$cw") | $(ratio "$oc" "$cc") |"
echo
echo "One compile of src/saxpy.c, with and without \`OFFCC_COMPILE_COMMANDS\`; median of $CC_RUNS runs ($entries entries in the database at the end)."
echo
echo "| compile | without (ms) | with (ms) | difference (ms) |"
echo "|---|---:|---:|---:|"
awk -v a="$(median 1 "$work/off.t")" -v b="$(median 1 "$work/on.t")" -v l="offload, --offload-arch=$ARCHS" \
	'BEGIN { printf "| %s | %.1f | %.1f | %+.1f |\n", l, a * 1000, b * 1000, (b - a) * 1000 }'
awk -v a="$(median 1 "$work/poff.t")" -v b="$(median 1 "$work/pon.t")" -v l="plain -O2 -c" \
	'BEGIN { printf "| %s | %.1f | %.1f | %+.1f |\n", l, a * 1000, b * 1000, (b - a) * 1000 }'
