#!/usr/bin/env bash
# bench-warm.sh: the wall time of a warm rebuild in a fresh build directory
# under a new -o, offcc (OFFCC_BASE_DIR) next to ccache 4 in front of
# clang-22 (CCACHE_BASEDIR), for three translation units:
#
#   plain C        a small C file, -O2 -c
#   OpenMP host    $KERNELS target regions offloaded to the host,
#                  -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 -c
#   OpenMP 4 AMD   the same TU, -fopenmp --offload-arch=$ARCHS -nogpulib -O2 -c
#
#   RUNS=30 scripts/bench-warm.sh
#
# Each TU lives in a checkout ($work/ck/src), compiled as CMake writes the
# command: absolute source path, from a build directory under the
# checkout, -o CMakeFiles/k.dir/<file>.o. Each cache is filled by one
# build from its own first build directory, then warmed by one more
# (untimed); every timed run compiles from a new build directory to a new
# -o in the same relative directory (CMakeFiles/k.dir/<tu>-N.c.o: offcc's
# plan cache keys the output's directory, not its stem), offcc (and the
# OFFCC_BEFORE build) and ccache taking turns. Every timed offcc run must
# be a hit of each of its jobs (offcc cache stats: no new miss), start no
# clang (no new plan entry: a clang -### run stores one) and give back the
# first build's object byte for byte; every ccache run must be a hit
# (ccache's stats).
#
# Times come from a small C helper (built with $CLANG into the scratch
# directory) that creates and enters the build directory untimed, then
# times fork, exec and wait of the command with CLOCK_MONOTONIC: no shell
# or subshell start is counted. The floor rows time /bin/true and a Go
# hello world spawned the same way.
#
#   RUNS=30 OFFCC_BEFORE=/tmp/offcc-old scripts/bench-warm.sh   # before/after
#
# Env: OFFCC (default bin/offcc), OFFCC_BEFORE (another offcc, timed in the
#      same loop as OFFCC with a cache of its own, for a before/after
#      column), CLANG (default /usr/lib/llvm-22/bin/clang),
#      CCACHE (default ccache on PATH), RUNS (default 30, at least 20 for
#      numbers you report), KERNELS (default 40), ARCHS (default
#      gfx906,gfx908,gfx90a,gfx1030), GO (default go on PATH, else
#      /usr/local/go/bin/go; for the floor row, skipped without it),
#      ONLY (a space-separated subset of: plain omp amd).
# Prints a Markdown table of medians (and the 10th/90th percentiles) in ms.
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
CCACHE=${CCACHE:-$(command -v ccache || true)}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
RUNS=${RUNS:-30}
KERNELS=${KERNELS:-40}
ARCHS=${ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
ONLY=${ONLY:-plain omp amd}
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
# (Read now: every OFFCC_ variable is unset below.)
BEFORE=${OFFCC_BEFORE:-}
if [ -n "$BEFORE" ]; then
	case $BEFORE in /*) ;; *) BEFORE=$start_dir/$BEFORE ;; esac
	[ -x "$BEFORE" ] || { echo "bench: $BEFORE not found" >&2; exit 1; }
fi
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
for c in "$OFFCC" "$CLANG" "$CCACHE"; do
	if [ -z "$c" ] || [ ! -x "$c" ]; then
		echo "bench: ${c:-ccache} not found (go build -o bin/offcc ./cmd/offcc; apt-get install ccache)" >&2
		exit 1
	fi
done
for v in RUNS KERNELS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v=${!v}: want a positive integer" >&2; exit 1; }
done
[ "$RUNS" -ge 20 ] || echo "bench: RUNS=$RUNS: fewer than 20 runs, for trying the script only" >&2

for v in "${!OFFCC_@}" "${!CCACHE_@}"; do unset "$v"; done
unset MAKEFLAGS MFLAGS CC CXX CFLAGS CPPFLAGS

# shellcheck source=scripts/benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-warm.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"

# timeit <outfile> <dir> <cmd...>: mkdir -p dir, cd dir (untimed), then runs
# cmd with stdout and stderr to <outfile>.err and appends its wall time in
# milliseconds to <outfile>; exits with cmd's status.
cat >"$work/timeit.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void mkdirs(char *p) {
	for (char *s = p + 1; *s; s++)
		if (*s == '/') { *s = 0; mkdir(p, 0777); *s = '/'; }
	mkdir(p, 0777);
}

int main(int argc, char **argv) {
	if (argc < 4) { fprintf(stderr, "usage: timeit OUT DIR CMD...\n"); return 2; }
	char err[4096];
	snprintf(err, sizeof err, "%s.err", argv[1]);
	int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0) { perror(err); return 2; }
	mkdirs(argv[2]);
	if (chdir(argv[2]) != 0) { perror(argv[2]); return 2; }
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	FILE *f = fopen(argv[1], "a");
	if (!f) { perror(argv[1]); return 2; }
	fprintf(f, "%.3f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
C
"$CLANG" -O2 -o "$work/timeit" "$work/timeit.c"
# timeit <outfile> <dir> <cmd...>: also makes the directory of the command's
# -o argument (relative to dir), as CMake does before it compiles.
timeit() {
	local a prev=
	for a in "${@:3}"; do
		[ "$prev" = -o ] && mkdir -p "$2/$(dirname "$a")"
		prev=$a
	done
	"$work/timeit" "$@" || {
		echo "bench: command failed: ${*:3}" >&2
		cat "$1.err" >&2
		exit 1
	}
}
if [ -x "$GO" ]; then
	mkdir -p "$work/hello"
	printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("") }\n' >"$work/hello/main.go"
	printf 'module hello\n\ngo 1.21\n' >"$work/hello/go.mod"
	(cd "$work/hello" && GOFLAGS= "$GO" build -o "$work/hello-go" .) || rm -f "$work/hello-go"
fi

# The checkout.
ck=$work/ck
mkdir -p "$ck/src"
cat >"$ck/src/plain.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int plain_sum(const int *v, int n) { int s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }
int plain_main(int argc, char **argv) { printf("%d %s\n", plain_sum((const int *)argv, argc), argc > 1 ? strchr(argv[1], 'x') : ""); return EXIT_SUCCESS; }
C
gen_target_regions "$KERNELS" scripts/bench-warm.sh >"$ck/src/omp.c"
cp "$ck/src/omp.c" "$ck/src/amd.c"
# A checkout is older than a build's first moments: offcc's command entries
# list only files left alone for two seconds before the build (a file
# changed later could change again within one timestamp tick).
sleep 2.1

flags_plain=(-O2 -c)
flags_omp=(-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 -c)
flags_amd=(-fopenmp "--offload-arch=$ARCHS" -nogpulib -O2 -c)
title_plain="plain C (\`-O2 -c\`)"
title_omp="OpenMP host offload, $KERNELS target regions (\`-fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -O2 -c\`)"
title_amd="OpenMP four AMD archs, $KERNELS target regions (\`-fopenmp --offload-arch=$ARCHS -nogpulib -O2 -c\`)"

# offcc_misses <offcc> <cachedir>: the cache's miss count (all kinds).
offcc_misses() {
	OFFCC_CACHE_DIR=$2 "$1" cache stats --json | tr -d ' \n' | grep -o '"misses":[0-9]*' | awk -F: '{s += $2} END {print s + 0}'
}
# offcc_plans <offcc> <cachedir>: the number of plan entries (a run that
# started clang -### stores one).
offcc_plans() {
	OFFCC_CACHE_DIR=$2 "$1" cache stats --json | tr -d ' \n' | grep -o '"plan":{"entries":[0-9]*' | grep -o '[0-9]*$' || echo 0
}
# offcc_whole <offcc> <cachedir>: the number of builds answered whole
# (command entries' hits).
offcc_whole() {
	OFFCC_CACHE_DIR=$2 "$1" cache stats --json | tr -d ' \n' | grep -o '"command":{[^}]*' | grep -o '"hits":[0-9]*' | grep -o '[0-9]*$' || echo 0
}
# ccache_count <cachedir> <field>: a counter of ccache's stats.
ccache_count() { CCACHE_DIR=$1 "$CCACHE" --print-stats | awk -F'\t' -v f="$2" '$1 == f {print $2}'; }

t() { echo "$work/t.$1"; }

# The offcc builds timed: "new" ($OFFCC), and "before" ($OFFCC_BEFORE)
# when set, in the same loop (each with a cache of its own), so that both
# see the same machine.
variants=(new)
declare -A bin=([new]=$OFFCC)
if [ -n "$BEFORE" ]; then
	variants=(before new)
	bin[before]=$BEFORE
fi

for tu in $ONLY; do
	declare -n flags=flags_$tu
	src=$ck/src/$tu.c
	cc=$work/cc-$tu
	declare -A misses=() plans=()
	echo "bench: $tu: first builds (untimed)" >&2
	for v in "${variants[@]}"; do
		oc=$work/oc-$v-$tu
		timeit "$(t first)" "$ck/build0-$v-$tu" env OFFCC_CACHE_DIR="$oc" OFFCC_BASE_DIR="$ck" "${bin[$v]}" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu.c.o"
		misses[$v]=$(offcc_misses "${bin[$v]}" "$oc")
		plans[$v]=$(offcc_plans "${bin[$v]}" "$oc")
		# One untimed warm run (page cache).
		timeit "$(t warmup)" "$ck/bw-$v-$tu" env OFFCC_CACHE_DIR="$oc" OFFCC_BASE_DIR="$ck" "${bin[$v]}" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu-w.c.o"
		[ "$(offcc_misses "${bin[$v]}" "$oc")" = "${misses[$v]}" ] || { echo "bench: $tu: offcc ($v) missed its warm-up rebuild" >&2; exit 1; }
		: >"$(t off-$v-$tu)"
	done
	ref=$ck/build0-new-$tu/CMakeFiles/k.dir/$tu.c.o
	timeit "$(t first)" "$ck/build0-cc-$tu" env CCACHE_DIR="$cc" CCACHE_BASEDIR="$ck" "$CCACHE" "$CLANG" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu.c.o"
	cchits=$(ccache_count "$cc" direct_cache_hit)
	timeit "$(t warmup)" "$ck/bw-cc-$tu" env CCACHE_DIR="$cc" CCACHE_BASEDIR="$ck" "$CCACHE" "$CLANG" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu-x.c.o"
	: >"$(t cc-$tu)"
	# The environment is exported here, not by env(1): the helper execs
	# the compiler itself.
	for ((i = 1; i <= RUNS; i++)); do
		for v in "${variants[@]}"; do
			(export OFFCC_CACHE_DIR="$work/oc-$v-$tu" OFFCC_BASE_DIR="$ck" && timeit "$(t off-$v-$tu)" "$ck/b-$v-$tu$i" "${bin[$v]}" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu-$i.c.o")
			cmp -s "$ck/b-$v-$tu$i/CMakeFiles/k.dir/$tu-$i.c.o" "$ref" || { echo "bench: $tu: run $i: offcc's ($v) object differs from the first build's" >&2; exit 1; }
		done
		(export CCACHE_DIR="$cc" CCACHE_BASEDIR="$ck" && timeit "$(t cc-$tu)" "$ck/b-cc-$tu$i" "$CCACHE" "$CLANG" "${flags[@]}" "$src" -o "CMakeFiles/k.dir/$tu-$i.c.o")
		[ -s "$ck/b-cc-$tu$i/CMakeFiles/k.dir/$tu-$i.c.o" ] || { echo "bench: $tu: run $i: ccache wrote no object" >&2; exit 1; }
		if [ -x "$work/hello-go" ] && [ "$tu" = "${ONLY%% *}" ]; then
			timeit "$(t go)" "$work" "$work/hello-go"
			timeit "$(t true)" "$work" /bin/true
		fi
	done
	line="bench: $tu:"
	for v in "${variants[@]}"; do
		oc=$work/oc-$v-$tu
		[ "$(offcc_misses "${bin[$v]}" "$oc")" = "${misses[$v]}" ] || { echo "bench: $tu: offcc ($v) missed in a timed run" >&2; exit 1; }
		[ "$(offcc_plans "${bin[$v]}" "$oc")" = "${plans[$v]}" ] || { echo "bench: $tu: offcc ($v) ran clang -### in a warm run (a plan was stored)" >&2; exit 1; }
		line+=" offcc ($v) $(median 1 "$(t off-$v-$tu)") ms ($(offcc_whole "${bin[$v]}" "$oc") of $RUNS answered whole),"
	done
	got=$(ccache_count "$cc" direct_cache_hit)
	[ "$got" -ge $((cchits + RUNS + 1)) ] || { echo "bench: $tu: ccache hit only $((got - cchits)) of $((RUNS + 1)) warm runs" >&2; exit 1; }
	echo "$line ccache $(median 1 "$(t cc-$tu)") ms" >&2
done

# pct <p> <file>: the p-th percentile (nearest rank) of a column of numbers.
pct() { sort -g "$2" | awk -v p="$1" '{v[NR]=$1} END { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print v[i] }'; }
cell() { echo "$(median 1 "$1") ($(pct 10 "$1")–$(pct 90 "$1"))"; }

echo
echo "Warm rebuild in a fresh build directory under a new \`-o\` (ms, median of $RUNS runs, 10th–90th percentile in brackets; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))."
echo
if [ ${#variants[@]} = 2 ]; then
	echo "| TU | offcc before | offcc | ccache + clang-22 | offcc / ccache |"
	echo "|---|---:|---:|---:|---:|"
else
	echo "| TU | offcc | ccache + clang-22 | offcc / ccache |"
	echo "|---|---:|---:|---:|"
fi
for tu in $ONLY; do
	declare -n title=title_$tu
	row="| $title |"
	for v in "${variants[@]}"; do
		row+=" $(cell "$(t off-$v-$tu)") |"
	done
	echo "$row $(cell "$(t cc-$tu)") | $(ratio "$(median 1 "$(t off-new-$tu)")" "$(median 1 "$(t cc-$tu)")") |"
done
if [ -s "$(t go)" ]; then
	pad=""
	[ ${#variants[@]} = 2 ] && pad=" |"
	echo "| floor: spawn of /bin/true | $(cell "$(t true)") | |$pad |"
	echo "| floor: spawn of a Go hello world | $(cell "$(t go)") | |$pad |"
fi
