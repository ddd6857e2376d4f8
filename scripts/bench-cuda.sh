#!/usr/bin/env bash
# bench-cuda.sh: clang-22, offcc, nvcc and nvcc --threads 0 side by side on
# a heavy CUDA translation unit (-O2 -c) built for several GPU archs: a main
# row for four archs, a two-arch row and an eight-arch row. nvcc --threads 0
# is the peer anchor: like offcc it runs the per-arch device compiles (cicc,
# ptxas) at the same time; clang-22 and plain nvcc run them one by one.
#
#   RUNS=7 scripts/bench-cuda.sh
#
# Env: OFFCC (default bin/offcc++), CLANG (default
#      /usr/lib/llvm-22/bin/clang++), NVCC (default nvcc on PATH),
#      NVCC_CCBIN (nvcc's host compiler, default g++-11 when installed;
#      empty: nvcc's own default), KERNELS (kernels in the generated TU,
#      default 60), ARCHS (main row, default sm_70,sm_80,sm_86,sm_90),
#      ARCHS2 (default sm_80,sm_90), ARCHS8 (default
#      sm_60,sm_61,sm_70,sm_75,sm_80,sm_86,sm_89,sm_90), RUNS (default 5),
#      RDC (1: separable compilation with clang's old offload driver,
#      --no-offload-new-driver -fgpu-rdc, and nvcc -rdc=true: the fat
#      binary goes to __nv_relfatbin; default 0), ROWS (the rows to run,
#      default "main two eight").
# Needs a CUDA toolkit (nvcc, ptxas, fatbinary; 11.8 covers sm_60..sm_90)
# that clang-22 finds by itself. python3 (optional) summarizes one offcc
# job trace and one nvcc --threads 0 -time report: where the time goes.
# Prints Markdown tables (medians).
#
# The builds are comparable: clang-22 (and so offcc) embeds one cubin per
# --offload-arch and no PTX by default (cuobjdump -lptx lists none; PTX
# needs --cuda-include-ptx=), so nvcc gets "-gencode
# arch=compute_XX,code=sm_XX" per arch and no code=compute_XX: both objects
# hold the same cubins and no PTX. Every offcc run is a first build:
# --no-cache turns its build cache (and with it the plan cache) off. offcc
# runs at most -j jobs at once, by default the CPU count (no jobserver here:
# MAKEFLAGS is unset); nvcc --threads 0 also uses one thread per CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

OFFCC=${OFFCC:-$PWD/bin/offcc++}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang++}
NVCC=${NVCC:-nvcc}
KERNELS=${KERNELS:-60}
ARCHS=${ARCHS:-sm_70,sm_80,sm_86,sm_90}
ARCHS2=${ARCHS2:-sm_80,sm_90}
ARCHS8=${ARCHS8:-sm_60,sm_61,sm_70,sm_75,sm_80,sm_86,sm_89,sm_90}
RUNS=${RUNS:-5}
RDC=${RDC:-0}
ROWS=${ROWS:-main two eight}
# nvcc 11.8 refuses GCC 12, Debian 12's default g++ (crt/host_config.h:
# "gcc versions later than 11 are not supported"). Debian's nvcc finds
# g++-11 through a wrapper script of its own; naming g++-11 (which the
# toolkit package pulls in) does not depend on that wrapper, and keeps its
# extra exec per host-compiler call out of the timings.
NVCC_CCBIN=${NVCC_CCBIN-$(command -v g++-11 || true)}
PYTHON=${PYTHON-$(command -v python3 || true)}

command -v "$NVCC" >/dev/null || { echo "bench: $NVCC not found (install the CUDA toolkit, e.g. apt-get install nvidia-cuda-toolkit, or set NVCC)" >&2; exit 1; }
[[ $RUNS =~ ^[1-9][0-9]*$ && $KERNELS =~ ^[1-9][0-9]*$ ]] || { echo "bench: RUNS=$RUNS KERNELS=$KERNELS: want positive integers" >&2; exit 1; }

# shellcheck source=scripts/benchlib.sh
. scripts/benchlib.sh
setup_clang_offcc # checks OFFCC and CLANG (one line, exit 1), makes $work

