#!/usr/bin/env bash
# bench-farm.sh: offcc's build farm (offcc worker, OFFCC_REMOTE_EXEC) vs a
# local build, on the HIP TU of bench-hip.sh and on a small multi-TU
# Makefile project, with each worker on its own simulated host.
#
#   RUNS=5 scripts/bench-farm.sh
#   RUNS=3 KERNELS=40 TUS=4 scripts/bench-farm.sh        # a quick try
#   PLUMBING_ONLY=1 scripts/bench-farm.sh                 # set up, check, tear down
#
# Setup: a redis-server of its own (free port, no persistence, protected
# mode off, in the scratch directory). When run as root where `ip netns`
# works, worker i (1..WORKERS_MAX) runs in network namespace
# offccbench-w$i, reached over a veth pair (10.201.$i.1/24 on the host
# side, 10.201.$i.2/24 inside; redis listens on 127.0.0.1 and on every
# 10.201.$i.1), as
#   ip netns exec offccbench-w$i taskset -c CORE offcc worker \
#     --redis redis://10.201.$i.1:PORT --jobs 1 --name w$i
# (with LINK_DELAY, tc netem delays each direction of each veth by it).
# Elsewhere (not root, no netns) the workers run on the loopback. The
# client (every timed command) runs on the first CPU, `taskset -c CPU0`;
# worker i on allowed CPU number i modulo their count (on 2 CPUs: the
# client on one, worker 1 on the other). Every namespace must reach redis
# (redis-cli ping from inside) and `offcc worker status` must list the
# workers before anything is timed. Everything started or made is removed
# at exit, Ctrl-C included.
#
# 1. The TU of bench-hip.sh ($KERNELS kernels and their launches, including
#    testdata/hip/hip_min.h), `-x hip -O2 -c --offload-arch=$ARCHS
#    -nogpulib -nogpuinc`, OFFCC_CACHE=0, median of $RUNS runs, the
#    situations alternating (order reversed every other run): offcc local
#    (no OFFCC_REMOTE_EXEC), clang-22, offcc with OFFCC_REMOTE_EXEC and 0
#    workers, and with 1..$WORKERS_MAX workers. Wall, client CPU (the
#    timed command and its children), worker CPU (the workers' own and
#    their reaped children's, from /proc/PID/stat) and other CPU (the
#    machine's busy time from /proc/stat less those two: redis, this
#    script, and whatever else runs; it should be near 0).
# 2. One traced local build and one traced farm build ($WORKERS_MAX
#    workers, OFFCC_JOB_TRACE; untimed, they are the warm-up): per-job
#    times, the transfers of every job that ran on a worker, and a model
#    for $MODEL_ARCHS archs on as many workers (python3). These builds (and
#    a farm build with 0 workers, and clang-22's) fix the CUID
#    (-cuid=offcc-bench-farm; clang's default CUID hashes the output name), and
#    their objects are compared byte for byte with the local one's.
# 3. A generated Makefile project: $TUS HIP files of $TU_KERNELS kernels
#    each (and a shared header), objects only, `make -j$MAKE_JOBS
#    CXX=...` pinned to the client CPU after make clean: clang-22, offcc
#    local, offcc farm with 1..$WORKERS_MAX workers.
#
# 4. What security costs: the TU's farm build with 1 worker, as deployed
#    (signed jobs and results, bubblewrap and Landlock), with the sandbox
#    off, and with neither; wall medians and the worker's per-job run time
#    from a traced build of each.
# 5. A heavy OpenMP TU ($OMP_KERNELS target regions, the TU of
#    bench-multiarch.sh), `-fopenmp -O2 -c --offload-arch=$OMP_ARCHS
#    -nogpulib`: its host front end and device compiles go to workers with
#    offcc's stable kernel names. offcc local (0 worker cores), offcc with
#    OFFCC_REMOTE_EXEC and 0 workers, and with 1..$WORKERS_MAX workers,
#    median of $RUNS runs, alternating; a traced local and farm build
#    (untimed; objects compared byte for byte) give the per-job times and
#    where each job ran.
#
# 6. What the bounds cost: the HIP TU and the OpenMP TU, offcc local and
#    with 1 worker as deployed (each job's directory a tmpfs bounded in
#    bytes and files, the client racing slow jobs locally), against the
#    same worker without the per-job tmpfs (OFFCC_SANDBOX_DISABLE=tmpfs)
#    and the client without races (OFFCC_REMOTE_EXEC_RACE=0); alternating,
#    each mode's worker warmed up by an untimed build after it starts,
#    median of $RUNS runs: the share of the farm's speed-up they cost.
#
# Keys: the script makes a client and a worker key pair (offcc key
# generate) in its scratch directory; the workers' job directories are
# there too (mode 0711: a root worker runs jobs as other uids).
#
# Env: OFFCC (default bin/offcc), CLANG (default /usr/lib/llvm-22/bin/clang),
#      KERNELS (kernels of the TU, default 120), ARCHS (default
#      gfx906,gfx908,gfx90a,gfx1030), RUNS (default 5), WORKERS_MAX
#      (default 1), TUS (files of the project, default 6), TU_KERNELS
#      (kernels per project file, default KERNELS/4), MAKE_JOBS (default
#      2), MODEL_ARCHS (archs and workers of the model, default 10),
#      NETNS (auto, 1: namespaces or fail, 0: loopback; default auto),
#      LINK_DELAY (a netem delay such as 2ms, each direction; default none;
#      needs namespaces and the kernel's sch_netem), REDIS_SERVER,
#      REDIS_CLI (default redis-server, redis-cli on PATH), WAIT_S (how
#      long to wait for workers to come and go, default 60), CMD_TIMEOUT
#      (limit of one timed command, seconds, default 600), TRACE_DIR (keep
#      the two trace JSON files there), PLUMBING_ONLY (1: set up redis,
#      namespaces and veths, check them, and stop; needs no worker),
#      PYTHON (default python3 on PATH; empty: none), OFFCC_LLVM_DIR
#      (passed on to client and workers; every other
#      OFFCC_* variable of the caller is dropped), OMP_KERNELS (target
#      regions of the OpenMP TU, default 120), OMP_ARCHS (default
#      gfx90a,gfx1030,gfx942,sm_80), SECTIONS (which to run, of hip
#      (sections 1 and 2), security, project, openmp, bounds;
#      comma-separated, default all).
# Needs redis-server, redis-cli, taskset, make; python3 for section 2.
# Client and workers run a copy of OFFCC taken at the start (a make build
# meanwhile changes nothing). Prints Markdown tables (medians), with a
# warning under a table whose runs had other CPU above a tenth of their
# wall time (another load on the machine: the timings are not clean).
set -euo pipefail
start_dir=$PWD
cd "$(dirname "$0")/.."
repo=$PWD

OFFCC=${OFFCC:-$PWD/bin/offcc}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
KERNELS=${KERNELS:-120}
ARCHS=${ARCHS:-gfx906,gfx908,gfx90a,gfx1030}
RUNS=${RUNS:-5}
WORKERS_MAX=${WORKERS_MAX:-1}
TUS=${TUS:-6}
TU_KERNELS=${TU_KERNELS:-$((KERNELS / 4 > 0 ? KERNELS / 4 : 1))}
MAKE_JOBS=${MAKE_JOBS:-2}
MODEL_ARCHS=${MODEL_ARCHS:-10}
NETNS=${NETNS:-auto}
LINK_DELAY=${LINK_DELAY:-}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
REDIS_CLI=${REDIS_CLI:-$(command -v redis-cli || true)}
WAIT_S=${WAIT_S:-60}
CMD_TIMEOUT=${CMD_TIMEOUT:-600}
TRACE_DIR=${TRACE_DIR:-}
PLUMBING_ONLY=${PLUMBING_ONLY:-0}
PYTHON=${PYTHON-$(command -v python3 || true)}
OMP_KERNELS=${OMP_KERNELS:-120}
OMP_ARCHS=${OMP_ARCHS:-gfx90a,gfx1030,gfx942,sm_80}
SECTIONS=${SECTIONS:-hip,security,project,openmp,bounds}

