#!/usr/bin/env bash
# bench-farm-cuda.sh: a CUDA TU for several sm archs through offcc's build
# farm with one worker core, against the client's one core alone.
#
#   scripts/bench-farm-cuda.sh                    # RUNS=3, sm_52,sm_70,sm_80,sm_86
#   RUNS=5 KERNELS=40 NICE=-10 scripts/bench-farm-cuda.sh
#
# The TU: testdata/cuda/toolkit/kernels.cu (kernels with math library
# calls, a device variable, a constant table, a template; the CUDA
# toolkit's headers) followed by $KERNELS generated kernels with math
# calls and their launches, so that ptxas has work of its own. Compiled
# `-x cuda -O2 -c --offload-arch=$ARCHS -j1` (one local slot) with the
# client pinned to the first allowed CPU (`taskset -c CPU0`), the build
# cache off (OFFCC_CACHE=0) and its directory emptied before each run:
#
#   client alone   offcc, no OFFCC_REMOTE_EXEC (and clang-22, for reference)
#   farm           OFFCC_REMOTE_EXEC to a redis-server of the script's own
#                  (loopback, free port, no persistence) with one worker,
#                  `taskset -c CPU1 offcc worker --jobs 1`, signed jobs and
#                  results, sandboxed as deployed: device compiles, the host
#                  compile, ptxas and fatbinary may all go to the worker
#   farm, CUDA     the same, with a worker whose CUDA toolkit differs (a
#   tools here     PATH whose ptxas, fatbinary and nvlink are other
#                  programs): no ptxas or fatbinary job may go to it, as
#                  before offcc sent them (clang and lld jobs only)
#
# Median of $RUNS runs (wall; the client's CPU: the timed command and its
# children; the busy time of the worker's CPU, from /proc/stat, which
# should be near 0 without a worker; the busy time of the client's CPU
# that was not the client's, which should be near 0, else a warning says
# the timings are not clean), the modes alternating, the order reversed every other
# run; each worker is warmed up by an untimed build after it starts. Then
# one traced build of each farm mode (OFFCC_TRACE=1, untimed) says how many
# jobs of each tool ran on the worker, and every object is compared byte
# for byte with the local one. The acceptance figure is the ratio of the
# client-alone median to the farm median (>= 1.7 wanted).
#
# Env: OFFCC (default bin/offcc), CLANG (default /usr/lib/llvm-22/bin/clang),
#      RUNS (default 3), ARCHS (default sm_52,sm_70,sm_80,sm_86), KERNELS
#      (generated kernels, default 120, as bench-farm.sh's HIP TU), REDIS_SERVER, REDIS_CLI (default
#      redis-server, redis-cli on PATH), WAIT_S (how long to wait for the
#      worker to come and go, default 30), NICE (the niceness the client,
#      clang and the worker run at, default 0: on a machine others load,
#      -10 gives them most of their CPUs; needs root).
# Needs redis-server, redis-cli, taskset, ptxas, fatbinary and nvlink on
# PATH (Debian's nvidia-cuda-toolkit: make deps-cuda), and two CPUs (on
# one, client and worker share it and the figures say nothing).
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
RUNS=${RUNS:-3}
ARCHS=${ARCHS:-sm_52,sm_70,sm_80,sm_86}
KERNELS=${KERNELS:-120}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
REDIS_CLI=${REDIS_CLI:-$(command -v redis-cli || true)}
WAIT_S=${WAIT_S:-30}
NICE=${NICE:-0}

die() {
	echo "bench: $*" >&2
	exit 1
}

case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
for v in RUNS WAIT_S; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive integer"
done
[[ $KERNELS =~ ^[0-9]+$ ]] || die "KERNELS=$KERNELS: want a number"
[[ $NICE =~ ^-?[0-9]+$ ]] || die "NICE=$NICE: want a niceness such as -10"
[[ $ARCHS =~ ^sm_[0-9]+[af]?(,sm_[0-9]+[af]?)*$ ]] || die "ARCHS=$ARCHS: want sm archs, comma-separated"
[ -x "$OFFCC" ] || die "$OFFCC not found (run make build)"
[ -x "$CLANG" ] || die "$CLANG not found (run make deps)"
for c in redis-server:"$REDIS_SERVER" redis-cli:"$REDIS_CLI" taskset:"$(command -v taskset || true)" ptxas:"$(command -v ptxas || true)" fatbinary:"$(command -v fatbinary || true)" nvlink:"$(command -v nvlink || true)"; do
	[ -x "${c#*:}" ] || die "${c%%:*} not found (apt-get install redis-server util-linux; make deps-cuda for NVIDIA's tools)"
