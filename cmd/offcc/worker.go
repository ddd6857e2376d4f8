package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/toolchain"
	"github.com/offcc/offcc/trust"
)

const workerUsage = `USAGE: offcc worker [--redis URL] [--llvm-dir DIR] [--jobs N] [--memory SIZE] [--name NAME] [--dir DIR] [--quiet]
                    [--signing-key FILE] [--trusted-clients LIST] [--job-memory SIZE]
                    [--job-cpu DURATION] [--job-wall DURATION] [--job-output SIZE]
                    [--job-procs N] [--job-inputs N] [--job-input-bytes SIZE]
                    [--job-disk SIZE] [--job-files N] [--blob-cache SIZE]
                    [--min-free SIZE]
                    [--insecure-unsigned] [--insecure-no-sandbox]
       offcc worker status [--redis URL] [--json]

offcc worker serves offcc's build farm: it announces its LLVM toolchain
(identified as the build cache identifies tools, by ELF build IDs) and its
slots on the Redis server at URL, takes jobs for that toolchain (HIP,
CUDA and SYCL compiles, backends, device links) from the server's stream,
runs them with its own clang and lld in private directories under DIR,
and stores their outputs and diagnostics for the client. It runs nothing
else: a job's command line must pass an allow-list of options, and jobs
naming other tools, plugins or files they do not ship are refused (the
client then runs them itself). SIGTERM or SIGINT drains: running jobs
finish, no new ones are taken, then it exits.

It runs only jobs signed by a client key it trusts, and signs its results
(offcc key generate NAME makes a key pair). Each job runs in a sandbox:
bubblewrap (new mount, PID, network, IPC and user namespaces; only the
LLVM installation, read-only, and the job's directory) and Landlock (reads
of the toolchain and the job only, execution of the tool only), with
limits on memory, CPU time, file size and processes; as root, slot N's
jobs run as uid 1900000000+N. A worker that can set up neither layer
refuses to start.

Clients send jobs when OFFCC_REMOTE_EXEC=URL is set (or --remote-exec=URL).

OPTIONS:
  --redis URL    redis://[user:password@]host:port[/db] or rediss://...
                 (default: $OFFCC_REMOTE_EXEC)
  --llvm-dir DIR the bin directory of the LLVM whose clang and lld it runs
                 (LLVM 22 or 19; default: found as offcc finds it, from
                 $OFFCC_LLVM_DIR or PATH); it takes only jobs of that
                 LLVM, read with that release's option tables
  --jobs N       jobs run at once (default: the number of CPUs)
  --memory SIZE  the memory its jobs may use together (default: MemAvailable
                 at the start); a job is taken only while its expected peak
                 (from the client's learned peaks, else SIZE/N) fits beside
                 those running, and always when none runs
  --name NAME    the worker's name (default: host name and process ID)
  --dir DIR      where job directories go (default: $TMPDIR or /tmp)
  --quiet        log nothing but errors
  --signing-key FILE
                 the worker's private key, which signs its results
                 (default: $OFFCC_SIGNING_KEY)
  --trusted-clients LIST
                 the clients' public keys whose jobs it runs: files or
                 directories of NAME.pub, separated by ':' or ','
                 (default: $OFFCC_TRUSTED_CLIENTS)
  --job-memory SIZE
                 a job's address space (default 8G)
  --job-cpu DURATION
                 a job's CPU time (default 10m)
  --job-wall DURATION
                 a job's wall time, fetching its inputs included (default
                 10m): then it is killed, with everything it started
  --job-output SIZE
                 the largest file a job may write (default 4G)
  --job-procs N  processes and threads of a job (default: 64, or the
                 number of CPUs + 32 where that is more)
  --job-inputs N the files a job may ship (default 20000)
  --job-input-bytes SIZE
                 their bytes together (default 1G); a job over either is
                 refused before anything is fetched
  --job-disk SIZE
                 what a job may write in its directory, the only one it
                 writes (default 1G)
  --job-files N  the files and directories it may make there (default 256);
                 as root each job's directory is a tmpfs of that size and
                 that many files, else the worker measures it as it runs.
                 A job that writes anything but its outputs fails
  --blob-cache SIZE
                 the worker's cache of fetched inputs (default 1G)
  --min-free SIZE
                 the space kept free on DIR's file system (default 1G): the
                 cache empties, then jobs are refused, rather than go below
  --insecure-unsigned
                 run jobs no trusted client signed and sign no results
                 (only where nobody untrusted can write to the server)
  --insecure-no-sandbox
                 run jobs unconfined where neither bubblewrap nor Landlock
                 can be set up

offcc worker status lists the live workers (toolchain, slots, memory:
the expected peaks of its running jobs out of what they may use, running
and finished jobs, and how they confine and sign jobs, INSECURE where they
do not) and each toolchain's queued and running jobs.
`

