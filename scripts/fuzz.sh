#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target in the module for $FUZZTIME (default 5s).
# Targets are discovered with `go test -list 'Fuzz.*' ./...`.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}

# `go test -list` prints each package's matching names, then "ok  <pkg> ...".
list=$("$GO" test -list '^Fuzz' ./...)
targets=$(awk '
	/^Fuzz[A-Za-z0-9_]*$/ { names[n++] = $1; next }
	/^ok[ \t]/ { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }
' <<<"$list")

if [ -z "$targets" ]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi
count=$(wc -l <<<"$targets")
echo "fuzz: $count target(s), $FUZZTIME each"
while read -r pkg name; do
	echo "fuzz: $pkg $name"
	"$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"
done <<<"$targets"
