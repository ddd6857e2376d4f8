#!/usr/bin/env bash
# bench-compress.sh: what the compressed cache saves on disk and costs per
# build: offcc++ with OFFCC_CACHE_COMPRESSION_LEVEL=off against the
# default level (and any others in LEVELS), building testdata/hip-rocm
# (make -j$JOBS, gfx90a and gfx1030) and, when CUDA's ptxas is there,
# testdata/cuda/kernels.cu for sm_70 and sm_80.
#
#   RUNS=3 scripts/bench-compress.sh
#   LEVELS="off 0 3 19" scripts/bench-compress.sh
#
# Per level, alternating within each run, in one copy of the project (so
# that every build writes the same bytes: outputs name their sources):
#   cold: the cache emptied, then make after make clean (every job a miss
#         and a put);
#   warm: the cache kept, make after make clean (every job a hit).
# The times are of the whole make: wall, and CPU user+sys of it and its
# children (medians). The sizes: after a cold build, every result blob
# (a job's output) classified by its bytes (host object, AMD GPU code
# object, CUDA cubin or fat binary, LLVM bitcode, offload bundle or binary,
# text such as PTX) with its bytes and what it takes on disk at each level;
# then the entry kinds as offcc cache stats --json gives them.
#
# Env: OFFCC (default bin/offcc; offcc++ beside it is run), RUNS (default
#      3), JOBS (make -j, default 2), LEVELS (default "off 0": off, and the
#      default level), CUDA (0 skips the CUDA compile).
# The offcc must read OFFCC_CACHE_COMPRESSION_LEVEL: the script checks
# that the level off stores no compressed blob.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

. scripts/benchlib.sh
OFFCC=${OFFCC:-$PWD/bin/offcc}
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
OFFCCXX=$OFFCC++
RUNS=${RUNS:-3}
JOBS=${JOBS:-2}
LEVELS=${LEVELS:-off 0}
CUDA=${CUDA:-1}
PYTHON=${PYTHON:-python3}

for c in "$OFFCCXX" "$(command -v make || true)" "$(command -v "$PYTHON" || true)"; do
	[ -n "$c" ] && [ -x "$c" ] || { echo "bench: ${c:-make or python3} not found (run make build / make deps)" >&2; exit 1; }
done
command -v zstd >/dev/null || { echo "bench: zstd not found (apt-get install zstd): it reads compressed indexes" >&2; exit 1; }
for f in /usr/include/hip/hip_runtime.h /usr/lib/x86_64-linux-gnu/libamdhip64.so; do
	[ -e "$f" ] || { echo "bench: $f not found: ROCm HIP is not installed (make deps)" >&2; exit 1; }
done
if [ "$CUDA" != 0 ] && ! command -v ptxas >/dev/null; then
	echo "bench: no ptxas: the CUDA compile is left out" >&2
	CUDA=0
fi

# Nothing from the caller's environment steers offcc, or hands make a
# jobserver.
for v in "${!OFFCC_@}"; do [ "$v" = OFFCC_LLVM_DIR ] || unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL
export OFFCC_PROGRESS=0
work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name <level>: a level as a file name.
name() { echo "l$1" | tr -c 'a-z0-9\n' _; }