// sandboxDisable is the setting naming the sandbox layers to leave out.
const sandboxDisable = "OFFCC_SANDBOX_DISABLE"

// workerMain runs "offcc worker ARGS...", with the settings of cfg (the
// environment, else the configuration file).
func workerMain(ctx context.Context, args []string, cfg *config.Config) int {
	return workerRun(ctx, args, cfg.Getenv, os.Stdout, os.Stderr)
}

func workerRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "status" {
		return workerStatus(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet("offcc worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("redis", getenv("OFFCC_REMOTE_EXEC"), "")
	llvmDir := fs.String("llvm-dir", "", "")
	jobs := fs.Int("jobs", runtime.NumCPU(), "")
	memory := fs.String("memory", "", "")
	name := fs.String("name", "", "")
	dir := fs.String("dir", "", "")
	quiet := fs.Bool("quiet", false, "")
	signingKey := fs.String("signing-key", getenv(trust.EnvSigningKey), "")
	trustedClients := fs.String("trusted-clients", getenv(trust.EnvClients), "")
	jobMemory := fs.String("job-memory", "8G", "")
	jobCPU := fs.Duration("job-cpu", 10*time.Minute, "")
	jobWall := fs.Duration("job-wall", 10*time.Minute, "")
	jobOutput := fs.String("job-output", "4G", "")
	jobProcs := fs.Int("job-procs", 0, "")
	jobInputs := fs.Int("job-inputs", 20000, "")
	jobInputBytes := fs.String("job-input-bytes", "1G", "")
	jobDisk := fs.String("job-disk", "1G", "")
	jobFiles := fs.Int("job-files", 256, "")
	blobCache := fs.String("blob-cache", "1G", "")
	minFree := fs.String("min-free", "1G", "")
	insecureUnsigned := fs.Bool("insecure-unsigned", false, "")
	insecureNoSandbox := fs.Bool("insecure-no-sandbox", false, "")
	if code, done := parseWorkerFlags(fs, "worker", args, url, stdout, stderr); done {
		return code
	}
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "offcc: error: worker: %s\n", fmt.Sprintf(format, args...))
		return 1
	}
	if *jobs < 1 {
		return fail("--jobs must be at least 1, not %d", *jobs)
	}
	limits := farm.Limits{CPU: *jobCPU, Procs: *jobProcs}
	var opt farm.WorkerOptions
	var err error
	if limits.Memory, err = config.ParseSize(*jobMemory); err != nil || limits.Memory < 64<<20 {
		return fail("--job-memory %s: want a size of at least 64M, such as 8G", *jobMemory)
	}
	if limits.FileSize, err = config.ParseSize(*jobOutput); err != nil || limits.FileSize < 1<<20 {
		return fail("--job-output %s: want a size of at least 1M, such as 4G", *jobOutput)
	}
	if *jobCPU < time.Second || *jobWall < time.Second || *jobProcs < 0 {
		return fail("--job-cpu and --job-wall must be at least 1s, and --job-procs at least 1")
	}
	if *jobInputs < 1 || *jobFiles < 1 {
		return fail("--job-inputs and --job-files must be at least 1")
	}
	sizes := []struct {
		flag, value string
		least       int64
		dst         *int64
	}{
		{"--job-input-bytes", *jobInputBytes, 1 << 20, &opt.MaxInputBytes},
		{"--job-disk", *jobDisk, 1 << 20, &opt.JobDisk},
		{"--blob-cache", *blobCache, 1 << 20, &opt.BlobCache},
		{"--min-free", *minFree, 0, &opt.MinFree},
	}
	for _, sz := range sizes {
		if *sz.dst, err = config.ParseSize(sz.value); err != nil || *sz.dst < sz.least {
			if sz.least == 0 {
				return fail("%s %s: want a size, such as 1G", sz.flag, sz.value)
			}
			return fail("%s %s: want a size of at least %s, such as 1G", sz.flag, sz.value, humanBytes(sz.least))
		}
	}
	if opt.MinFree == 0 {
		opt.MinFree = -1 // none
	}
	opt.MaxInputs, opt.JobFiles = *jobInputs, *jobFiles
	var memBytes int64
	if *memory != "" {
		if memBytes, err = config.ParseSize(*memory); err != nil || memBytes < 64<<20 {
			return fail("--memory %s: want a size of at least 64M, such as 16G", *memory)
		}
	}
	keys := &trust.Settings{}
	if *signingKey != "" {
		if keys.SigningKey, err = trust.LoadPrivateKey(*signingKey); err != nil {
			return fail("signing key: %v", err)
		}
	}
	if keys.Clients, err = trust.LoadKeyring(*trustedClients); err != nil {
		return fail("trusted clients: %v", err)
	}
	store, err := redisstore.Open(*url, redisstore.Options{OpTimeout: 30 * time.Second, DialTimeout: 2 * time.Second})
	if err != nil {
		return fail("%v", err)
	}
	defer store.Close()
	llvm, err := toolchain.Find(*llvmDir, getenv)
	if err != nil {
		return fail("%v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail("cannot find offcc's own executable: %v", err)
	}
	bin := farm.ToolDir(llvm.Clang())
	var tools []string
	for _, t := range farm.Tools {
		tools = append(tools, farm.ToolPath(llvm.Clang(), t))
	}
	sandbox, err := farm.NewSandbox(farm.SandboxOptions{Self: self, Tools: tools, Roots: []string{filepath.Dir(bin)},
		Insecure: *insecureNoSandbox, Limits: limits, Disable: getenv(sandboxDisable)})
	if err != nil {
		return fail("%v", err)
	}
	opt.Name, opt.Clang, opt.Release, opt.Slots, opt.Dir, opt.Sandbox = *name, llvm.Clang(), llvm.Major, *jobs, *dir, sandbox
	opt.Keys, opt.InsecureUnsigned, opt.JobTimeout = keys, *insecureUnsigned, *jobWall
	for _, l := range strings.Split(getenv(sandboxDisable), ",") {
		opt.NoTmpfs = opt.NoTmpfs || strings.TrimSpace(l) == "tmpfs"
	}
	if memBytes > 0 {
		opt.Memory, opt.MemorySource = memBytes, "--memory"
	}
	logger := log.New(stderr, "", log.LstdFlags)
	if !*quiet {
		opt.Log = logger
	}
	w, err := farm.NewWorker(store, opt)
	if err != nil {
		return fail("%v", err)
	}
	if err := w.Serve(ctx); err != nil {
		return fail("%v", err)
	}
	return 0
}

// workerStatus runs "offcc worker status".
func workerStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("offcc worker status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("redis", getenv("OFFCC_REMOTE_EXEC"), "")
	asJSON := fs.Bool("json", false, "")
	if code, done := parseWorkerFlags(fs, "worker status", args, url, stdout, stderr); done {
		return code
	}
	store, err := redisstore.Open(*url, redisstore.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker status: %v\n", err)
		return 1
	}
	defer store.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := farm.GetStatus(cctx, store)
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker status: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(st)
		return 0
	}
	fmt.Fprintf(stdout, "farm %s: %d workers\n", st.Server, len(st.Workers))
	if len(st.Workers) > 0 {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tHOST\tTOOLCHAIN\tSLOTS\tMEMORY\tRUNNING\tDONE\tFAILED\tREFUSED\tUP\tSTATE\tSECURITY")
		for _, w := range st.Workers {
			state := "serving"
			if w.Draining {
				state = "draining"
			}
			up := time.Since(time.UnixMilli(w.Started)).Round(time.Second)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%v\t%s\t%s\n", w.Name, w.Host, w.Toolchain, w.Slots, workerMemory(w), w.Running, w.Done, w.Failed, w.Refused, up, state, security(w))
		}
		tw.Flush()
	}
	for _, q := range st.Queues {
		fmt.Fprintf(stdout, "toolchain %s: %d queued, %d running\n", q.Toolchain, q.Queued, q.Running)
	}
	return 0
}

