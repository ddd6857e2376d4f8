package farm

import "time"

// Limits bound one job. A zero field takes its default; a negative one
// leaves that resource unbounded.
//
// RLIMIT_NPROC counts the processes and threads of a user: a job's own in
// bwrap's user namespace, or as its slot's uid (with Landlock alone, the
// few threads of its supervisor too). A worker that is not root running
// jobs without bwrap leaves it unset, as it would count the worker's own
// threads and its other jobs' as well.
type Limits struct {
	CPU      time.Duration // RLIMIT_CPU (seconds, rounded up; default 10 minutes)
	Memory   int64         // RLIMIT_AS bytes (default 16 GiB)
	FileSize int64         // RLIMIT_FSIZE bytes: the largest file a job may write (default 4 GiB)
	Procs    int           // RLIMIT_NPROC: processes, threads included (default 64, or the CPUs + 32 if more: lld runs a thread per CPU)
}

// SandboxOptions configure a Sandbox.
type SandboxOptions struct {
	// Self is the offcc executable: it runs "offcc __farm-sandbox ..."
	// inside the sandbox, which confines itself further and executes the
	// tool.
	Self string
	// Tools are the absolute paths of the executables jobs run (clang and
	// lld of the worker's toolchain, and the CUDA toolkit's ptxas,
	// fatbinary and nvlink where it has one): Command runs these paths
	// and no other. An empty entry (a tool the worker lacks: see
	// ToolPath) is left out.
	Tools []string
	// Roots are directories jobs may read, read-only: the LLVM
	// installation (/usr/lib/llvm-22).
	Roots []string
	// Insecure (--insecure-no-sandbox) runs jobs without any layer when
	// neither can be set up, instead of failing.
	Insecure bool
	// UIDBase: when the worker runs as root, slot N's jobs run as uid and
	// gid UIDBase+N (default 1900000000). Those ids should be nobody's.
	UIDBase int
	// Limits bound each job.
	Limits Limits
	// Disable is a comma-separated list of layers to leave out ("bwrap",
	// "landlock"), for tests and benchmarks: the worker's
	// OFFCC_SANDBOX_DISABLE setting. Leaving out both needs Insecure.
	Disable string
}
