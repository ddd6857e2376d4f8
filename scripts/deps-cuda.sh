#!/usr/bin/env bash
# deps-cuda.sh: install NVIDIA's CUDA toolkit from Debian 12's non-free
# component (package nvidia-cuda-toolkit, CUDA 11.8: nvcc, ptxas, fatbinary,
# nvlink, cuobjdump, libdevice, headers and libcudart), which clang 22 finds
# by itself under /usr/lib/cuda. It enables the contrib and non-free
# components of Debian's apt sources where they are missing (the deb822
# *.sources files and the one-line sources.list format both), then installs
# the toolkit without recommended packages: about 1.6 GB to download and
# 5.5 GB on disk. Idempotent: with the toolkit installed it changes nothing.
# Opt-in for users (make deps-cuda); CI always runs it. Root only.
set -euo pipefail

PKG=nvidia-cuda-toolkit

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

if installed "$PKG"; then
	echo "deps-cuda: $PKG installed ($(dpkg-query -W -f='${Version}' "$PKG"))"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "deps-cuda: installing $PKG needs root and apt-get: run 'sudo make deps-cuda' (it enables Debian's contrib and non-free components)" >&2
	exit 1
fi

# rewrite FILE AWK: replaces FILE by what the awk program makes of it, when
# that differs, keeping its mode, and says so.
rewrite() {
	local f=$1 tmp
	tmp=$(mktemp "$f.XXXXXX")
	awk "$2" "$f" >"$tmp"
	if cmp -s "$f" "$tmp"; then
		rm -f "$tmp"
	else
		chmod --reference="$f" "$tmp"
		mv "$tmp" "$f"
		echo "deps-cuda: enabled contrib non-free in $f"
	fi
}

# The deb822 format: each stanza whose Components list has main (Debian's
# own archives) gets contrib and non-free. (awk programs: no shell expansion.)
# shellcheck disable=SC2016
deb822='
/^Components:/ && / main([ \t]|$)/ {
	if ($0 !~ /[ \t]contrib([ \t]|$)/) $0 = $0 " contrib"
	if ($0 !~ /[ \t]non-free([ \t]|$)/) $0 = $0 " non-free"
}
{ print }'

# The one-line format: the same for "deb URI SUITE main ..." lines.
# shellcheck disable=SC2016
oneline='
/^[ \t]*deb(-src)?[ \t]/ && / main([ \t]|$)/ {
	sub(/[ \t]*#.*$/, "")
	if ($0 !~ /[ \t]contrib([ \t]|$)/) $0 = $0 " contrib"
	if ($0 !~ /[ \t]non-free([ \t]|$)/) $0 = $0 " non-free"
}
{ print }'

shopt -s nullglob
for f in /etc/apt/sources.list.d/*.sources; do
	rewrite "$f" "$deb822"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && rewrite "$f" "$oneline"
done

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if ! apt-get install -y -qq --no-install-recommends "$PKG" >/dev/null; then
	echo "deps-cuda: apt-get install $PKG failed: it is in Debian 12's non-free component (check /etc/apt/sources.list*)" >&2
	exit 1
fi
echo "deps-cuda: installed $PKG ($(dpkg-query -W -f='${Version}' "$PKG"))"