// workerMemory describes a worker's memory: the expected peaks of its
// running jobs out of what they may use, and where that comes from.
func workerMemory(w farm.WorkerInfo) string {
	if w.Memory <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%s/%s (%s)", humanBytes(w.Reserved), humanBytes(w.Memory), w.MemorySource)
}

// security describes how a worker confines and signs its jobs.
func security(w farm.WorkerInfo) string {
	var parts []string
	if len(w.Insecure) > 0 {
		parts = append(parts, "INSECURE ("+strings.Join(w.Insecure, ", ")+")")
	}
	if len(w.Sandbox) > 0 {
		parts = append(parts, strings.Join(w.Sandbox, "+"))
	}
	if w.Key != "" {
		name, _, _ := strings.Cut(w.Key, " ")
		parts = append(parts, "signed by "+name)
	}
	return strings.Join(parts, ", ")
}

// parseWorkerFlags parses the command line of "offcc WHAT" into fs, whose
// --redis flag is url. done reports that the command ends here, with exit
// status code: --help printed the usage, or a mistake one error line.
func parseWorkerFlags(fs *flag.FlagSet, what string, args []string, url *string, stdout, stderr io.Writer) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, workerUsage)
			return 0, true
		}
		fmt.Fprintf(stderr, "offcc: error: %s: %s\n", what, flagError(fs, args, err))
		return 1, true
	}
	if fs.NArg() > 0 {
		msg := fmt.Sprintf("unexpected argument '%s' (see 'offcc worker --help')", fs.Arg(0))
		if what == "worker" && fs.Arg(0) == args[0] && nearestName(args[0], []string{"status"}) != "" {
			msg = fmt.Sprintf("unexpected argument '%s'; did you mean 'status'?", args[0])
		}
		fmt.Fprintf(stderr, "offcc: error: %s: %s\n", what, msg)
		return 1, true
	}
	if *url == "" {
		fmt.Fprintf(stderr, "offcc: error: %s: no server: give --redis URL or set OFFCC_REMOTE_EXEC\n", what)
		return 1, true
	}
	return 0, false
}