# Nothing from the caller's environment steers offcc (its cache, trace,
# jobs) or hands it a jobserver.
for v in "${!OFFCC_@}"; do [ "$v" = OFFCC_LLVM_DIR ] || unset "$v"; done
unset MAKEFLAGS MFLAGS MAKELEVEL
export OFFCC_CACHE_DIR="$work/cache" OFFCC_PROGRESS=0
# Every tool's temporaries (nvcc's tmpxft files too) go under $work.
mkdir "$work/tmp"
export TMPDIR="$work/tmp"

# --- generate bench.cu: $KERNELS kernels (gen_cuda_kernels, benchlib.sh) ---
gen_cuda_kernels "$KERNELS" scripts/bench-cuda.sh >"$work/bench.cu"

cd "$work"
tools=(clang offcc nvcc nvcc-t)
declare -A label=([clang]=clang-22 [offcc]=offcc [nvcc]=nvcc [nvcc-t]="nvcc --threads 0")
ccbin=()
[ -z "$NVCC_CCBIN" ] || ccbin=(-ccbin "$NVCC_CCBIN")
rdc=() nvrdc=()
[ "$RDC" != 1 ] || rdc=(--no-offload-new-driver -fgpu-rdc) nvrdc=(-rdc=true)

# tool_cmd <tool> <archs>: sets cmd to the tool's command line for archs
# (a comma-separated list of sm_XX).
tool_cmd() {
	local a gencode=()
	case $1 in
	clang) cmd=("$CLANG" -x cuda "${rdc[@]}" "--offload-arch=$2" -O2 -c bench.cu -o clang.o) ;;
	offcc) cmd=("$OFFCC" --no-cache -x cuda "${rdc[@]}" "--offload-arch=$2" -O2 -c bench.cu -o offcc.o) ;;
	nvcc | nvcc-t)
		for a in ${2//,/ }; do gencode+=(-gencode "arch=compute_${a#sm_},code=$a"); done
		cmd=("$NVCC" "${ccbin[@]}" -x cu "${nvrdc[@]}" -O2 -c "${gencode[@]}" bench.cu -o "$1.o")
		[ "$1" = nvcc ] || cmd+=(--threads 0)
		;;
	esac
}

# bench_row <archs>: one warm-up of each tool, then RUNS runs of
# each, alternating between the tools (each run starts with the next tool
# in turn); prints the row's Markdown table.
bench_row() {
	local archs=$1 i j t n=${#tools[@]} line cw tw w c name
	name=$(($(tr -cd , <<<"$archs" | wc -c) + 1))
	name="CUDA, $name arch$([ "$name" = 1 ] || echo s)"
	# The load average, before and after, tells a quiet machine from a
	# shared one.
	echo "bench: $name: $archs, $RUNS runs each (alternating); load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	for t in "${tools[@]}"; do
		tool_cmd "$t" "$archs"
		time_one warm.t "${cmd[@]}"
		: >"$t.t"
	done
	for ((i = 0; i < RUNS; i++)); do
		line="bench: $name: run $((i + 1))/$RUNS:"
		for ((j = 0; j < n; j++)); do
			t=${tools[$(((i + j) % n))]}
			tool_cmd "$t" "$archs"
			time_one "$t.t" "${cmd[@]}"
			line+=" ${label[$t]} $(tail -1 "$t.t" | cut -d' ' -f1)s,"
		done
		echo "${line%,}" >&2
	done
	echo "bench: $name: done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	cw=$(median 1 clang.t) tw=$(median 1 nvcc-t.t)
	echo
	echo "$name: \`-O2 -c\` of $KERNELS kernels for $archs: clang-22 and offcc \`-x cuda ${rdc[*]}${rdc:+ }--offload-arch=$archs\`, nvcc${nvrdc:+ \`${nvrdc[*]}\`} \`-x cu -gencode arch=compute_XX,code=sm_XX\` per arch${NVCC_CCBIN:+ (host compiler $(basename "$NVCC_CCBIN"))}; median of $RUNS runs, $(nproc) CPUs."
	echo
	echo "| tool | wall (s) | CPU user+sys (s) | wall / clang-22 | wall / nvcc --threads 0 |"
	echo "|---|---:|---:|---:|---:|"
	for t in "${tools[@]}"; do
		w=$(median 1 "$t.t") c=$(cpu_median "$t.t")
		echo "| ${label[$t]} | $w | $c | $(ratio "$w" "$cw") | $(ratio "$w" "$tw") |"
	done
}

echo "bench: $KERNELS CUDA kernels ($(wc -l <bench.cu) lines), $(nproc) CPUs; $("$NVCC" --version | tail -1); host compiler ${NVCC_CCBIN:-the default}" >&2
for row in $ROWS; do
	case $row in
	main) bench_row "$ARCHS" ;;
	two) bench_row "$ARCHS2" ;;
	eight) bench_row "$ARCHS8" ;;
	*) echo "bench: ROWS: unknown row $row (main, two, eight)" >&2; exit 1 ;;
	esac
