# benchlib.sh: helpers shared by the scripts/bench-*.sh scripts (sourced).
# The sourcing script sets $work, a scratch directory.

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