// flagError spells an error of fs.Parse(args) in clang's words, naming the
// argument as the user gave it: "unknown argument '--job'; did you mean
// '--jobs'?" for a flag fs lacks, "argument to '--jobs' is missing
// (expected 1 value)" for one without its value; package flag's own words
// for anything else.
func flagError(fs *flag.FlagSet, args []string, err error) string {
	msg := err.Error()
	given := func(name string) string {
		for _, a := range args {
			if a == "--" {
				break
			}
			if n, _, _ := strings.Cut(a, "="); strings.HasPrefix(a, "-") && strings.TrimLeft(n, "-") == name {
				return a
			}
		}
		return "-" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		// package flag takes -jobs as --jobs: suggest as the user spelt.
		arg := given(name)
		dashes := arg[:len(arg)-len(strings.TrimLeft(arg, "-"))]
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, dashes+f.Name) })
		msg := unknownArgument(arg, names)
		if !strings.Contains(msg, "did you mean") {
			msg += " (see 'offcc worker --help')"
		}
		return msg
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("argument to '%s' is missing (expected 1 value)", given(name))
	}
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		// invalid value "x" for flag -jobs: parse error, or invalid
		// boolean value "x" for -quiet: parse error
		value, name, why := m[1], m[2], m[3]
		arg := given(name)
		if n, _, _ := strings.Cut(arg, "="); n != arg {
			arg = n
		}
		return fmt.Sprintf("invalid value '%s' in '%s' (%s)", value, arg, flagValueWant(fs.Lookup(name), why))
	}
	return msg + " (see 'offcc worker --help')"
}

// invalidFlagValue matches package flag's errors for a value its flag
// cannot parse: the value, the flag's name and why.
var invalidFlagValue = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): (.*)$`)

// flagValueWant says what a flag's value should be, from its type, for
// package flag's own types; for the rest (their Set said why) why.
func flagValueWant(f *flag.Flag, why string) string {
	if f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case int, int64, uint, uint64:
				return "want a whole number"
			case float64:
				return "want a number"
			case time.Duration:
				return "want a duration such as 90s or 5m"
			case bool:
				return "want true or false"
			}
		}
	}
	return why
}
