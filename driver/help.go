package driver

import "strings"

// helpText is offcc's --help: its own options, its subcommands, and a
// pointer to clang's options, which it accepts unchanged.
func helpText(prog string) string {
	return strings.ReplaceAll(`OVERVIEW: offcc - a parallel clang-compatible driver for offload programs

USAGE: offcc [clang options] file...
       offcc <subcommand> [options]

offcc accepts clang's command line. OpenMP offload (-fopenmp with
-fopenmp-targets= or --offload-arch=), CUDA, HIP and SYCL (-fsycl)
compilations are planned as a job graph and independent jobs (one device
compile per target, the host compile) run at the same time; offload links
run offcc's link stage. Every job whose outputs are a function of its
inputs (plain -c compiles included) is cached by content in the build
cache and restored on a later build instead of run. Everything else is
handed to clang.

OFFCC OPTIONS:
  -j N, --offload-jobs=N  Run at most N jobs at once (default: the CPU count,
                          or make's jobserver when MAKEFLAGS carries one)
  --offload-jobs=jobserver
                          Take job slots from make's jobserver
  --llvm-dir=DIR          Use the LLVM tools in DIR (also $OFFCC_LLVM_DIR;
                          default: beside clang-22 on PATH, else
                          /usr/lib/llvm-22/bin)
  -###                    Print the commands, run nothing
  -ccc-print-phases       Print clang's action graph
  -ccc-print-bindings     Print offcc's jobs with their inputs and outputs
  --print-job-graph=json|dot
                          Print offcc's typed job graph on stdout, run nothing
  --job-trace=FILE        Write a Chrome trace (Perfetto, chrome://tracing) of
                          every job run, link-stage jobs included (also
                          $OFFCC_JOB_TRACE)
  --print-compile-commands=FILE
                          Add this command's compiles to the JSON compilation
                          database FILE (compile_commands.json): a host entry
                          and one entry per device compile, so clang-tidy and
                          clangd see device code (also $OFFCC_COMPILE_COMMANDS)
  -fsyclbin[=input|object|executable]
                          Compile SYCL device code only and write a .syclbin
                          file (-o, default a.syclbin) in that state (bare:
                          executable; input and object keep unresolved
                          device symbols for a later link)
  --syclbin-version=1|2   Write SYCLBIN version 1 (default: one SYCLBIN body
                          in an offload binary) or DPC++'s version 2
  --offload-rdc           Alias of -fgpu-rdc
  --no-cache              Neither read nor write the build cache
  --no-offload-stable-names
                          Name OpenMP kernels as clang does, after the
                          source files' device and inode numbers (objects
                          then differ between checkouts); by default offcc
                          names them after the files' paths, relative to
                          the command or to $OFFCC_BASE_DIR
  --remote-exec=URL       Send device jobs (HIP, CUDA and SYCL compiles,
                          backends, device links) to the offcc workers of
                          the build farm on the Redis server URL, running
                          other jobs here meanwhile (also $OFFCC_REMOTE_EXEC;
                          see offcc worker --help); --no-remote-exec: none
  @FILE                   Read arguments from FILE; command lines too long
                          for the system reach clang and the tools in
                          response files
  -v                      Print the commands as they run

ENVIRONMENT:
  OFFCC_LLVM_DIR          the LLVM tools to use (see --llvm-dir)
  OFFCC_JOB_TRACE=FILE    see --job-trace
  OFFCC_TRACE=1           print one line per finished job with its wall time
  OFFCC_COMPILE_COMMANDS=FILE
                          see --print-compile-commands
  OFFCC_PROGRESS=0|1      on a terminal, a build running over 2 s shows its
                          running jobs on one status line; 0 turns it off,
                          1 shows it even without a terminal
  OFFCC_CACHE=0|readonly  turn the build cache off, or use it without
                          writing to it (default: on)
  OFFCC_CACHE_DIR=DIR     where the build cache lives (default
                          $XDG_CACHE_HOME/offcc, else ~/.cache/offcc)
  OFFCC_CACHE_SIZE=SIZE   its size limit (default 5G; K, M, G, T suffixes);
                          least recently used entries go first
  OFFCC_CACHE_DEBUG=1     print each job's hit or miss, and for a miss what
                          changed since the last build (flag, input, header,
                          tool)
  OFFCC_PLAN_CACHE=0      do not cache clang's job lists
  OFFCC_BASE_DIR=DIR      absolute paths under DIR count as relative to it
                          (ccache's base_dir): OpenMP kernel names and
                          cache keys then do not depend on where DIR lies
  OFFCC_REMOTE_CACHE=URL  share the build cache through the Redis server URL
                          (redis://[user:password@]host:port[/db]; a
                          "|readonly" suffix reads without writing)
  OFFCC_TRUSTED_CACHE_KEYS=LIST
                          public keys (NAME.pub files or directories, ':' or
                          ',' between them) whose signed shared-cache entries
                          are hits; entries nobody trusted signed are misses
  OFFCC_REMOTE_CACHE_INSECURE=1
                          use the shared cache without keys: unsigned
                          entries are hits (only where nobody untrusted can
                          write to the server)
  OFFCC_REMOTE_EXEC=URL   see --remote-exec
  OFFCC_REMOTE_EXEC_PICKUP=DURATION
                          how long a job waits for a worker before it runs
                          here (default 2s)
  OFFCC_TRUSTED_WORKERS=LIST
                          public keys of the workers whose results are
                          believed (others' jobs run here, with a warning)
  OFFCC_REMOTE_EXEC_INSECURE=1
                          use the build farm without keys: unsigned jobs and
                          results (only where nobody untrusted can write to
                          the server)
  OFFCC_SIGNING_KEY=FILE  the private key (NAME.key) that signs this build's
                          farm jobs and, when it is a trusted cache key, its
                          shared-cache entries (offcc key generate NAME)

SUBCOMMANDS:
  offload-binary   pack or extract offload binaries (llvm-offload-binary)
  offload-bundler  bundle, unbundle or list offload bundles (clang-offload-bundler)
  inspect          describe the offload containers in files (--json for tools)
  offload-embed    add offload binaries to a host object's .llvm.offloading
                   (--hip-fatbin, --cuda-fatbin: a HIP or CUDA fat binary
                   to its .hip_fatbin or .nv_fatbin)
  linker-wrapper   link stage (clang-linker-wrapper's command line; with
                   --syclbin=STATE it writes a .syclbin file)
  syclbin link     link object-state .syclbin files into an executable one
  cache            the build cache: stats [--json], clear, trim, explain --
                   COMMAND, export -o FILE.poclbin, import FILE.poclbin
  worker           serve the build farm (--redis URL --jobs N); worker
                   status lists its workers and queues
  key              generate NAME: an Ed25519 key pair (NAME.key, NAME.pub)
                   that signs farm jobs, results and shared-cache entries
  version          print offcc's version and the LLVM it drives

Called as llvm-offload-binary, clang-offload-packager or clang-offload-bundler
(also with a suffix such as -22) offcc behaves as that tool.

Run 'clang --help' for the compiler options.
`, "offcc", prog)
}