die() {
	echo "bench: $*" >&2
	exit 1
}

# We cd around: relative paths are the caller's.
case $OFFCC in /*) ;; *) OFFCC=$start_dir/$OFFCC ;; esac
case $CLANG in /*) ;; *) CLANG=$start_dir/$CLANG ;; esac
case $TRACE_DIR in /* | "") ;; *) TRACE_DIR=$start_dir/$TRACE_DIR ;; esac
for v in RUNS KERNELS TUS TU_KERNELS MAKE_JOBS MODEL_ARCHS WAIT_S CMD_TIMEOUT OMP_KERNELS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: want a positive integer"
done
if ! [[ $WORKERS_MAX =~ ^[1-9][0-9]*$ ]] || [ "$WORKERS_MAX" -gt 250 ]; then die "WORKERS_MAX=$WORKERS_MAX: want 1 to 250"; fi
case $NETNS in auto | 0 | 1) ;; *) die "NETNS=$NETNS: want auto, 0 or 1" ;; esac
IFS=, read -r -a sections <<<"$SECTIONS"
for s in "${sections[@]}"; do
	case $s in hip | security | project | openmp | bounds) ;; *) die "SECTIONS=$SECTIONS: $s is not one of hip, security, project, openmp, bounds" ;; esac
done
# want <section>: whether SECTIONS names it.
want() { [[ ",$SECTIONS," == *",$1,"* ]]; }
[ "$RUNS" -ge 5 ] || echo "bench: RUNS=$RUNS: fewer than 5 runs, for trying the script only" >&2
[ -x "$OFFCC" ] || die "$OFFCC not found (run make build)"
[ -x "$CLANG" ] || die "$CLANG not found (run make deps)"
for c in redis-server:"$REDIS_SERVER" redis-cli:"$REDIS_CLI" taskset:"$(command -v taskset || true)" make:"$(command -v make || true)" timeout:"$(command -v timeout || true)"; do
	[ -x "${c#*:}" ] || die "${c%%:*} not found (apt-get install redis-server util-linux make coreutils, or set REDIS_SERVER / REDIS_CLI)"
done
[ -r testdata/hip/hip_min.h ] || die "testdata/hip/hip_min.h not found in $repo"
if [ -z "$PYTHON" ]; then
	echo "bench: python3 not found: the per-job tables and the model (section 2) are left out" >&2
fi

# Nothing from the caller's environment steers offcc or make; every build
# runs without the build cache (each run does all the work).
# (OFFCC_LLVM_DIR, which picks the toolchain, stays, for the workers too.)
for v in "${!OFFCC_@}"; do [ "$v" = OFFCC_LLVM_DIR ] || unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES CC CXX CFLAGS CXXFLAGS CPPFLAGS LDFLAGS

# shellcheck source=scripts/benchlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/benchlib.sh"

# The CPUs we may use (Cpus_allowed_list, e.g. "0-1" or "2,4-5"): the
# client runs on the first, worker i on number i modulo their count.
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
ncpu=${#cpus[@]}
client_cpu=${cpus[0]}
worker_cpu() { echo "${cpus[$(($1 % ncpu))]}"; }
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

# --- cleanup: everything this script starts or makes ------------------------
work=""
redis_pid=""
port=""
wpid=() # wpid[i]: worker i's pid (it leads its own session)
made_ns=()
made_links=()
nw=0 # workers running: w1 .. w$nw

# kill_session <pid>: SIGKILL to the session <pid> leads (the process and
# what it started), when <pid> still leads one.
kill_session() {
	local p=$1 st
	st=$(cat "/proc/$p/stat" 2>/dev/null) || return 0
	st=${st##*) }
	read -r -a f <<<"$st"
	if [ "${f[3]:-}" = "$p" ]; then kill -KILL -- "-$p" 2>/dev/null || true; fi
	kill -KILL "$p" 2>/dev/null || true
}

# stop_pid <pid> <seconds>: SIGTERM, up to <seconds> for it to exit, then
# SIGKILL to its session. Returns the exit status (or 137).
stop_pid() {
	local p=$1 limit=$2 i rc=0
	kill -TERM "$p" 2>/dev/null || true
	for ((i = 0; i < limit * 10; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		echo "bench: pid $p still running ${limit}s after SIGTERM: SIGKILL" >&2
		kill_session "$p"
	fi
	wait "$p" 2>/dev/null || rc=$?
	kill_session "$p" # what it left behind in its session
	return "$rc"
}

cleanup() {
	local rc=$? i p
	set +e
	trap '' INT TERM HUP
	for i in $(printf '%s\n' "${!wpid[@]}" | sort -rn); do
		[ -n "${wpid[i]:-}" ] || continue
		stop_pid "${wpid[i]}" 30 >/dev/null 2>&1
		wpid[i]=""
	done
	if [ -n "$redis_pid" ]; then
		"$REDIS_CLI" -p "$port" shutdown nosave >/dev/null 2>&1
		stop_pid "$redis_pid" 10 >/dev/null 2>&1
	fi
	for ns in "${made_ns[@]}"; do
		# Anything still inside (it came from a worker we started).
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$ns" 2>/dev/null || echo "bench: could not delete network namespace $ns" >&2
	done
	for l in "${made_links[@]}"; do
		ip link show "$l" >/dev/null 2>&1 && ip link del "$l" 2>/dev/null
	done
	made_ns=()
	made_links=()
	[ -n "$work" ] && rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT
trap 'echo "bench: terminated" >&2; exit 143' TERM
trap 'exit 129' HUP

work=$(mktemp -d "${TMPDIR:-/tmp}/offcc-bench.XXXXXX")
export OFFCC_CACHE=0 OFFCC_CACHE_DIR="$work/offcc-cache"
# A copy of offcc, client and workers alike: a make build during the
# benchmark changes nothing.
offcc_src=$OFFCC
mkdir "$work/bin"
cp "$OFFCC" "$work/bin/offcc"
OFFCC=$work/bin/offcc
# Keys: the client signs its jobs, the workers their results.
"$OFFCC" key generate bench-client --dir "$work" >/dev/null || die "offcc key generate failed"
"$OFFCC" key generate bench-worker --dir "$work" >/dev/null || die "offcc key generate failed"
export OFFCC_SIGNING_KEY=$work/bench-client.key OFFCC_TRUSTED_WORKERS=$work/bench-worker.pub
# The workers' job directories: reachable by the uids a root worker runs
# its jobs as.
mkdir -m 0711 "$work/jobs"
chmod 0711 "$work"
# worker_mode: how start_worker starts workers: "secure" (signed jobs and
# results, sandboxed), "nosandbox" (signed, OFFCC_SANDBOX_DISABLE and
# --insecure-no-sandbox) or "insecure" (neither; the client then runs
# with OFFCC_REMOTE_EXEC_INSECURE=1 and no keys): section 4; "nobounds"
# (secure, without the per-job tmpfs): section 6.
worker_mode=secure
worker_cmd() {
	local i=$1
	local -a e=(env OFFCC_SIGNING_KEY="$work/bench-worker.key" OFFCC_TRUSTED_CLIENTS="$work/bench-client.pub")
	local -a f=()
	case $worker_mode in
	nosandbox) e+=(OFFCC_SANDBOX_DISABLE=bwrap,landlock) f+=(--insecure-no-sandbox) ;;
	nobounds) e+=(OFFCC_SANDBOX_DISABLE=tmpfs) ;;
	insecure) e=(env OFFCC_SANDBOX_DISABLE=bwrap,landlock OFFCC_SIGNING_KEY= OFFCC_TRUSTED_CLIENTS=) f+=(--insecure-no-sandbox --insecure-unsigned) ;;
	esac
	wcmd=("${e[@]}" "$OFFCC" worker --redis "$(worker_url "$i")" --jobs 1 --name "w$i" --dir "$work/jobs" "${f[@]}")
}

# --- the TU -----------------------------------------------------------------
inc=$repo/testdata/hip
# gen_hip <n> <prefix> <title>: a HIP TU of <n> kernels <prefix>0 .. and a
# function launching them all, as bench-hip.sh generates it.
gen_hip() {
	awk -v n="$1" -v pre="$2" -v title="$3" 'BEGIN {
	print "// Generated by scripts/bench-farm.sh: " title
	print "#include \"hip_min.h\""
	for (k = 0; k < n; k++)
		printf "__global__ void %s%d(float *a, const float *b, float s, int n) {\n  for (int i = 0; i < n; i++)\n    a[i] = a[i] * s + b[i] * %d.0f + (float)(i %% %d);\n}\n", pre, k, k, k + 3
	print "void " pre "launch_all(float *a, float *b, int n) {"
	for (k = 0; k < n; k++)
		printf "  %s%d<<<dim3(n / 64), dim3(64)>>>(a, b, 1.5f, n);\n", pre, k
	print "}"
}'
}
mkdir "$work/tu"
gen_hip "$KERNELS" k "$KERNELS kernels and their launches." >"$work/tu/bench.hip"
flags=(-x hip -O2 -c "--offload-arch=$ARCHS" -nogpulib -nogpuinc "-I$inc")
narchs=$(awk -F, '{ print NF }' <<<"$ARCHS")

# --- redis ------------------------------------------------------------------
# free_port: a TCP port nothing listens on.
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 40000))
		if command -v ss >/dev/null; then
			[ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return; }
		elif ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free TCP port found"
}

# start_redis <bind addresses...>: redis-server in $work/redis on a free
# port ($port, $redis_pid), up when it answers PING.
start_redis() {
	local try i
	mkdir -p "$work/redis"
	for ((try = 1; try <= 5; try++)); do
		port=$(free_port)
		# Its own session: a Ctrl-C in the terminal reaches the script, which
		# stops the workers before redis.
		setsid "$REDIS_SERVER" --port "$port" --bind "$@" --protected-mode no \
			--save '' --appendonly no --dir "$work/redis" --daemonize no \
			--logfile "$work/redis/redis.log" </dev/null >/dev/null 2>&1 &
		redis_pid=$!
		for ((i = 0; i < 100; i++)); do
			kill -0 "$redis_pid" 2>/dev/null || break
			[ "$("$REDIS_CLI" -p "$port" ping 2>/dev/null)" = PONG ] && return 0
			sleep 0.1
		done
		stop_pid "$redis_pid" 5 >/dev/null 2>&1 || true
		redis_pid=""
		echo "bench: redis-server on port $port did not come up (try $try): $(tail -2 "$work/redis/redis.log" 2>/dev/null | tr '\n' ' ')" >&2
	done
	die "redis-server would not start (log: above)"
}

# --- simulated hosts ----------------------------------------------------------
ns_name() { echo "offccbench-w$1"; }
host_ip() { echo "10.201.$1.1"; }
ns_ip() { echo "10.201.$1.2"; }

# setup_netns: namespace, veth pair and addresses of every worker; returns
# nonzero at the first step that fails, why says what failed, conflict=1
# when what is in the way is a namespace, link or address (of another run,
# or left by a killed one: never a reason to fall back to the loopback).
# (Not in a subshell: made_ns and made_links must reach cleanup.)
setup_netns() {
	local i ns h n out
	[ "$(id -u)" = 0 ] || { why="not root"; return 1; }
	command -v ip >/dev/null || { why="ip (iproute2) not found"; return 1; }
	ip netns list >/dev/null 2>&1 || { why="ip netns does not work here"; return 1; }
	for ((i = 1; i <= WORKERS_MAX; i++)); do
		ns=$(ns_name "$i") h=offccb-h$i n=offccb-n$i
		if ip netns list | awk '{ print $1 }' | grep -qx "$ns"; then
			why="network namespace $ns exists (another bench-farm.sh running? else delete it: ip netns del $ns)"
			conflict=1
			return 1
		fi
		if ip link show "$h" >/dev/null 2>&1; then
			why="link $h exists (another bench-farm.sh running? else: ip link del $h)"
			conflict=1
			return 1
		fi
		if ip -o -4 addr show | grep -q " 10\.201\.$i\."; then
			why="10.201.$i.0/24 is in use here: $(ip -o -4 addr show | grep " 10\.201\.$i\." | head -1)"
			conflict=1
			return 1
		fi
		out=$(ip netns add "$ns" 2>&1) || { why="ip netns add $ns: $out"; return 1; }
		made_ns+=("$ns")
		out=$(ip link add "$h" type veth peer name "$n" 2>&1) || { why="ip link add $h type veth: $out"; return 1; }
		made_links+=("$h")
		out=$({ ip link set "$n" netns "$ns" &&
			ip addr add "$(host_ip "$i")/24" dev "$h" &&
			ip link set "$h" up &&
			ip -n "$ns" addr add "$(ns_ip "$i")/24" dev "$n" &&
			ip -n "$ns" link set "$n" up &&
			ip -n "$ns" link set lo up; } 2>&1) || { why="veth $h/$n: $out"; return 1; }
		if [ -n "$LINK_DELAY" ]; then
			out=$({ tc qdisc add dev "$h" root netem delay "$LINK_DELAY" &&
				ip netns exec "$ns" tc qdisc add dev "$n" root netem delay "$LINK_DELAY"; } 2>&1) ||
				{ why="tc qdisc add ... netem delay $LINK_DELAY: $out (no sch_netem in this kernel?)"; return 1; }
		fi
	done
}

# teardown_netns: what setup_netns made (for the fallback).
teardown_netns() {
	local ns l
	for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
	for l in "${made_links[@]}"; do ip link del "$l" 2>/dev/null || true; done
	made_ns=()
	made_links=()
}

use_netns=0
why=""
conflict=0
if [ "$NETNS" != 0 ]; then
	if setup_netns; then
		use_netns=1
	else
		teardown_netns
		[ "$conflict" = 0 ] || die "$why"
		[ "$NETNS" = 1 ] && die "NETNS=1: $why"
		[ -z "$LINK_DELAY" ] || die "LINK_DELAY=$LINK_DELAY: $why"
		echo "bench: no network namespaces ($why): workers on the loopback" >&2
	fi
elif [ -n "$LINK_DELAY" ]; then
	die "LINK_DELAY=$LINK_DELAY needs network namespaces (NETNS=0)"
fi

binds=(127.0.0.1)
if [ "$use_netns" = 1 ]; then
	for ((i = 1; i <= WORKERS_MAX; i++)); do binds+=("$(host_ip "$i")"); done
fi
start_redis "${binds[@]}"
url=redis://127.0.0.1:$port
# worker_url <i>: the redis URL worker i uses.
worker_url() {
	if [ "$use_netns" = 1 ]; then echo "redis://$(host_ip "$1"):$port"; else echo "$url"; fi
}
# in_host <i> <cmd...>: runs cmd on worker i's simulated host.
in_host() {
	local i=$1
	shift
	if [ "$use_netns" = 1 ]; then ip netns exec "$(ns_name "$i")" "$@"; else "$@"; fi
}

# Every simulated host must reach redis.
for ((i = 1; i <= WORKERS_MAX; i++)); do
	h=127.0.0.1
	[ "$use_netns" = 1 ] && h=$(host_ip "$i")
	pong=$(in_host "$i" "$REDIS_CLI" -h "$h" -p "$port" ping 2>&1) || true
	[ "$pong" = PONG ] || die "redis at $h:$port unreachable from worker $i's host ($( [ "$use_netns" = 1 ] && ns_name "$i" || echo loopback)): $pong"
	if [ "$use_netns" = 1 ]; then
		# And only over the veth: the host's loopback is not the namespace's.
		iso="the host's 127.0.0.1:$port unreachable from inside"
		if [ "$(in_host "$i" "$REDIS_CLI" -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then
			iso="**the host's 127.0.0.1:$port answers from inside: not isolated**"
		fi
		echo "bench: $(ns_name "$i"): redis-cli -h $h -p $port ping: $pong; $iso; links: $(ip -n "$(ns_name "$i")" -br link | awk '{ printf "%s%s", s, $1; s = " " }')" >&2
	fi
done
if [ "$use_netns" = 1 ]; then
	hosts="$WORKERS_MAX network namespace(s) offccbench-w1.. over veth pairs 10.201.i.1 <-> 10.201.i.2${LINK_DELAY:+, netem delay $LINK_DELAY each way}"
else
	hosts="the loopback (no network namespaces)"
fi
echo "bench: redis-server pid $redis_pid on port $port (bind ${binds[*]}); worker hosts: $hosts" >&2

if [ "$PLUMBING_ONLY" = 1 ]; then
	echo "bench: PLUMBING_ONLY=1: redis and the worker hosts are up and reachable; tearing down" >&2
	exit 0
fi

# --- workers ------------------------------------------------------------------
help=$("$OFFCC" worker --help 2>&1) || die "$OFFCC has no worker subcommand (\`offcc worker --help\` failed: $(head -2 <<<"$help" | tr '\n' ' '))"

# status: `offcc worker status`'s JSON ("" on failure).
status() { "$OFFCC" worker status --redis "$url" --json 2>/dev/null || true; }
# status_text: its plain form, for messages.
status_text() { "$OFFCC" worker status --redis "$url" 2>&1 || true; }

# farm_state: "<live workers, sorted, comma-separated or -> <queued>
# <running>" from the status: the workers that serve (not draining), the
# jobs queued and running over all toolchains' queues plus those the
# workers run. From --json with python3, else from the plain listing.
farm_state() {
	if [ -n "$PYTHON" ]; then
		status | "$PYTHON" -c '
import json, sys
try:
    d = json.load(sys.stdin)
    ws = [w for w in d.get("workers") or [] if not w.get("draining")]
    qs = d.get("queues") or []
    names = sorted(str(w.get("name")) for w in ws)
    run = sum(int(q.get("running") or 0) for q in qs) + sum(int(w.get("running") or 0) for w in ws)
    print(",".join(names) or "-", sum(int(q.get("queued") or 0) for q in qs), run)
except Exception:
    print("? ? ?")
' 2>/dev/null || echo "? ? ?"
	else
		# farm S: N workers / WORKER HOST TOOLCHAIN SLOTS RUNNING ... STATE
		# (sorted by name) / toolchain T: Q queued, R running
		status_text | awk '
			/^toolchain / { for (i = 1; i < NF; i++) { if ($(i+1) ~ /^queued/) q += $i; if ($(i+1) ~ /^running/) r += $i }; next }
			/^WORKER[ \t]/ { t = 1; next }
			t && NF >= 10 { if ($NF != "draining") names = names (names == "" ? "" : ",") $1; r += $5 }
			END { printf "%s %d %d\n", (names == "" ? "-" : names), q, r }'
	fi
}

# want_names <k>: "w1,w2,...,wk" sorted as farm_state sorts, "-" for none.
want_names() {
	local k=$1 i
	[ "$k" -gt 0 ] || { echo -; return; }
	for ((i = 1; i <= k; i++)); do echo "w$i"; done | LC_ALL=C sort | paste -sd, -
}

# wait_workers <k>: until status lists exactly w1..wk, nothing queued and
# nothing running.
wait_workers() {
	local k=$1 want st i
	want=$(want_names "$k")
	for ((i = 0; i < WAIT_S * 5; i++)); do
		st=$(farm_state)
		[ "$st" = "$want 0 0" ] && return 0
		check_workers
		sleep 0.2
	done
	echo "bench: after ${WAIT_S}s, offcc worker status shows (workers queued running) \"$st\", want \"$want 0 0\":" >&2
	status_text >&2
	for ((i = 1; i <= nw; i++)); do
		echo "bench: worker w$i log (last lines):" >&2
		tail -5 "$work/w$i.log" >&2
	done
	exit 1
}

# check_workers: every worker we started is alive.
check_workers() {
	local i
	for ((i = 1; i <= nw; i++)); do
		if ! kill -0 "${wpid[i]}" 2>/dev/null; then
			local rc=0
			wait "${wpid[i]}" 2>/dev/null || rc=$?
			wpid[i]=""
			echo "bench: worker w$i exited (status $rc); its log:" >&2
			tail -20 "$work/w$i.log" >&2
			exit 1
		fi
	done
}

start_worker() {
	local i=$1 cpu
	cpu=$(worker_cpu "$i")
	echo "== start $(date +%T)" >>"$work/w$i.log"
	# Its own session (setsid execs, no fork: $! is the worker), so that a
	# Ctrl-C in the terminal reaches the script, which stops it.
	worker_cmd "$i"
	if [ "$use_netns" = 1 ]; then
		setsid ip netns exec "$(ns_name "$i")" taskset -c "$cpu" "${wcmd[@]}" </dev/null >>"$work/w$i.log" 2>&1 &
	else
		setsid taskset -c "$cpu" "${wcmd[@]}" </dev/null >>"$work/w$i.log" 2>&1 &
	fi
	wpid[i]=$!
}

stop_worker() {
	local i=$1 rc=0
	stop_pid "${wpid[i]}" 60 || rc=$?
	wpid[i]=""
	[ "$rc" = 0 ] || echo "bench: worker w$i exited with status $rc after SIGTERM (want 0); log: $(tail -3 "$work/w$i.log" | tr '\n' ' ')" >&2
}

# set_workers <k>: w1..wk running (and listed by status), no others.
set_workers() {
	local k=$1 i
	for ((i = nw; i > k; i--)); do stop_worker "$i"; done
	for ((i = nw + 1; i <= k; i++)); do start_worker "$i"; done
	nw=$k
	wait_workers "$k"
}

# worker_ticks: CPU clock ticks of the running workers and their jobs. A
# job in bubblewrap is not reaped into its worker's times (bwrap's
# namespace init is not waited for), so where no worker shares the
# client's CPU it is the busy time of the CPUs the workers are pinned to
# (/proc/stat; a little of redis may run there too), else the workers'
# own times and their reaped children's (utime stime cutime cstime).
worker_ticks() {
	local i s=0 st
	if ((ncpu > 1)); then
		local -A on=()
		for ((i = 1; i <= WORKERS_MAX; i++)); do on[$(worker_cpu "$i")]=1; done
		if [ -z "${on[$client_cpu]:-}" ]; then
			awk -v list="${!on[*]}" 'BEGIN { n = split(list, c, " "); for (i = 1; i <= n; i++) want["cpu" c[i]] = 1 }
				($1 in want) { s += $2 + $3 + $4 + $7 + $8 + $9 } END { print s + 0 }' /proc/stat
			return
		fi
	fi
	for ((i = 1; i <= nw; i++)); do
		st=$(cat "/proc/${wpid[i]}/stat" 2>/dev/null) || continue
		st=${st##*) }
		read -r -a f <<<"$st"
		s=$((s + f[11] + f[12] + f[13] + f[14]))
	done
	echo "$s"
}

# busy_ticks: CPU clock ticks the whole machine spent busy (/proc/stat:
# user nice system irq softirq steal).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# t <name>: a file of time_one lines; t <name>.w: the workers' CPU seconds;
# t <name>.o: the CPU seconds of everything else (busy time of the machine
# less the client's and the workers': redis, this script, other users).
t() { echo "$work/t.$1"; }

# timed <name> <cmd...>: one timed run, on the client CPU, with the
# workers' CPU time of it and the rest of the machine's.
timed() {
	local n=$1 w0 w1 b0 b1
	shift
	w0=$(worker_ticks) b0=$(busy_ticks)
	time_one "$(t "$n")" timeout --foreground -k 10 "$CMD_TIMEOUT" taskset -c "$client_cpu" "$@"
	w1=$(worker_ticks) b1=$(busy_ticks)
	awk -v a="$w0" -v b="$w1" -v hz="$hz" 'BEGIN { printf "%.3f\n", (b - a) / hz }' >>"$(t "$n").w"
	tail -1 "$(t "$n")" | awk -v a="$b0" -v b="$b1" -v w="$(tail -1 "$(t "$n").w")" -v hz="$hz" '{
		o = (b - a) / hz - $2 - $3 - w; printf "%.3f\n", (o > 0 ? o : 0) }' >>"$(t "$n").o"
	check_workers
}
last() { tail -1 "$(t "$1")" | cut -d' ' -f1; }

# untimed <what> <cmd...>: a build on the client CPU that is not timed.
untimed() {
	local what=$1
	shift
	timeout --foreground -k 10 "$CMD_TIMEOUT" taskset -c "$client_cpu" "$@" >"$work/untimed.log" 2>&1 || {
		echo "bench: $what failed: $*" >&2
		cat "$work/untimed.log" >&2
		exit 1
	}
	check_workers
}
same() { if cmp -s "$1" "$2"; then echo "identical"; else echo "**different**"; fi; }
placement="client on CPU $client_cpu"
for ((i = 1; i <= WORKERS_MAX; i++)); do placement+=", w$i on CPU $(worker_cpu "$i")"; done

# --- 1. the TU: warm-up and traces (untimed), then the timed runs --------------
if want hip; then
cd "$work/tu"
echo "bench: $KERNELS HIP kernels, --offload-arch=$ARCHS; $placement; $RUNS runs" >&2
set_workers 0
# The untimed builds fix the CUID (clang's default hashes the output name,
# which differs between them): their objects must be byte for byte the same.
cuid=-cuid=offcc-bench-farm
untimed "clang-22 warm-up" "$CLANG" "${flags[@]}" "$cuid" bench.hip -o clang.o
untimed "traced local build" env OFFCC_JOB_TRACE="$work/local.json" "$OFFCC" "${flags[@]}" "$cuid" bench.hip -o local.o
untimed "farm build with 0 workers" env OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${flags[@]}" "$cuid" bench.hip -o farm0.o
wait_workers 0
set_workers "$WORKERS_MAX"
untimed "traced farm build with $WORKERS_MAX worker(s)" env OFFCC_JOB_TRACE="$work/farm.json" OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${flags[@]}" "$cuid" bench.hip -o farm.o
wait_workers "$WORKERS_MAX"
if [ -n "$TRACE_DIR" ]; then
	mkdir -p "$TRACE_DIR"
	cp "$work/local.json" "$TRACE_DIR/bench-farm-local.json"
	cp "$work/farm.json" "$TRACE_DIR/bench-farm-farm$WORKERS_MAX.json"
fi
objcheck="with \`$cuid\` (untimed builds), the object of the farm build with $WORKERS_MAX worker(s) and the local one are $(same local.o farm.o); farm with 0 workers and local: $(same local.o farm0.o); clang-22 and offcc local: $(same clang.o local.o)"

# situations <run>: the order of run <run>: local, clang, farm 0..max; the
# reverse every other run (so the workers change least often).
situations() {
	local k list="local clang"
	for ((k = 0; k <= WORKERS_MAX; k++)); do list+=" farm$k"; done
	if (($1 % 2)); then echo "$list"; else tr ' ' '\n' <<<"$list" | tac | paste -sd' ' -; fi
}
for ((r = 1; r <= RUNS; r++)); do
	line=""
	for s in $(situations "$r"); do
		case $s in
		local)
			[ "$nw" = 0 ] || set_workers 0
			timed local "$OFFCC" "${flags[@]}" bench.hip -o out.o
			;;
		clang)
			[ "$nw" = 0 ] || set_workers 0
			timed clang "$CLANG" "${flags[@]}" bench.hip -o out.o
			;;
		farm*)
			set_workers "${s#farm}"
			timed "$s" env OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${flags[@]}" bench.hip -o out.o
			wait_workers "${s#farm}" # nothing left queued or running
			;;
		esac
		line+="${line:+, }$s $(last "$s")s"
	done
	echo "bench: run $r/$RUNS: $line" >&2
done
fi

# --- 4. what security costs: one worker, secure / no sandbox / insecure ----------
# sec_build <mode> <run>: a timed farm build of the TU with one worker in
# <mode>, and (run 1) a traced one for the workers' per-job run times.
sec_build() {
	local mode=$1 n="sec_$1"
	local -a cenv=(env OFFCC_REMOTE_EXEC="$url")
	[ "$mode" != insecure ] || cenv+=(OFFCC_REMOTE_EXEC_INSECURE=1 OFFCC_SIGNING_KEY= OFFCC_TRUSTED_WORKERS=)
	if [ "$worker_mode" != "$mode" ]; then
		set_workers 0
		worker_mode=$mode
	fi
	set_workers 1
	timed "$n" "${cenv[@]}" OFFCC_JOB_TRACE="$work/$n.$2.json" "$OFFCC" "${flags[@]}" bench.hip -o out.o
	wait_workers 1
}
if want security; then
cd "$work/tu"
echo "bench: security: one worker, secure / no sandbox / insecure, $RUNS runs" >&2
for ((r = 1; r <= RUNS; r++)); do
	modes="secure nosandbox insecure"
	(($r % 2)) || modes="insecure nosandbox secure"
	for m in $modes; do sec_build "$m" "$r"; done
done
set_workers 0
worker_mode=secure
fi

# --- 3. the project -------------------------------------------------------------
if want project; then
proj=$work/proj
mkdir "$proj"
cd "$proj"
{
	echo "// proj.h: shared by every file of the project."
	echo "#include \"hip_min.h\""
	for ((k = 1; k <= TUS; k++)); do echo "void t${k}_launch_all(float *a, float *b, int n);"; done
} >proj.h
objs=""
for ((k = 1; k <= TUS; k++)); do
	gen_hip "$TU_KERNELS" "t${k}_" "file $k of $TUS, $TU_KERNELS kernels." | sed 's/^#include "hip_min.h"/#include "proj.h"/' >"t$k.hip"
	objs+="${objs:+ }t$k.o"
done
{
	echo "# Generated by scripts/bench-farm.sh: make CXX=<compiler>"
	echo "FLAGS := -x hip -O2 --offload-arch=$ARCHS -nogpulib -nogpuinc -I$inc"
	echo "OBJS := $objs"
	cat <<'MK'
all: $(OBJS)
%.o: %.hip proj.h
	$(CXX) $(FLAGS) -c $< -o $@
clean:
	rm -f $(OBJS)
.PHONY: all clean
MK
} >Makefile
pclean() { make -s clean >/dev/null; }

echo "bench: project: $TUS HIP files x $TU_KERNELS kernels, make -j$MAKE_JOBS on CPU $client_cpu, $RUNS runs" >&2
[ "$nw" = 0 ] || set_workers 0
untimed "project warm-up (offcc local)" make -s -j"$MAKE_JOBS" CXX="$OFFCC" all
# psituations <run>: clang, local, farm 1..max (reversed every other run).
psituations() {
	local k list="p_clang p_local"
	for ((k = 1; k <= WORKERS_MAX; k++)); do list+=" p_farm$k"; done
	if (($1 % 2)); then echo "$list"; else tr ' ' '\n' <<<"$list" | tac | paste -sd' ' -; fi
}
for ((r = 1; r <= RUNS; r++)); do
	line=""
	for s in $(psituations "$r"); do
		pclean
		case $s in
		p_clang)
			[ "$nw" = 0 ] || set_workers 0
			timed p_clang make -s -j"$MAKE_JOBS" CXX="$CLANG" all
			;;
		p_local)
			[ "$nw" = 0 ] || set_workers 0
			timed p_local make -s -j"$MAKE_JOBS" CXX="$OFFCC" all
			;;
		p_farm*)
			set_workers "${s#p_farm}"
			timed "$s" env OFFCC_REMOTE_EXEC="$url" make -s -j"$MAKE_JOBS" CXX="$OFFCC" all
			wait_workers "${s#p_farm}"
			;;
		esac
		line+="${line:+, }${s#p_} $(last "$s")s"
	done
	echo "bench: project run $r/$RUNS: $line" >&2
done
set_workers 0
fi

# --- 5. the OpenMP TU ----------------------------------------------------------------
if want openmp; then
mkdir "$work/omp"
cd "$work/omp"
gen_target_regions "$OMP_KERNELS" "scripts/bench-farm.sh" >bench.c
omp_flags=(-fopenmp -O2 -c "--offload-arch=$OMP_ARCHS" -nogpulib)
echo "bench: OpenMP: $OMP_KERNELS target regions, --offload-arch=$OMP_ARCHS; $placement; $RUNS runs" >&2
[ "$nw" = 0 ] || set_workers 0
# Stable kernel names: no CUID to fix, the objects must be the same.
untimed "OpenMP: traced local build" env OFFCC_JOB_TRACE="$work/omp_local.json" "$OFFCC" "${omp_flags[@]}" bench.c -o local.o
untimed "OpenMP: farm build with 0 workers" env OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${omp_flags[@]}" bench.c -o farm0.o
wait_workers 0
set_workers "$WORKERS_MAX"
untimed "OpenMP: traced farm build with $WORKERS_MAX worker(s)" env OFFCC_JOB_TRACE="$work/omp_farm.json" OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${omp_flags[@]}" bench.c -o farm.o
wait_workers "$WORKERS_MAX"
if [ -n "$TRACE_DIR" ]; then
	mkdir -p "$TRACE_DIR"
	cp "$work/omp_local.json" "$TRACE_DIR/bench-farm-omp-local.json"
	cp "$work/omp_farm.json" "$TRACE_DIR/bench-farm-omp-farm$WORKERS_MAX.json"
fi
omp_check="the object of the farm build with $WORKERS_MAX worker(s) and the local one are $(same local.o farm.o); farm with 0 workers and local: $(same local.o farm0.o)"
# osituations <run>: local, farm 0..max (reversed every other run).
osituations() {
	local k list="omp_local"
	for ((k = 0; k <= WORKERS_MAX; k++)); do list+=" omp_farm$k"; done
	if (($1 % 2)); then echo "$list"; else tr ' ' '\n' <<<"$list" | tac | paste -sd' ' -; fi
}
for ((r = 1; r <= RUNS; r++)); do
	line=""
	for s in $(osituations "$r"); do
		case $s in
		omp_local)
			[ "$nw" = 0 ] || set_workers 0
			timed omp_local "$OFFCC" "${omp_flags[@]}" bench.c -o out.o
			;;
		omp_farm*)
			set_workers "${s#omp_farm}"
			timed "$s" env OFFCC_REMOTE_EXEC="$url" "$OFFCC" "${omp_flags[@]}" bench.c -o out.o
			wait_workers "${s#omp_farm}"
			;;
		esac
		line+="${line:+, }${s#omp_} $(last "$s")s"
	done
	echo "bench: OpenMP run $r/$RUNS: $line" >&2
done
set_workers 0
fi

# --- 6. what the bounds cost: tmpfs per job and races, on against off -----------
# bnd_build <tu> <mode> <run>: a timed build of <tu> (hip, omp): "local",
# or with one worker "on" (as deployed) or "off" (no per-job tmpfs on the
# worker, no races on the client), traced (the worker's run time of each
# job, and the races).
bnd_build() {
	local tu=$1 mode=$2 n="bnd_$1_$2"
	local -a cmd
	if [ "$tu" = hip ]; then cmd=("$OFFCC" "${flags[@]}" bench.hip -o out.o); else cmd=("$OFFCC" "${omp_flags[@]}" bench.c -o out.o); fi
	cd "$work/$([ "$tu" = hip ] && echo tu || echo bomp)"
	case $mode in
	local)
		[ "$nw" = 0 ] || set_workers 0
		timed "$n" "${cmd[@]}"
		return
		;;
	on) want_mode=secure ;;
	off) want_mode=nobounds ;;
	esac
	local -a cenv=(env OFFCC_REMOTE_EXEC="$url")
	[ "$mode" = on ] || cenv+=(OFFCC_REMOTE_EXEC_RACE=0)
	if [ "$worker_mode" != "$want_mode" ]; then
		set_workers 0
		worker_mode=$want_mode
		set_workers 1
		# A worker just started has an empty blob cache, and its first
		# jobs run slower: each mode's timed build runs on a warm one.
		untimed "bounds $mode warm-up" "${cenv[@]}" "${cmd[@]}"
		wait_workers 1
	fi
	set_workers 1
	timed "$n" "${cenv[@]}" OFFCC_JOB_TRACE="$work/$n.$3.json" "${cmd[@]}"
	wait_workers 1
}
if want bounds; then
mkdir -p "$work/bomp"
gen_target_regions "$OMP_KERNELS" "scripts/bench-farm.sh" >"$work/bomp/bench.c"
omp_flags=(-fopenmp -O2 -c "--offload-arch=$OMP_ARCHS" -nogpulib)
echo "bench: bounds: HIP and OpenMP TUs, local / 1 worker with bounds on / off, $RUNS runs" >&2
for ((r = 1; r <= RUNS; r++)); do
	modes="local on off"
	(($r % 2)) || modes="off on local"
	line=""
	for tu in hip omp; do
		for m in $modes; do
			bnd_build "$tu" "$m" "$r"
			line+="${line:+, }$tu $m $(last "bnd_${tu}_$m")s"
		done
	done
	echo "bench: bounds run $r/$RUNS: $line" >&2
done
set_workers 0
worker_mode=secure
fi

# --- the tables --------------------------------------------------------------------
# row <label> <name> <baseline>: medians of wall, client CPU and worker
# CPU, wall / baseline's and the speedup (baseline's / wall).
row() {
	local w c wc b
	w=$(median 1 "$(t "$2")") c=$(printf '%.3f' "$(cpu_median "$(t "$2")")") wc=$(median 1 "$(t "$2").w")
	b=$(median 1 "$(t "$3")")
	echo "| $1 | $w | $c | $wc | $(median 1 "$(t "$2").o") | $(ratio "$w" "$b") | $(ratio "$b" "$w")x |"
}
header() {
	echo "| situation | wall (s) | client CPU (s) | worker CPU (s) | other CPU (s) | wall / local | speedup vs local |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
}
# busy_note <prefix> <names...>: a warning when, in the median run of a
# situation (<names>, then <prefix>farm1.. farm$WORKERS_MAX), the rest of
# the machine was busy for more than a tenth of the wall time.
busy_note() {
	local p=$1 n o w k worst=""
	shift
	local names=("$@")
	for ((k = 1; k <= WORKERS_MAX; k++)); do names+=("${p}farm$k"); done
	for n in "${names[@]}"; do
		o=$(median 1 "$(t "$n").o") w=$(median 1 "$(t "$n")")
		if awk -v o="$o" -v w="$w" 'BEGIN { exit !(o > 0.1 * w) }'; then worst+="${worst:+, }$n ${o}s"; fi
	done
	[ -z "$worst" ] || echo "**Warning: other processes kept the machine busy during the timed runs (other CPU, medians: $worst): these timings are not clean; rerun on an idle machine.**"
}
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo "?")
note=""
[ "$RUNS" -ge 5 ] || note=" (RUNS=$RUNS: a trial)"
echo
echo "Machine: $(nproc) CPUs (${cpus[*]} allowed), ${cpu_model:-unknown CPU}, $(uname -sr). Tools: $("$CLANG" --version | head -1); $("$REDIS_SERVER" --version | awk '{ print $1, $2, $3 }'); offcc $offcc_src (a copy of it; source at $rev)."
echo "Farm: redis-server on 127.0.0.1:$port; worker hosts: $hosts; worker i: \`--jobs 1\` on CPU i mod $ncpu; client: \`taskset -c $client_cpu\`. Every build \`OFFCC_CACHE=0\`."
echo
if want hip; then
echo "HIP TU: \`${flags[*]}\`, $KERNELS kernels with launches; median of $RUNS runs$note, situations alternating. Client CPU: the timed command and its children; worker CPU: the workers and the jobs they ran; other CPU: the rest of the machine's busy time meanwhile (redis, this script, anything else running: it should be near 0)."
echo
header
row "offcc local (client CPU only)" local local
row "clang-22 (client CPU only)" clang local
row "offcc farm, 0 workers (\`OFFCC_REMOTE_EXEC\` set)" farm0 local
for ((k = 1; k <= WORKERS_MAX; k++)); do row "offcc farm, $k worker(s)" "farm$k" local; done
echo
awk -v l="$(median 1 "$(t local)")" -v f="$(median 1 "$(t farm1)")" 'BEGIN {
	s = l / f
	printf "Farm with 1 worker: %.2fx faster than local (goal: at least 1.7x): %s.\n", s, (s >= 1.7 ? "met" : "**not met**") }'
echo "Check: $objcheck."
busy_note "" local clang farm0
echo

# --- 2. the traces ---------------------------------------------------------------
if [ -z "$PYTHON" ]; then
	echo "Per-job tables and model: left out, python3 not found."
else
	"$PYTHON" - "$work/farm.json" "$work/local.json" "$narchs" "$MODEL_ARCHS" "$WORKERS_MAX" \
		"$(median 1 "$(t local)")" "$(median 1 "$(t "farm$WORKERS_MAX")")" <<'PY' || echo "Per-job tables and model: the trace analysis failed (above)."
import json, sys

farm_path, local_path = sys.argv[1], sys.argv[2]
narchs, model_archs, nworkers = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
local_wall, farm_wall = float(sys.argv[6]), float(sys.argv[7])

def load(path):
    d = json.load(open(path))
    evs = d["traceEvents"] if isinstance(d, dict) else d
    return sorted((e for e in evs if e.get("ph") == "X"), key=lambda e: e.get("ts", 0))

def num(a, k):
    try:
        return float(a.get(k) or 0)
    except (TypeError, ValueError):
        return 0.0

def dur(e):
    return e.get("dur", 0) / 1000.0

def arch(e):
    return e["args"].get("arch") or ""

def kind(e):
    return e["args"].get("kind", "?")

def cost(e):
    a = e["args"]
    return num(a, "run_ms") + num(a, "transfer_ms") + num(a, "queue_ms")

farm, local = load(farm_path), load(local_path)
is_remote = lambda e: "worker" in e["args"]
remote = [e for e in farm if is_remote(e)]
farm_local = [e for e in farm if not is_remote(e)]

print(f"Traced farm build ({nworkers} worker(s), untimed): {len(remote)} of {len(farm)} jobs ran on a worker.")
print()
if remote:
    print("| kind | arch | worker | bytes up | bytes down | transfer ms | queue ms | run ms | client ms (dur) | dur - transfer - queue - run |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for e in remote:
        a = e["args"]
        print(f"| {kind(e)} | {arch(e)} | {a.get('worker')} | {int(num(a, 'bytes_up'))} | {int(num(a, 'bytes_down'))} "
              f"| {num(a, 'transfer_ms'):.0f} | {num(a, 'queue_ms'):.0f} | {num(a, 'run_ms'):.0f} | {dur(e):.0f} | {dur(e) - cost(e):.0f} |")
    print()
if farm_local:
    print("Jobs of the farm build that ran on the client: " + ", ".join(
        f"{kind(e)}{' ' + arch(e) if arch(e) else ''} {dur(e):.0f} ms" for e in farm_local) + ".")
    print()
print("Traced local build (client alone on one CPU, untimed), per job:")
print()
print("| kind | tool | arch | ms |")
print("|---|---|---|---:|")
for e in local:
    print(f"| {kind(e)} | {e['args'].get('tool', '')} | {arch(e)} | {dur(e):.0f} |")
print()

if not remote:
    print("Model: left out, no job of the farm trace ran on a worker (no args.worker).")
    sys.exit()

# The jobs' graph: a job depends on the jobs whose outputs it reads; a job
# starts after those end, so start order is a topological order.
def longest(evs, weight):
    prod = {}
    for i, e in enumerate(evs):
        for p in e["args"].get("outputs") or []:
            prod[p] = i
    fin = {}
    for i, e in enumerate(evs):
        deps = {prod[p] for p in (e["args"].get("inputs") or []) if p in prod and prod[p] != i}
        fin[i] = weight(e) + max((fin[d] for d in deps if d in fin), default=0.0)
    return max(fin.values(), default=0.0)

# Jobs that can go remote: those of a kind some job of the farm build ran
# remotely (with one worker, others of that kind ran on the client only
# because the worker was busy).
remote_kinds = sorted({kind(e) for e in remote})
stays = lambda e: kind(e) not in remote_kinds
L = longest(farm, lambda e: 0.0 if not stays(e) else dur(e))
slowest = max(remote, key=cost)
R = cost(slowest)
T = L + R
per_arch = sum(dur(e) for e in local if arch(e))
other = sum(dur(e) for e in local if not arch(e))
local_n = other + per_arch * model_archs / narchs
sa = slowest["args"]
print(f"Model of a build for {model_archs} archs on {model_archs} worker hosts: **T = L + R**, where L is the critical path of the jobs "
      f"that cannot go remote (kinds other than {', '.join(remote_kinds)}: {', '.join(sorted({kind(e) for e in farm if stays(e)})) or 'none'}; "
      f"a job depends on the jobs whose outputs it reads; the others weigh 0) and R is the slowest single remote device job, "
      f"max(run_ms + transfer_ms + queue_ms), both from the traced farm build.")
print()
print(f"- L = {L:.0f} ms; R = {R:.0f} ms ({kind(slowest)} {arch(slowest)}: run {num(sa, 'run_ms'):.0f} + transfer "
      f"{num(sa, 'transfer_ms'):.0f} + queue {num(sa, 'queue_ms'):.0f}); **T = {T:.0f} ms**.")
print(f"- Local build for {model_archs} archs on the client CPU, its jobs one after another (the per-arch jobs scaled): "
      f"{other:.0f} ms + {per_arch:.0f} ms x {model_archs}/{narchs} = {local_n:.0f} ms; predicted speedup {local_n / T:.2f}x.")
# Variants, for what the simple model leaves out.
min_q = min(num(e["args"], "queue_ms") for e in remote)
R_idle = max(num(e["args"], "run_ms") + num(e["args"], "transfer_ms") for e in remote) + min_q
print(f"- With {nworkers} worker(s) queue_ms includes waiting behind other jobs; with the smallest queue_ms ({min_q:.0f} ms) "
      f"for every job: R = {R_idle:.0f} ms, T = {L + R_idle:.0f} ms.")
chain = sum(max(cost(e) for e in remote if kind(e) == k) for k in remote_kinds)
if len(remote_kinds) > 1:
    print(f"- One arch's remote jobs run one after another ({' then '.join(remote_kinds)}): with R the sum of the slowest "
          f"of each kind, R = {chain:.0f} ms, T = {L + chain:.0f} ms.")
over = [e for e in remote if cost(e) > dur(e) + 1]
if over:
    R_dur = max(dur(e) for e in remote)
    print(f"- **For {len(over)} of {len(remote)} remote jobs run_ms + transfer_ms + queue_ms exceeds the job's own duration "
          f"on the client**: the fields overlap (queue_ms seems to include the run). With R the longest remote job as "
          f"the client saw it (dur): R = {R_dur:.0f} ms, T = {L + R_dur:.0f} ms.")
print(f"- For scale, this build's {narchs} archs (timed medians): local {local_wall * 1000:.0f} ms, farm with {nworkers} "
      f"worker(s) {farm_wall * 1000:.0f} ms.")
PY
fi
echo
fi

if want security; then
echo "What security costs: the HIP TU with 1 worker, median of $RUNS runs: the worker as deployed (jobs signed and checked, results signed, each job in bubblewrap and Landlock), with the sandbox off (\`OFFCC_SANDBOX_DISABLE=bwrap,landlock --insecure-no-sandbox\`), and with neither (\`--insecure-unsigned\`, the client \`OFFCC_REMOTE_EXEC_INSECURE=1\` without keys). Every run traced (\`OFFCC_JOB_TRACE\`): the jobs that ran on the worker, over all runs, and the median of the worker's run time of each kind (sandbox set-up included)."
echo
echo "| worker | wall (s) | worker CPU (s) | remote jobs (all runs) | device compile run ms | device link run ms | wall vs insecure |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for m in secure nosandbox insecure; do
	rj=$("${PYTHON:-python3}" -c '
import json, statistics, sys
runs = {"device-compile": [], "device-link": []}
n = 0
for path in sys.argv[1:]:
    d = json.load(open(path))
    for e in (d["traceEvents"] if isinstance(d, dict) else d):
        a = e.get("args", {})
        if e.get("ph") == "X" and "worker" in a:
            n += 1
            runs.setdefault(a.get("kind"), []).append(float(a.get("run_ms") or 0))
med = lambda k: "%.0f (%d)" % (statistics.median(runs[k]), len(runs[k])) if runs[k] else "-"
print(n, "|", med("device-compile"), "|", med("device-link"))' "$work"/sec_"$m".*.json 2>/dev/null || echo "- | - | -")
	echo "| $m | $(median 1 "$(t "sec_$m")") | $(median 1 "$(t "sec_$m").w") | $rj | $(ratio "$(median 1 "$(t "sec_$m")")" "$(median 1 "$(t sec_insecure)")") |"
done
echo

fi

if want bounds; then
echo "What the bounds cost: 1 worker as deployed (each job in a tmpfs of \`--job-disk\` bytes and \`--job-files\` files, the client racing slow jobs locally) against the same worker without the per-job tmpfs (\`OFFCC_SANDBOX_DISABLE=tmpfs\`) and the client without races (\`OFFCC_REMOTE_EXEC_RACE=0\`); median of $RUNS runs, alternating. The share of the speed-up lost is 1 - (speed-up on - 1) / (speed-up off - 1)."
echo
echo "| TU | local (s) | bounds on (s) | bounds off (s) | speed-up on | speed-up off | share of the speed-up lost | on - off, paired median (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for tu in hip omp; do
	l=$(median 1 "$(t "bnd_${tu}_local")") on=$(median 1 "$(t "bnd_${tu}_on")") off=$(median 1 "$(t "bnd_${tu}_off")")
	pd=$(paste -d' ' <(cut -d' ' -f1 "$(t "bnd_${tu}_on")") <(cut -d' ' -f1 "$(t "bnd_${tu}_off")") | awk '{ print $1 - $2 }' | sort -g |
		awk '{ v[NR] = $1 } END { printf "%+.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	awk -v tu="$tu" -v l="$l" -v on="$on" -v off="$off" -v pd="$pd" 'BEGIN {
		son = l / on; soff = l / off
		lost = (soff > 1) ? 1 - (son - 1) / (soff - 1) : 0
		printf "| %s | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.1f%% | %s |\n", (tu == "hip" ? "HIP, '"$ARCHS"'" : "OpenMP, '"$OMP_ARCHS"'"), l, on, off, son, soff, 100 * lost, pd }'
done
echo
echo "The worker's run time of each job (sandbox, tmpfs and all; median over every traced run, jobs in brackets), and the jobs raced locally:"
echo
echo "| TU, bounds | device compile ms | device link ms | host front end ms | backend ms | raced |"
echo "|---|---:|---:|---:|---:|---:|"
for tu in hip omp; do
	for m in on off; do
		echo "| $tu, $m | $("${PYTHON:-python3}" -c '
import json, statistics, sys
runs = {}
raced = 0
for path in sys.argv[1:]:
    d = json.load(open(path))
    for e in (d["traceEvents"] if isinstance(d, dict) else d):
        a = e.get("args", {})
        if e.get("ph") != "X":
            continue
        if a.get("raced"):
            raced += 1
        if "worker" in a:
            runs.setdefault(a.get("kind"), []).append(float(a.get("run_ms") or 0))
med = lambda k: "%.0f (%d)" % (statistics.median(runs[k]), len(runs[k])) if runs.get(k) else "-"
print(" | ".join([med("device-compile"), med("device-link"), med("host-frontend"), med("backend"), str(raced)]))' "$work"/bnd_"${tu}_$m".*.json 2>/dev/null || echo "- | - | - | - | -") |"
	done
done
echo
fi

if want project; then
echo "Project: $TUS HIP files of $TU_KERNELS kernels each and a shared header, \`-x hip -O2 -c --offload-arch=$ARCHS -nogpulib -nogpuinc\`, objects only; \`make -j$MAKE_JOBS\` after \`make clean\` on CPU $client_cpu; median of $RUNS runs$note."
echo
header
row "offcc local (client CPU only)" p_local p_local
row "clang-22 (client CPU only)" p_clang p_local
for ((k = 1; k <= WORKERS_MAX; k++)); do row "offcc farm, $k worker(s)" "p_farm$k" p_local; done
echo
busy_note p_ p_local p_clang
echo
fi

if want openmp; then
echo "OpenMP TU: \`${omp_flags[*]}\`, $OMP_KERNELS target regions (the TU of bench-multiarch.sh): the host front end and the device compiles go to workers with offcc's stable kernel names; median of $RUNS runs$note, situations alternating. Columns as for the HIP TU."
echo
header
row "offcc local (client CPU only)" omp_local omp_local
row "offcc farm, 0 workers (\`OFFCC_REMOTE_EXEC\` set)" omp_farm0 omp_local
for ((k = 1; k <= WORKERS_MAX; k++)); do row "offcc farm, $k worker(s)" "omp_farm$k" omp_local; done
echo
awk -v l="$(median 1 "$(t omp_local)")" -v f="$(median 1 "$(t omp_farm1)")" 'BEGIN {
	s = l / f
	printf "Farm with 1 worker: %.2fx faster than local (goal: at least 1.7x): %s.\n", s, (s >= 1.7 ? "met" : "**not met**") }'
echo "Check: $omp_check."
busy_note omp_ omp_local omp_farm0
echo
if [ -n "$PYTHON" ]; then
	"$PYTHON" - "$work/omp_local.json" "$work/omp_farm.json" "$WORKERS_MAX" <<'PY' || echo "OpenMP per-job table: the trace analysis failed (above)."
import json, sys

def load(path):
    d = json.load(open(path))
    evs = d["traceEvents"] if isinstance(d, dict) else d
    return sorted((e for e in evs if e.get("ph") == "X"), key=lambda e: e.get("ts", 0))

def key(e):
    a = e["args"]
    return (a.get("kind", "?"), a.get("arch") or "")

local, farm = load(sys.argv[1]), load(sys.argv[2])
t0 = min(e["ts"] for e in farm)
local_ms = {key(e): e.get("dur", 0) / 1000 for e in local}
print(f"Traced builds (untimed): per job, the local build's time and, in the farm build with {sys.argv[3]} worker(s), "
      "when it started (ms after the first job), where it ran, its time on the client and, for a remote job, the worker's run time "
      "and the transfer and queue times; why the farm gave a job back, if it did.")
print()
print("| kind | arch | local ms | farm: start ms | where | client ms | run ms | transfer ms | queue ms | given back |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|---|")
for e in farm:
    a = e["args"]
    w = a.get("worker") or "client"
    num = lambda k: f"{float(a[k]):.0f}" if a.get(k) is not None else "-"
    print(f"| {key(e)[0]} | {key(e)[1]} | {local_ms.get(key(e), 0):.0f} | {(e['ts'] - t0) / 1000:.0f} | {w} | {e.get('dur', 0) / 1000:.0f} "
          f"| {num('run_ms')} | {num('transfer_ms')} | {num('queue_ms')} | {a.get('given_back') or ''} |")
print()
print(f"Sum of the local build's job times: {sum(local_ms.values()):.0f} ms; of the farm build's remote run times: "
      f"{sum(float(e['args'].get('run_ms') or 0) for e in farm if e['args'].get('worker')):.0f} ms.")
PY
fi
echo
fi
exit 0
