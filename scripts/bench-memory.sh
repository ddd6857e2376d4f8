#!/usr/bin/env bash
# bench-memory.sh: memory-aware scheduling (issue 26). The kernel of
# testdata/memory/gen-kernel.sh (one OpenMP target region; each AMD device
# compile peaks near 260 MB) compiled for four archs inside a memory
# cgroup of 330, 600 and 1,200 MB and one with no limit, by:
#   - clang-22, which runs the same compiles one at a time;
#   - offcc --offload-jobs=4 (memory scheduling on), a first build: no
#     peaks learned (the build cache off);
#   - offcc --offload-jobs=4 after an edit: the peaks of the last build
#     learned (the cache on, the source changed each run);
#   - offcc --offload-jobs=4 --offload-mem=off (by cores alone).
# Each run gets a fresh cgroup. Prints a Markdown table: median wall time,
# the group's peak memory (largest of the runs), compiles OOM-killed and
# runs that failed, over RUNS runs.
#
#   RUNS=3 scripts/bench-memory.sh
#
# Env: OFFCC (default bin/offcc), CLANG (default LLVM 22's clang),
#      STATEMENTS (in the kernel, default 52000),
#      ARCHS (default gfx906,gfx90a,gfx1030,gfx1100),
#      LIMITS (MB, "none" for no limit; default "330 600 1200 none"),
#      RUNS (runs per compiler and limit, default 3).
# Needs root and a writable memory cgroup (v1 or v2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
STATEMENTS=${STATEMENTS:-52000}
ARCHS=${ARCHS:-gfx906,gfx90a,gfx1030,gfx1100}
LIMITS=${LIMITS:-330 600 1200 none}
RUNS=${RUNS:-3}

. scripts/benchlib.sh
setup_clang_offcc

# --- the cgroup under this shell's own ------------------------------------
if v1=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup) && [ -n "$v1" ] &&
	[ -d "/sys/fs/cgroup/memory$v1" ]; then
	cgv=1 cgbase=/sys/fs/cgroup/memory$v1
else
	cgv=2 cgbase=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
fi
[ -w "$cgbase" ] || { echo "bench: cannot make memory cgroups under $cgbase (run as root)" >&2; exit 1; }
cg=
cleanup_cg() { [ -z "$cg" ] || rmdir "$cg" 2>/dev/null || true; cg=; }
trap 'cleanup_cg; rm -rf "$work"' EXIT

# in_group <limit MB|none> <cmd...>: runs the command in a fresh cgroup
# and appends "wall peak_mb oom_kills status" to $work/run.t.
in_group() {
	local lim=$1 s e rc peak kills
	shift
	cg=$(mktemp -d "$cgbase/offcc-bench-XXXXXX")
	if [ "$lim" != none ]; then
		if [ $cgv = 1 ]; then
			echo $((lim << 20)) >"$cg/memory.limit_in_bytes"
			echo $((lim << 20)) >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null || true
		else
			echo $((lim << 20)) >"$cg/memory.max"
			echo 0 >"$cg/memory.swap.max" 2>/dev/null || true
		fi
	fi
	s=$(date +%s.%N)
	rc=0
	/bin/sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" >/dev/null 2>"$work/last.err" || rc=$?
	e=$(date +%s.%N)
	if [ $cgv = 1 ]; then
		peak=$(cat "$cg/memory.max_usage_in_bytes")
		kills=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.oom_control")
	else
		peak=$(cat "$cg/memory.peak" 2>/dev/null || echo 0)
		kills=$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")
	fi
	cleanup_cg
	awk -v s="$s" -v e="$e" -v p="$peak" -v k="${kills:-0}" -v rc="$rc" \
		'BEGIN { printf "%.3f %d %d %d\n", e - s, p / 1048576, k, rc }' >>"$work/run.t"
}

cd "$work"
sh "$root/testdata/memory/gen-kernel.sh" "$STATEMENTS" >kernel.src
cp kernel.src kernel.c
flags=(-fopenmp -O0 -fopenmp-offload-mandatory -nogpulib --offload-arch="$ARCHS" -c kernel.c -o kernel.o)
export OFFCC_CACHE_DIR="$work/cache"
# The same compiles by each compiler; clang runs them one at a time.
declare -A cmd=(
	[clang]="$CLANG ${flags[*]}"
	[first]="env OFFCC_CACHE=0 $OFFCC --offload-jobs=4 ${flags[*]}"
	[learned]="$OFFCC --offload-jobs=4 ${flags[*]}"
	[off]="env OFFCC_CACHE=0 $OFFCC --offload-jobs=4 --offload-mem=off ${flags[*]}"
)
names=(clang first learned off)
declare -A label=(
	[clang]="clang-22, one compile at a time"
	[first]="offcc --offload-jobs=4, first build (no peaks learned)"
	[learned]="offcc --offload-jobs=4, rebuild after an edit (peaks learned)"
	[off]="offcc --offload-jobs=4 --offload-mem=off"
)
# Warm the page cache and learn the peaks, untimed and unlimited.
$CLANG "${flags[@]}"
$OFFCC --offload-jobs=4 "${flags[@]}"

declare -A cell
edit=0
for lim in $LIMITS; do
	for n in "${names[@]}"; do
		: >run.t
		for ((i = 1; i <= RUNS; i++)); do
			if [ "$n" = learned ]; then
				# An edit: a cache miss, at the path whose peaks are learned.
				edit=$((edit + 1))
				{ cat kernel.src; echo "int bench_edit_$edit;"; } >kernel.c
			fi
			# shellcheck disable=SC2086
			in_group "$lim" ${cmd[$n]}
			echo "bench: $lim MB, $n, run $i/$RUNS: $(tail -1 run.t)" >&2
		done
		cp kernel.src kernel.c
		cell[$lim,$n]="$(median 1 run.t) | $(sort -n -k2 run.t | tail -1 | cut -d' ' -f2) | $(awk '{ k += $3 } END { print k }' run.t) | $(awk '$4 != 0 { f++ } END { print f + 0 }' run.t)/$RUNS"
	done
done

echo
echo "Memory-aware scheduling: \`-fopenmp -O0 -fopenmp-offload-mandatory -nogpulib --offload-arch=$ARCHS -c\` of a $STATEMENTS-statement OpenMP target region, in a memory cgroup (v$cgv); median wall of $RUNS runs, $(nproc) CPUs. Peak: the group's (largest run). Killed: compiles OOM-killed in all runs. Failed: runs that failed."
echo
echo "| limit | compiler | wall (s) | peak (MB) | killed | failed |"
echo "|---|---|---:|---:|---:|---:|"
for lim in $LIMITS; do
	for n in "${names[@]}"; do
		l="$lim MB"
		[ "$lim" = none ] && l="none"
		echo "| $l | ${label[$n]} | ${cell[$lim,$n]} |"
	done
done