done
src_base=$repo/testdata/cuda/toolkit/kernels.cu
[ -r "$src_base" ] || die "$src_base not found"

# Nothing from the caller's environment steers offcc.
for v in "${!OFFCC_@}"; do [ "$v" = OFFCC_LLVM_DIR ] || unset "$v"; done
unset MAKEFLAGS MFLAGS

# shellcheck source=scripts/benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

# The CPUs we may use: the client runs on the first, the worker on the
# second.
cpus=()
allowed=$(awk -F':[ \t]*' '/^Cpus_allowed_list/ { print $2 }' /proc/self/status 2>/dev/null || true)
IFS=, read -r -a ranges <<<"${allowed:-0-$(($(nproc) - 1))}"
for r in "${ranges[@]}"; do
	if [[ $r == *-* ]]; then
		for ((c = ${r%-*}; c <= ${r#*-}; c++)); do cpus+=("$c"); done
	else
		cpus+=("$r")
	fi
done
client_cpu=${cpus[0]}
worker_cpu=${cpus[$((1 % ${#cpus[@]}))]}
[ "${#cpus[@]}" -ge 2 ] || echo "bench: one CPU only: client and worker share it" >&2

# --- cleanup ----------------------------------------------------------------
work=""
redis_pid=""
worker_pid=""
port=""

# stop_pid <pid>: SIGTERM, up to 30 s, then SIGKILL to it and its session.
stop_pid() {
	local p=$1 i
	kill -TERM "$p" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true
	fi
	wait "$p" 2>/dev/null || true
}

cleanup() {
	local rc=$?
	set +e
	trap '' INT TERM HUP
	[ -n "$worker_pid" ] && stop_pid "$worker_pid"
	if [ -n "$redis_pid" ]; then
		"$REDIS_CLI" -p "$port" shutdown nosave >/dev/null 2>&1
		stop_pid "$redis_pid"
	fi
	[ -n "$work" ] && rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT
trap 'echo "bench: terminated" >&2; exit 143' TERM
trap 'exit 129' HUP

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench-cuda.XXXXXX")
chmod 0711 "$work"
export OFFCC_CACHE=0 OFFCC_CACHE_DIR="$work/offcc-cache"
# A copy of offcc: a make build meanwhile changes nothing.
mkdir "$work/bin"
cp "$OFFCC" "$work/bin/offcc"
ln -s offcc "$work/bin/offcc++"
OFFCC=$work/bin/offcc
"$OFFCC" key generate bench-client --dir "$work" >/dev/null || die "offcc key generate failed"
"$OFFCC" key generate bench-worker --dir "$work" >/dev/null || die "offcc key generate failed"
mkdir -m 0711 "$work/jobs"
# Another "CUDA toolkit": ptxas, fatbinary and nvlink that are not
# NVIDIA's, first on the PATH of the worker of the third mode.
mkdir "$work/otherkit"
for t in ptxas fatbinary nvlink; do cp "$(type -P true)" "$work/otherkit/$t"; done

# --- the TU -----------------------------------------------------------------
mkdir "$work/tu"
{
	cat "$src_base"
	awk -v n="$KERNELS" 'BEGIN {
	print "// Generated by scripts/bench-farm-cuda.sh: " n " kernels and their launches."
	for (k = 0; k < n; k++) {
		printf "__global__ void gen%d(float *a, const float *b, float s, int n) {\n", k
		printf "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
		printf "  if (i < n) {\n    float x = a[i] * s + b[i] * %d.0f;\n", k
		printf "    for (int j = 0; j < %d; j++)\n      x = sinf(x) * expf(-x * %d.5f) + sqrtf(fabsf(x) + %d.0f);\n", (k % 4) + 2, k, k + 1
		printf "    a[i] = x;\n  }\n}\n"
	}
	print "void gen_launch_all(float *a, float *b, int n) {"
	for (k = 0; k < n; k++)
		printf "  gen%d<<<dim3(n / 64), dim3(64)>>>(a, b, 1.5f, n);\n", k
	print "}"
}'
} >"$work/tu/bench.cu"
flags=(-x cuda -O2 -c "--offload-arch=$ARCHS" bench.cu)
narchs=$(awk -F, '{ print NF }' <<<"$ARCHS")

# --- redis and the worker ---------------------------------------------------
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 40000))
		if ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free TCP port found"
}
port=$(free_port)
mkdir "$work/redis"
"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --protected-mode no \
	--dir "$work/redis" >"$work/redis/log" 2>&1 &
redis_pid=$!
for ((i = 0; i < 100; i++)); do
	[ "$("$REDIS_CLI" -p "$port" ping 2>/dev/null)" = PONG ] && break
	sleep 0.1
done
[ "$("$REDIS_CLI" -p "$port" ping 2>/dev/null)" = PONG ] || die "redis-server did not start: $(cat "$work/redis/log")"
url=redis://127.0.0.1:$port

# start_worker <path prefix>: one worker on the worker CPU, with
# <path prefix> (may be empty) before PATH; waits until status lists it.
start_worker() {
	local pre=$1 i
	setsid env PATH="${pre:+$pre:}$PATH" OFFCC_SIGNING_KEY="$work/bench-worker.key" OFFCC_TRUSTED_CLIENTS="$work/bench-client.pub" \
		nice -n "$NICE" taskset -c "$worker_cpu" "$OFFCC" worker --redis "$url" --jobs 1 --name w1 --dir "$work/jobs" \
		>"$work/worker.log" 2>&1 &
	worker_pid=$!
	for ((i = 0; i < WAIT_S * 10; i++)); do
		"$OFFCC" worker status --redis "$url" 2>/dev/null | grep -q '^w1 ' && return 0
		kill -0 "$worker_pid" 2>/dev/null || die "the worker exited: $(cat "$work/worker.log")"
		sleep 0.1
	done
	die "the worker is not in offcc worker status after ${WAIT_S}s: $(cat "$work/worker.log")"
}
stop_worker() {
	stop_pid "$worker_pid"
	worker_pid=""
	sleep 3.5 # its registration ages out: no client counts it
}

# build <mode> <out>: one build of the TU on the client CPU, cache emptied.
build() {
	local mode=$1 out=$2
	rm -rf "$OFFCC_CACHE_DIR"
	case $mode in
	clang) (cd "$work/tu" && nice -n "$NICE" taskset -c "$client_cpu" "$CLANG" "${flags[@]}" -o "$out") ;;
	local) (cd "$work/tu" && nice -n "$NICE" taskset -c "$client_cpu" "$OFFCC" -j1 "${flags[@]}" -o "$out") ;;
	*) (cd "$work/tu" && env OFFCC_REMOTE_EXEC="$url" OFFCC_SIGNING_KEY="$work/bench-client.key" \
		OFFCC_TRUSTED_WORKERS="$work/bench-worker.pub" nice -n "$NICE" taskset -c "$client_cpu" "$OFFCC" -j1 "${flags[@]}" -o "$out") ;;
	esac
}

# busy <cpu>: the busy time of CPU <cpu> so far, in clock ticks
# (/proc/stat). The worker's CPU time is that of its CPU: /proc/PID/stat
# does not have its jobs' (bubblewrap's monitor exits without reaping the
# sandbox's init, so their time is never added to the worker's children's).
busy() { awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

# timed <file> <mode>: one timed build, appended to <file> (wall user sys),
# and to <file>.other the busy time of the client's CPU that was not the
# client's (another load: the timings are not clean) and the busy time of
# the worker's CPU (its jobs, and any other load there).
timed() {
	local c0 w0 c1 w1
	c0=$(busy "$client_cpu") w0=$(busy "$worker_cpu")
	time_one "$1" build "$2" "$work/tu/$2.o"
	c1=$(busy "$client_cpu") w1=$(busy "$worker_cpu")
	tail -1 "$1" | awk -v c=$((c1 - c0)) -v w=$((w1 - w0)) -v hz="$hz" '{ o = c / hz - $2 - $3; printf "%.3f %.3f\n", (o > 0 ? o : 0), w / hz }' >>"$1.other"
}

# --- runs -------------------------------------------------------------------
echo "bench: $narchs archs ($ARCHS), $KERNELS generated kernels; client on CPU $client_cpu, worker on CPU $worker_cpu; $RUNS runs" >&2
build local "$work/tu/ref.o"
build clang "$work/tu/clang.o"
: >"$work/local.t"
: >"$work/clang.t"
: >"$work/farm.t"
: >"$work/farm-nocuda.t"

# The local modes interleaved with the farm mode, then the farm mode
# without CUDA tools (the worker changes between them: restarting it every
# run would time its start-up).
start_worker ""
build farm "$work/tu/warm.o"
for ((r = 1; r <= RUNS; r++)); do
	if ((r % 2)); then
		timed "$work/local.t" local
		timed "$work/farm.t" farm
		timed "$work/clang.t" clang
	else
		timed "$work/clang.t" clang
		timed "$work/farm.t" farm
		timed "$work/local.t" local
	fi
	echo "bench: run $r/$RUNS: local $(tail -1 "$work/local.t" | cut -d' ' -f1)s, farm $(tail -1 "$work/farm.t" | cut -d' ' -f1)s, clang $(tail -1 "$work/clang.t" | cut -d' ' -f1)s" >&2
done
OFFCC_TRACE=1 build farm "$work/tu/farm.o" 2>"$work/farm.trace"
stop_worker

start_worker "$work/otherkit"
build farm-nocuda "$work/tu/warm.o"
for ((r = 1; r <= RUNS; r++)); do
	timed "$work/farm-nocuda.t" farm-nocuda
	echo "bench: run $r/$RUNS: farm with the CUDA tools here $(tail -1 "$work/farm-nocuda.t" | cut -d' ' -f1)s" >&2
done
OFFCC_TRACE=1 build farm-nocuda "$work/tu/farm-nocuda.o" 2>"$work/farm-nocuda.trace"
stop_worker

for o in farm farm-nocuda local; do
	cmp -s "$work/tu/ref.o" "$work/tu/$o.o" || die "the object of mode $o differs from the local build's"
done

# on_worker <trace>: "tool: count; ..." of the jobs that ran on the worker.
on_worker() {
	awk '/^job / && / worker=/ { n[$2]++ } END { for (t in n) printf "%s: %d; ", t, n[t] }' "$1" | sed 's/; $//'
}
# here <trace>: the same of the clang, ptxas and fatbinary jobs that ran
# on the client.
here() {
	awk '/^job / && !/ worker=/ && /NVPTX::Assembler|fatbinary|clang/ { n[$2]++ } END { for (t in n) printf "%s: %d; ", t, n[t] }' "$1" | sed 's/; $//'
}

# warn_other <name> <file>: a warning when the runs' median other CPU is
# above a tenth of their median wall time.
warn_other() {
	local o w
	o=$(median 1 "$2.other") w=$(median 1 "$2")
	if awk -v o="$o" -v w="$w" 'BEGIN { exit !(o > w / 10) }'; then
		echo "Warning: $1: other CPU on the client's CPU was ${o}s a run (median), against ${w}s of wall: another load ran; the timings are not clean."
	fi
}

lw=$(median 1 "$work/local.t") fw=$(median 1 "$work/farm.t") nw=$(median 1 "$work/farm-nocuda.t") cw=$(median 1 "$work/clang.t")
lc=$(cpu_median "$work/local.t") fc=$(cpu_median "$work/farm.t") nc=$(cpu_median "$work/farm-nocuda.t") cc=$(cpu_median "$work/clang.t")
echo
echo "CUDA TU ($narchs archs: $ARCHS; testdata/cuda/toolkit/kernels.cu and $KERNELS generated kernels), -O2 -c -j1, client on one CPU, build cache off; median of $RUNS runs, $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), niceness $NICE."
echo
echo "| mode | wall (s) | client CPU (s) | worker's CPU busy (s) | other CPU on the client's (s) | speed-up over the client alone |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| clang-22, one CPU | $cw | $cc | $(median 2 "$work/clang.t.other") | $(median 1 "$work/clang.t.other") | $(ratio "$lw" "$cw") |"
echo "| offcc, the client alone (one CPU) | $lw | $lc | $(median 2 "$work/local.t.other") | $(median 1 "$work/local.t.other") | 1.000 |"
echo "| offcc + 1 worker CPU, CUDA tools here (clang and lld jobs only) | $nw | $nc | $(median 2 "$work/farm-nocuda.t.other") | $(median 1 "$work/farm-nocuda.t.other") | $(ratio "$lw" "$nw") |"
echo "| offcc + 1 worker CPU, ptxas and fatbinary too | $fw | $fc | $(median 2 "$work/farm.t.other") | $(median 1 "$work/farm.t.other") | $(ratio "$lw" "$fw") |"
echo
for m in clang local farm-nocuda farm; do warn_other "$m" "$work/$m.t"; done
echo "Jobs on the worker (a traced build of each farm mode): CUDA tools too: $(on_worker "$work/farm.trace"); CUDA tools here: $(on_worker "$work/farm-nocuda.trace")."
echo "Jobs on the client: CUDA tools too: $(here "$work/farm.trace"); CUDA tools here: $(here "$work/farm-nocuda.trace")."
echo "Objects: the farm builds' are the local build's, byte for byte."