done

# --- where the time goes: one offcc job trace, one nvcc -time report -------
if [ -z "$PYTHON" ]; then
	echo
	echo "Where the time goes: left out, python3 not found."
	exit 0
fi
tool_cmd offcc "$ARCHS"
time_one trace.t "${cmd[@]}" "--job-trace=$work/offcc-trace.json"
tool_cmd nvcc-t "$ARCHS"
time_one nvcc-time.t "${cmd[@]}" -time "$work/nvcc-time.csv"
echo
echo "Where the time goes, $ARCHS (one run each; a job's time is its wall time, and jobs overlap)."
"$PYTHON" - offcc-trace.json "$(cut -d' ' -f1 trace.t)" nvcc-time.csv "$(cut -d' ' -f1 nvcc-time.t)" <<'PY'
import csv, json, os, re, sys
from collections import OrderedDict

trace, offcc_wall, nvcsv, nvcc_wall = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])

with open(trace) as f:
    data = json.load(f)
evs = [e for e in (data["traceEvents"] if isinstance(data, dict) else data) if e.get("ph") == "X"]
evs.sort(key=lambda e: e["ts"])
end = max(e["ts"] + e["dur"] for e in evs) / 1e6
total = sum(e["dur"] for e in evs) / 1e6
def kind(e):
    a = e["args"]
    prog = os.path.basename(a["command"][0]) if a.get("command") else a.get("tool", "")
    return f"{a.get('kind', e['name'])} ({', '.join(x for x in (prog, a.get('offload')) if x)})"

kinds = OrderedDict()
for e in evs:
    k = kinds.setdefault(kind(e), [0, 0.0, []])
    k[0] += 1
    k[1] += e["dur"] / 1e6
    if e["args"].get("arch"):
        k[2].append(e["args"]["arch"])
print()
print(f"offcc job trace: {len(evs)} jobs, {total:.3f} s of job time in {end:.3f} s "
      f"(the jobs' span); the run took {offcc_wall:.3f} s wall, so {offcc_wall - end:.3f} s "
      f"went to planning (clang -###) and start-up.")
print()
print("| job kind | jobs | total (s) | share of job time | mean (s) | archs |")
print("|---|---:|---:|---:|---:|---|")
for name, (n, t, archs) in kinds.items():
    print(f"| {name} | {n} | {t:.3f} | {100 * t / total:.1f}% | {t / n:.3f} | {','.join(archs)} |")
print()
print("| job | slot | start (s) | wall (s) |")
print("|---|---:|---:|---:|")
for e in evs:
    print(f"| {e['name']} | {e['tid']} | {e['ts'] / 1e6:.3f} | {e['dur'] / 1e6:.3f} |")

phases = OrderedDict()
with open(nvcsv) as f:
    rows = list(csv.reader(f))
for r in rows[1:]:
    r = [c.strip() for c in r]
    if len(r) < 8 or r[7] != "ms":
        continue
    name = re.sub(r"\(preprocessing \d+\)", "(preprocessing)", r[1])
    p = phases.setdefault(name, [0, 0.0])
    p[0] += 1
    p[1] += float(r[6]) / 1e3
ntotal = sum(t for _, t in phases.values())
print()
print(f"nvcc --threads 0 -time: {ntotal:.3f} s of phase time; the run took {nvcc_wall:.3f} s wall.")
print()
print("| phase | runs | total (s) | share of phase time | mean (s) |")
print("|---|---:|---:|---:|---:|")
for name, (n, t) in phases.items():
    print(f"| {name} | {n} | {t:.3f} | {100 * t / ntotal:.1f}% | {t / n:.3f} |")
PY
