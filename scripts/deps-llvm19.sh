#!/usr/bin/env bash
# deps-llvm19.sh: LLVM 19 beside LLVM 22, for the tests that compare offcc
# with clang 19 (scripts/deps.sh runs it after the LLVM 22 packages).
#
# It installs clang-19, clang-tools-19 (clang 19 runs its own
# clang-offload-bundler), lld-19, llvm-19 and libclang-19-dev (clang 19's
# Options.inc) with apt-get, without recommended packages, and refuses to
# if apt-get plans to remove any package: Debian's libomp-19-dev conflicts
# with libomp-22-dev, and installing one removes the other (every LLVM 22
# OpenMP test then fails).
#
# clang 19's OpenMP runtime is therefore never installed. libomp-19-dev
# (omp.h, libomptarget.devicertl.a, the libomp.so and libomptarget.so
# links) and libomp5-19 (libomp.so.5 and libomptarget.so.19.1, which has
# the host, CUDA and AMDGPU plugins built in) of clang-19's version are
# downloaded and unpacked with dpkg -x into a private prefix, LIBOMP19:
# /opt/offcc/libomp-19, so that the runtime lies in
# /opt/offcc/libomp-19/usr/lib/llvm-19/lib and omp.h in its
# clang/19/include. A program is built and run against it with
#
#	clang-19 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
#		-isystem $LIB/clang/19/include -L$LIB prog.c -o prog
#	OMP_TARGET_OFFLOAD=MANDATORY LD_LIBRARY_PATH=$LIB ./prog
#
# (LIB=/opt/offcc/libomp-19/usr/lib/llvm-19/lib). LD_LIBRARY_PATH, not an
# rpath: the host plugin dlopens "libomp.so", which must resolve to the
# same file as the program's libomp.so.5 (else two OpenMP runtimes start
# and the program aborts with OMP Error #15). e2e/llvm19_test.go's
# TestLLVM19Reference runs exactly this.
#
# Idempotent and fast when everything is there: the packages installed and
# the prefix unpacked from clang-19's version (the file .offcc-version in
# the prefix says which). As root it does what is missing; otherwise it
# says to run 'sudo scripts/deps.sh' and fails.
set -euo pipefail

PKGS=(clang-19 clang-tools-19 lld-19 llvm-19 libclang-19-dev)
# The packages of clang 19's OpenMP runtime, unpacked, never installed.
OMP_PKGS=(libomp-19-dev libomp5-19)
LIBOMP19=/opt/offcc/libomp-19
LIB=$LIBOMP19/usr/lib/llvm-19/lib
STAMP=$LIBOMP19/.offcc-version
# What clang 19 needs of the prefix to build and run a host offload program.
NEED=(libomp.so libomp.so.5 libomptarget.so libomptarget.so.19.1
	libomptarget.devicertl.a clang/19/include/omp.h)

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# unpacked VERSION: the prefix holds the runtime of VERSION, whole.
unpacked() {
	[ "$(cat "$STAMP" 2>/dev/null)" = "$1" ] || return 1
	local f
	for f in "${NEED[@]}"; do
		[ -e "$LIB/$f" ] || return 1
	done
}

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done
version=
if [ ${#missing[@]} -eq 0 ]; then
	version=$(dpkg-query -W -f='${Version}' clang-19)
	if unpacked "$version"; then
		echo "deps: LLVM 19 packages installed (${PKGS[*]}); its OpenMP runtime ($version) unpacked in $LIBOMP19"
		exit 0
	fi
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	if [ ${#missing[@]} -gt 0 ]; then
		echo "deps: missing LLVM 19 packages: ${missing[*]}" >&2
	else
		echo "deps: LLVM 19's OpenMP runtime is not unpacked in $LIBOMP19" >&2
	fi
	echo "deps: run 'sudo scripts/deps.sh': it installs LLVM 19 without libomp-19-dev (which would remove libomp-22-dev) and unpacks that privately" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: missing LLVM 19 packages: ${missing[*]}" >&2
	apt-get update
	# What apt-get would do, first: nothing may be removed (libomp-22-dev
	# above all).
	plan=$(apt-get install -s --no-install-recommends "${missing[@]}")
	removed=$(awk '/^Remv /{printf "%s%s", sep, $2; sep = " "}' <<<"$plan")
	if [ -n "$removed" ]; then
		echo "deps: error: refusing to install ${missing[*]}: apt-get would remove $removed" >&2
		case " $removed " in
		*" libomp-22-dev "*) echo "deps: error: libomp-22-dev would go: LLVM 22's OpenMP runtime, which every OpenMP test needs" >&2 ;;
		esac
		exit 1
	fi
	had22=0
	if installed libomp-22-dev; then had22=1; fi
	apt-get install -y --no-install-recommends "${missing[@]}"
	if [ $had22 -eq 1 ] && ! installed libomp-22-dev; then
		echo "deps: error: installing LLVM 19 removed libomp-22-dev; reinstall it (apt-get install libomp-22-dev)" >&2
		exit 1
	fi
	version=$(dpkg-query -W -f='${Version}' clang-19)
fi

if ! unpacked "$version"; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# apt-get download fetches as _apt where that user can write.
	chown _apt "$tmp" 2>/dev/null || true
	want=()
	for p in "${OMP_PKGS[@]}"; do want+=("$p=$version"); done
	if ! (cd "$tmp" && apt-get download "${want[@]}"); then
		echo "deps: error: cannot download ${want[*]} (clang-19's version); after 'apt-get update', upgrade LLVM 19: apt-get install --only-upgrade ${PKGS[*]}" >&2
		exit 1
	fi
	mkdir -p "$(dirname "$LIBOMP19")"
	stage=$LIBOMP19.new.$$
	rm -rf "$stage"
	mkdir "$stage"
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$stage"
	done
	for f in "${NEED[@]}"; do
		if [ ! -e "$stage/usr/lib/llvm-19/lib/$f" ]; then
			rm -rf "$stage"
			echo "deps: error: ${OMP_PKGS[*]} $version have no usr/lib/llvm-19/lib/$f" >&2
			exit 1
		fi
	done
	echo "$version" >"$stage/.offcc-version"
	rm -rf "$LIBOMP19"
	mv "$stage" "$LIBOMP19"
	echo "deps: unpacked ${OMP_PKGS[*]} ($version) in $LIBOMP19, not installed (libomp-19-dev conflicts with libomp-22-dev)"
fi
echo "deps: LLVM 19 packages installed (${PKGS[*]}); its OpenMP runtime ($version) unpacked in $LIBOMP19"
