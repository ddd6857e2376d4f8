#!/usr/bin/env bash
# bench-formats.sh: offcc's container tools vs LLVM 22's on a large image:
# pack and extract with offcc offload-binary vs llvm-offload-binary, bundle
# and unbundle with offcc offload-bundler vs clang-offload-bundler. Every
# output is compared byte for byte with LLVM's.
#
#   SIZE_MB=1024 RUNS=5 scripts/bench-formats.sh
#
# Env: OFFCC (default bin/offcc), LLVM_BIN (default /usr/lib/llvm-22/bin),
#      SIZE_MB (image size, default 1024), RUNS (runs per tool, default 5).
# Runs alternate between the tools; prints a Markdown table of medians of
# wall time and peak RSS (GNU time's %M), and peak RSS / image size.
set -euo pipefail
cd "$(dirname "$0")/.."

OFFCC=${OFFCC:-$PWD/bin/offcc}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
SIZE_MB=${SIZE_MB:-1024}
RUNS=${RUNS:-5}
TIME=/usr/bin/time

for c in "$OFFCC" "$LLVM_BIN/llvm-offload-binary" "$LLVM_BIN/clang-offload-bundler" "$TIME"; do
	[ -x "$c" ] || { echo "bench: $c not found (make build / make deps; GNU time is package 'time')" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench-formats.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

head -c $((SIZE_MB * 1024 * 1024)) /dev/urandom >dev.o
printf 'host object stand-in\n' >host.bc
size=$(stat -c %s dev.o)
img=file=dev.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip
sel=triple=amdgcn-amd-amdhsa,arch=gfx90a
targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a

# op NAME TOOL ARGS...: one timed run, "wall_s rss_kb" appended to NAME.times
op() {
	local name=$1
	shift
	"$TIME" -f '%e %M' -o "$name.t" "$@" >/dev/null 2>"$name.err" || { cat "$name.err" >&2; exit 1; }
	cat "$name.t" >>"$name.times"
}

for ((r = 0; r < RUNS; r++)); do
	op llvm-pack "$LLVM_BIN/llvm-offload-binary" -o l.bin --image=$img
	op offcc-pack "$OFFCC" offload-binary -o o.bin --image=$img
	op llvm-extract "$LLVM_BIN/llvm-offload-binary" l.bin --image=$sel,file=lx.o
	op offcc-extract "$OFFCC" offload-binary o.bin --image=$sel,file=ox.o
	op llvm-bundle "$LLVM_BIN/clang-offload-bundler" -type=bc -targets=$targets -input=host.bc -input=dev.o -output=l.bundle
	op offcc-bundle "$OFFCC" offload-bundler -type=bc -targets=$targets -input=host.bc -input=dev.o -output=o.bundle
	op llvm-unbundle "$LLVM_BIN/clang-offload-bundler" -type=bc -targets=$targets -output=lh.bc -output=ld.o -input=l.bundle -unbundle
	op offcc-unbundle "$OFFCC" offload-bundler -type=bc -targets=$targets -output=oh.bc -output=od.o -input=o.bundle -unbundle
	cmp l.bin o.bin && cmp lx.o ox.o && cmp lx.o dev.o && cmp l.bundle o.bundle && cmp ld.o od.o && cmp ld.o dev.o ||
		{ echo "bench: outputs differ" >&2; exit 1; }
	rm -f l.bin o.bin lx.o ox.o l.bundle o.bundle lh.bc ld.o oh.bc od.o
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$2" '{ print $c }' "$1.times" | median; }

echo "Image: $SIZE_MB MiB of random bytes, $RUNS runs per tool (alternating), medians."
echo
echo "| operation | LLVM 22 tool | offcc | time ratio | LLVM peak RSS | offcc peak RSS | offcc RSS / image |"
echo "|---|---|---|---|---|---|---|"
for o in pack extract bundle unbundle; do
	lt=$(col llvm-$o 1) ot=$(col offcc-$o 1)
	lm=$(col llvm-$o 2) om=$(col offcc-$o 2)
	awk -v o="$o" -v lt="$lt" -v ot="$ot" -v lm="$lm" -v om="$om" -v size="$size" 'BEGIN {
		printf "| %s | %.2f s | %.2f s | %.3f | %.0f MiB | %.0f MiB | %.2fx |\n", o, lt, ot, ot / lt, lm / 1024, om / 1024, om * 1024 / size
	}'
done
