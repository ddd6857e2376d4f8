#!/usr/bin/env bash
# deps.sh: make sure the LLVM 22 Debian packages offcc drives are installed,
# and the build tools its end-to-end tests run (cmake, ninja-build: the CMake
# tests of e2e/cmake_test.go), redis-server (the shared cache's tests start
# one on a loopback port), and ccache, the peer scripts/bench-cache.sh
# compares the build cache with; libclang-22-dev, whose Options.inc the
# option table's test regenerates offcc's copy of clang's option table from;
# Debian's ROCm 5.2 HIP (libamdhip64-dev, rocm-device-libs), which the HIP
# end-to-end tests (e2e/hip_rocm_test.go, e2e/real_command_lines_test.go)
# and scripts/bench-hip-rocm.sh compile real HIP code against; and
# bubblewrap, the farm worker's sandbox; man-db and groff-base, which
# render the man page in its tests. As root it installs what is
# missing with apt-get; otherwise it prints the one-line command to run
# and fails. Then scripts/deps-llvm19.sh does the same for LLVM 19
# (clang-19, lld-19, ...: the tests that compare offcc with clang 19) and
# unpacks clang 19's OpenMP runtime into /opt/offcc/libomp-19 without
# installing it (libomp-19-dev conflicts with libomp-22-dev).
set -euo pipefail

PKGS=(clang-22 clang-tools-22 lld-22 llvm-22 liboffload-22 liboffload-22-dev libomp-22-dev spirv-tools
	libclang-22-dev libamdhip64-dev rocm-device-libs bubblewrap
	cmake ninja-build ccache redis-server man-db groff-base)

installed() {
	command -v dpkg-query >/dev/null 2>&1 &&
		dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for p in "${PKGS[@]}"; do
	installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: LLVM 22 packages and build tools installed (${PKGS[*]})"
else
	echo "deps: missing packages: ${missing[*]}" >&2
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "deps: install them with:" >&2
		echo "sudo apt-get install -y ${missing[*]}"
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! (apt-get update && apt-get install -y "${missing[@]}"); then
		echo "deps: apt-get failed; on Debian 12 the *-22 packages come from the bookworm-security suite (check /etc/apt/sources.list*)" >&2
		exit 1
	fi
fi

# LLVM 19 beside 22, and its OpenMP runtime unpacked privately (never
# installed: libomp-19-dev conflicts with libomp-22-dev).
exec "$(dirname "${BASH_SOURCE[0]}")/deps-llvm19.sh"
