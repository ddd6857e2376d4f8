#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target in the module for $FUZZTIME (default 5s).
# Targets are the "func FuzzX(f *testing.F)" declarations of each package's
# test files (go list names the packages and their test files; reading the
# declarations, unlike `go test -list`, builds no test binary: the -fuzz
# runs build the one each package needs).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}

files=$("$GO" list -f '{{$d := .Dir}}{{$p := .ImportPath}}{{range .TestGoFiles}}{{$p}} {{$d}}/{{.}}{{"\n"}}{{end}}{{range .XTestGoFiles}}{{$p}} {{$d}}/{{.}}{{"\n"}}{{end}}' ./...)
targets=$(while read -r pkg file; do
	[ -n "$pkg" ] || continue
	awk -v pkg="$pkg" '/^func Fuzz/ {
		if ($0 ~ /^func Fuzz[A-Za-z0-9_]*\([a-z]* \*testing\.F\) \{$/) {
			name = $2; sub(/\(.*/, "", name); print pkg, name
		} else {
			print "unread " FILENAME ": " $0
		}
	}' "$file"
done <<<"$files" | sort -u)
if grep -q '^unread ' <<<"$targets"; then
	grep '^unread ' <<<"$targets" | sed 's/^unread /fuzz: cannot read a fuzz target'"'"'s name: /' >&2
	exit 1
fi

if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi
count=$(wc -l <<<"$targets")
echo "fuzz: $count target(s), $FUZZTIME each"
# Go 1.26's fuzz coordinator can report a bare "context deadline exceeded"
# when -fuzztime ends while a worker is mid-input (golang/go#75804, fixed in
# Go 1.27). A real failure writes a reproducer under testdata/fuzz/<name>/,
# so a failure that wrote none and says only that is retried (5 runs in all:
# with 23 targets, one target lost two races in a row in a full run).
corpus_count() {
	local dir
	dir=$("$GO" list -f '{{.Dir}}' "$1")/testdata/fuzz/$2
	find "$dir" -type f 2>/dev/null | wc -l
}
fuzz_one() {
	local pkg=$1 name=$2 before log rc
	before=$(corpus_count "$pkg" "$name")
	log=$(mktemp)
	rc=0
	"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log" || rc=$?
	if [ "$rc" -ne 0 ] && [ "$(corpus_count "$pkg" "$name")" -eq "$before" ] &&
		grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
		rc=75
	fi
	rm -f "$log"
	return "$rc"
}
while read -r pkg name; do
	echo "fuzz: $pkg $name"
	for attempt in 1 2 3 4 5; do
		rc=0
		fuzz_one "$pkg" "$name" || rc=$?
		[ "$rc" -eq 75 ] || break
		echo "fuzz: $name: deadline race in Go's fuzz coordinator (golang/go#75804), no failing input"
	done
	if [ "$rc" -ne 0 ]; then
		echo "fuzz: $pkg $name failed" >&2
		exit 1
	fi
done <<<"$targets"
