#!/usr/bin/env bash
# bench-miss.sh: what a cache miss of a plain C compile costs over clang,
# offcc next to ccache 4 in front of clang-22, for a small C file
# (-O2 -c, stdio.h):
#
#   edited   the source changes before every run (a new constant); each
#            cache is kept, so offcc's plan is cached and its job misses,
#            and ccache misses (its direct and preprocessed modes both)
#   empty    each run starts from an empty cache directory: offcc also
#            runs clang -### for the plan
#
#   RUNS=20 scripts/bench-miss.sh
#
# Situations alternate within each run. Each run is timed by a small C
# timer built here: wall, and CPU (wait4's user+sys, the compiler's
# children included). Every compile's object must be clang's, byte for byte.
#
# Env: OFFCC (default bin/offcc), CLANG (default /usr/lib/llvm-22/bin/clang),
#      CCACHE (default ccache on PATH), RUNS (default 20).
# Prints a Markdown table of medians (ms) and each cache's overhead over
# clang.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
CCACHE=${CCACHE:-$(command -v ccache || true)}
RUNS=${RUNS:-20}
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
for c in "$OFFCC" "$CLANG" "$CCACHE"; do
	[ -n "$c" ] && [ -x "$c" ] || { echo "bench: ${c:-ccache} not found (make build; make deps)" >&2; exit 1; }
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench: RUNS=$RUNS: want a positive integer" >&2; exit 1; }
for v in "${!OFFCC_@}" "${!CCACHE_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS CC CXX CFLAGS CPPFLAGS

# shellcheck source=scripts/benchlib.sh
. scripts/benchlib.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-miss.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/xdg
mkdir -p "$TMPDIR" "$work/src"

n=0
# source: writes the source with a new constant.
source_file() {
	n=$((n + 1))
	cat >"$work/src/m.c" <<C
#include <stdio.h>
int scale(int x) { return x * $((n + 7)); }
int main(void) { printf("%d\n", scale(6)); return 0; }
C
}

# A timer with microseconds (GNU time's are centiseconds): fork, exec and
# wait4 of the command, timed with CLOCK_MONOTONIC; its CPU is wait4's
# user+sys, which holds the descendants it waited for.
cat >"$work/timer.c" <<'C'
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	struct timespec t0, t1;
	struct rusage ru;
	int st;
	if (argc < 3) return 2;
	FILE *out = fopen(argv[1], "a");
	if (!out) { perror(argv[1]); return 2; }
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
	if (wait4(pid, &st, 0, &ru) < 0) { perror("wait4"); return 2; }
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(out, "%.3f %.3f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
		(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
C
"$CLANG" -O2 -o "$work/timer" "$work/timer.c"

# timed <file> <cmd...>: runs cmd, appends "wall_ms cpu_ms" to file.
timed() {
	local out=$1
	shift
	"$work/timer" "$out" "$@" || { echo "bench: command failed: $*" >&2; exit 1; }
}

compile() { # compile <situation> <cache-mode> <compiler...>
	local sit=$1 mode=$2
	shift 2
	local dir=$work/cache-$sit
	[ "$mode" = empty ] && rm -rf "$dir"
	(cd "$work/src" && OFFCC_CACHE_DIR=$dir CCACHE_DIR=$dir timed "$work/$sit" "$@" -O2 -c m.c -o "$sit.o")
	cmp -s "$work/src/$sit.o" "$work/src/clang.o" || { echo "bench: $sit: the object differs from clang's" >&2; exit 1; }
}

for f in clang-edited offcc-edited ccache-edited offcc-empty ccache-empty; do
	: >"$work/$f"
done
# One untimed round: caches and page cache warm.
source_file
(cd "$work/src" && "$CLANG" -O2 -c m.c -o clang.o)
compile offcc-edited edited "$OFFCC"
compile ccache-edited edited "$CCACHE" "$CLANG"
for ((i = 1; i <= RUNS; i++)); do
	source_file
	(cd "$work/src" && timed "$work/clang-edited" "$CLANG" -O2 -c m.c -o clang.o)
	compile offcc-edited edited "$OFFCC"
	compile ccache-edited edited "$CCACHE" "$CLANG"
	compile offcc-empty empty "$OFFCC"
	compile ccache-empty empty "$CCACHE" "$CLANG"
done

col() { median "$2" "$1"; }
echo
echo "A plain C compile that misses the cache (ms, median of $RUNS; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $("$CLANG" --version | head -1))."
echo
echo "| situation | clang wall | clang CPU | offcc wall | offcc CPU | ccache wall | ccache CPU | offcc CPU − clang | ccache CPU − clang |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
# (clang's runs are the same for both rows.)
for mode in edited empty; do
	cw=$(col "$work/clang-edited" 1)
	cc=$(col "$work/clang-edited" 2)
	ow=$(col "$work/offcc-$mode" 1)
	oc=$(col "$work/offcc-$mode" 2)
	xw=$(col "$work/ccache-$mode" 1)
	xc=$(col "$work/ccache-$mode" 2)
	echo "| $mode | $cw | $cc | $ow | $oc | $xw | $xc | $(awk -v a="$oc" -v b="$cc" 'BEGIN {printf "%+.1f", a - b}') | $(awk -v a="$xc" -v b="$cc" 'BEGIN {printf "%+.1f", a - b}') |"
done
