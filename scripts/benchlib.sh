# benchlib.sh: helpers shared by the scripts/bench-*.sh scripts (sourced).
# $work is the scratch directory: setup_clang_offcc makes it, or the
# sourcing script sets it.

# time_one <outfile> <cmd...>: appends one line of seconds, "wall user sys",
# of the command and its children; a failing command stops the benchmark.
time_one() {
	local out=$1
	shift
	local TIMEFORMAT='%3R %3U %3S'
	{ time "$@" >/dev/null 2>"$work/last.err"; } 2>>"$out" || {
		echo "bench: command failed: $*" >&2
		cat "$work/last.err" >&2
		exit 1
	}
}

# median <column> <file>: the median of a column of numbers.
median() {
	sort -g <(awk -v c="$1" '{print $c}' "$2") | awk '{v[NR]=$1} END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2] + v[NR/2+1]) / 2 }'
}

# cpu_median <file>: the median of user+sys of time_one's lines.
cpu_median() { awk '{print $2 + $3}' "$1" >"$1.cpu" && median 1 "$1.cpu"; }

# ratio <a> <b>: a/b with three decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }

# compare_clang_offcc <title> <runs> <args...>: warms up (plan cache), then
# runs "$CLANG args" and "$OFFCC args" alternately <runs> times each, and
# prints a Markdown table of the median wall and CPU times and their
# ratios under <title>.
compare_clang_offcc() {
	local title=$1 runs=$2 i
	shift 2
	"$CLANG" "$@"
	"$OFFCC" "$@"
	: >"$work/clang.t"
	: >"$work/offcc.t"
	for ((i = 1; i <= runs; i++)); do
		time_one "$work/clang.t" "$CLANG" "$@"
		time_one "$work/offcc.t" "$OFFCC" "$@"
		echo "bench: run $i/$runs: clang $(tail -1 "$work/clang.t" | cut -d' ' -f1)s, offcc $(tail -1 "$work/offcc.t" | cut -d' ' -f1)s" >&2
	done
	local cw ow cc oc
	cw=$(median 1 "$work/clang.t") ow=$(median 1 "$work/offcc.t")
	cc=$(cpu_median "$work/clang.t") oc=$(cpu_median "$work/offcc.t")
	echo
	echo "$title; median of $runs runs, $(nproc) CPUs."
	echo
	echo "| compiler | wall (s) | CPU user+sys (s) |"
	echo "|---|---:|---:|"
	echo "| clang-22 | $cw | $cc |"
	echo "| offcc | $ow | $oc |"
	echo "| ratio offcc / clang | $(ratio "$ow" "$cw") | $(ratio "$oc" "$cc") |"
}

# setup_clang_offcc: OFFCC (default bin/offcc) and CLANG (default LLVM 22's
# clang) must exist; makes the scratch directory $work, removed at exit.
setup_clang_offcc() {
	OFFCC=${OFFCC:-$PWD/bin/offcc}
	CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
	local c
	for c in "$OFFCC" "$CLANG"; do
		[ -x "$c" ] || { echo "bench: $c not found (run make build / make deps)" >&2; exit 1; }
	done
	work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
	trap 'rm -rf "$work"' EXIT
}