proj=$work/proj
cp -r "$repo/testdata/hip-rocm" "$proj"
mkdir -p "$proj/cuda"
cp "$repo"/testdata/cuda/*.cu "$repo"/testdata/cuda/*.h "$proj/cuda/"
outputs="main.o vec_add.o reduce.o waves.o options.o report.o hip-rocm$([ "$CUDA" = 0 ] || echo ' cuda/kernels.o')"

# project <dir>: make after make clean (and the CUDA compile).
project() {
	make -s -C "$1" -j"$JOBS" CXX="$OFFCCXX" HIPFLAGS=-O2
	if [ "$CUDA" != 0 ]; then
		(cd "$1/cuda" && "$OFFCCXX" -x cuda --offload-arch=sm_70,sm_80 -nocudainc -nocudalib -O2 \
			--cuda-feature=+ptx78 -Xclang -target-sdk-version=12.0 -I. -c kernels.cu -o kernels.o)
	fi
}

# build <level> <cold|warm>: one timed build into $work/<name>-<s>.t; its
# outputs are copied to $work/out-<name>-<s>.
build() {
	local n f
	n=$(name "$1")
	make -s -C "$proj" clean >/dev/null
	rm -f "$proj/cuda/kernels.o"
	[ "$2" != cold ] || rm -rf "$work/cache-$n-cold"
	time_one "$work/$n-$2.t" env OFFCC_CACHE_DIR="$work/cache-$n-$2" OFFCC_CACHE_COMPRESSION_LEVEL="$1" \
		bash -c "$(declare -f project); OFFCCXX='$OFFCCXX' JOBS='$JOBS' CUDA='$CUDA' project '$proj'"
	mkdir -p "$work/out-$n-$2/cuda"
	for f in $outputs; do
		cp "$proj/$f" "$work/out-$n-$2/$f"
	done
}

echo "bench: testdata/hip-rocm$([ "$CUDA" = 0 ] || echo ' and testdata/cuda/kernels.cu'), make -j$JOBS, levels: $LEVELS; $RUNS runs each (alternating)" >&2
# Untimed: warm the system's caches, and fill each warm cache.
for l in $LEVELS; do
	build "$l" warm
	: >"$work/$(name "$l")-warm.t"
	: >"$work/$(name "$l")-cold.t"
done
for ((i = 1; i <= RUNS; i++)); do
	line=""
	for l in $LEVELS; do
		n=$(name "$l")
		build "$l" cold
		build "$l" warm
		line+=" $l: cold $(tail -1 "$work/$n-cold.t" | cut -d' ' -f1)s, warm $(tail -1 "$work/$n-warm.t" | cut -d' ' -f1)s;"
	done
	echo "bench: run $i/$RUNS:$line" >&2
done

# The objects are the same whatever the level.
first=$(name "${LEVELS%% *}")
for l in $LEVELS; do
	n=$(name "$l")
	for s in cold warm; do
		for f in $outputs; do
			cmp -s "$work/out-$first-cold/$f" "$work/out-$n-$s/$f" || {
				echo "bench: $f of the $l $s build differs from the ${LEVELS%% *} cold build's" >&2
				exit 1
			}
		done
	done
done

echo
echo "testdata/hip-rocm (6 HIP files, --offload-arch=gfx90a,gfx1030, -O2)$([ "$CUDA" = 0 ] || echo ' and testdata/cuda/kernels.cu (sm_70,sm_80, -O2 -c)'), make -j$JOBS after make clean; median of $RUNS runs, $(nproc) CPUs. Cold: the cache emptied first (every job a miss, stored); warm: every job a hit."
echo
echo "| OFFCC_CACHE_COMPRESSION_LEVEL | cold wall (s) | cold CPU (s) | warm wall (s) | warm CPU (s) |"
echo "|---|---:|---:|---:|---:|"
for l in $LEVELS; do
	n=$(name "$l")
	echo "| $l | $(median 1 "$work/$n-cold.t") | $(cpu_median "$work/$n-cold.t") | $(median 1 "$work/$n-warm.t") | $(cpu_median "$work/$n-warm.t") |"
done

# Sizes: the cold caches of the last run.
caches=()
for l in $LEVELS; do
	caches+=("$l=$work/cache-$(name "$l")-cold")
done
echo
"$PYTHON" - "${caches[@]}" <<'EOF'
import json, os, struct, subprocess, sys

ZSTD = b"\x28\xb5\x2f\xfd"

def kind_of(data):
    """What a blob holds, by its first bytes."""
    if data.startswith(b"\x7fELF") and len(data) >= 20:
        etype, machine = struct.unpack_from("<HH", data, 16)
        if machine == 224:
            return "AMD GPU code object"
        if machine == 190:
            return "CUDA cubin"
        if machine == 62:
            return "host object" if etype == 1 else "host executable or library"
        return "other ELF"
    if data.startswith(b"BC\xc0\xde") or data.startswith(b"\xde\xc0\x17\x0b"):
        return "LLVM bitcode"
    if data.startswith(b"__CLANG_OFFLOAD_BUNDLE__") or data.startswith(b"CCOB"):
        return "offload bundle"
    if data.startswith(b"\x10\xff\x10\xad"):
        return "offload binary"
    if data.startswith(b"\x50\xed\x55\xba"):
        return "CUDA fat binary"
    try:
        data[:4096].decode("utf-8")
        return "text (PTX, assembly, IR)"
    except UnicodeDecodeError:
        return "other"

def entries(cache):
    """Yields (entry kind, index bytes on disk, uncompressed, [(blob
    path, size, sha256)])."""
    for shard in sorted(os.listdir(cache)):
        sd = os.path.join(cache, shard)
        if len(shard) != 2 or not os.path.isdir(sd):
            continue
        for key in sorted(os.listdir(sd)):
            index = os.path.join(sd, key, "index")
            try:
                data = open(index, "rb").read()
            except OSError:
                continue
            if data.startswith(ZSTD):
                # A compressed index (a manifest): the zstd tool reads it.
                data = subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE, check=True).stdout
            body = json.loads(data[data.index(b"\n") + 1:])
            blobs = [(os.path.join(sd, key, b["name"]), b["size"], b["sha256"]) for b in body.get("blobs") or []]
            yield body["kind"], os.path.getsize(index), len(data), blobs

levels = [a.split("=", 1) for a in sys.argv[1:]]
# What each blob is, by its first bytes (decompressed).
kinds = {}
for level, cache in levels:
    for _, _, _, blobs in entries(cache):
        for path, size, sha in blobs:
            if sha in kinds:
                continue
            with open(path, "rb") as f:
                head = f.read(4096)
            if size >= 4 and head.startswith(ZSTD):
                head = subprocess.run(["zstd", "-dcq", path], stdout=subprocess.PIPE, check=True).stdout[:4096]
            kinds[sha] = kind_of(head)
by_kind = {}  # kind -> level -> [raw, disk]
stats = {}
for level, cache in levels:
    seen = set()
    for ekind, idisk, iraw, blobs in entries(cache):
        for path, size, sha in blobs:
            if (sha, path) in seen:
                continue
            seen.add((sha, path))
            k = kinds[sha]
            v = by_kind.setdefault(k, {}).setdefault(level, [0, 0, 0])
            v[0] += size
            v[1] += os.path.getsize(path)
            v[2] += 1
        k = "index files (%s)" % ekind
        v = by_kind.setdefault(k, {}).setdefault(level, [0, 0, 0])
        v[0] += iraw
        v[1] += idisk
        v[2] += 1
names = [l for l, _ in levels]
print("Result blobs by what they hold, and the index files by entry kind (the cold caches of the last run): bytes uncompressed, and on disk at each level (ratio on disk / uncompressed).")
print()
print("| blobs | files | bytes | " + " | ".join("on disk, %s" % n for n in names) + " |")
print("|---|---:|---:|" + "---:|" * len(names))
tot = {n: [0, 0] for n in names}
for k in sorted(by_kind, key=lambda k: (k.startswith("index"), -max(v[0] for v in by_kind[k].values()))):
    row = by_kind[k]
    raw = max(v[0] for v in row.values())
    files = max(v[2] for v in row.values())
    cells = []
    for n in names:
        v = row.get(n, [0, 0, 0])
        tot[n][0] += v[0]
        tot[n][1] += v[1]
        cells.append("%d (%.3f)" % (v[1], v[1] / v[0] if v[0] else 0))
    print("| %s | %d | %d | %s |" % (k, files, raw, " | ".join(cells)))
print("| all | | %d | %s |" % (max(t[0] for t in tot.values()), " | ".join("%d (%.3f)" % (t[1], t[1] / t[0] if t[0] else 0) for t in tot.values())))
EOF

# The stats' own view, and the check that the level off compressed nothing.
echo
echo "offcc cache stats --json of the same caches, per entry kind: bytes on disk / uncompressed (ratio)."
echo
echo "| level | entry kind | entries | on disk | uncompressed | ratio |"
echo "|---|---|---:|---:|---:|---:|"
for l in $LEVELS; do
	OFFCC_CACHE_DIR="$work/cache-$(name "$l")-cold" "$OFFCC" cache stats --json >"$work/stats.json"
	"$PYTHON" - "$l" "$work/stats.json" <<'EOF'
import json, sys
level, path = sys.argv[1], sys.argv[2]
st = json.load(open(path))
rows = sorted(st["entry_kinds"].items()) + [("all", {"entries": st["entries"], "bytes": st["bytes"], "uncompressed_bytes": st["uncompressed_bytes"]})]
for k, v in rows:
    print("| %s | %s | %d | %d | %d | %.3f |" % (level, k, v["entries"], v["bytes"], v["uncompressed_bytes"], v["bytes"] / max(1, v["uncompressed_bytes"])))
if level == "off" and st["bytes"] != st["uncompressed_bytes"]:
    # Blobs starting with the zstd magic are compressed whatever the
    # level; any other difference means the level was not read.
    sys.exit("bench: the level off stored compressed blobs: does this offcc read OFFCC_CACHE_COMPRESSION_LEVEL?")
EOF
done
