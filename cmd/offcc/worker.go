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
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/toolchain"
)

const workerUsage = `USAGE: offcc worker [--redis URL] [--jobs N] [--name NAME] [--dir DIR] [--quiet]
       offcc worker status [--redis URL] [--json]

offcc worker serves offcc's build farm: it announces its LLVM toolchain
(identified as the build cache identifies tools, by ELF build IDs) and its
slots on the Redis server at URL, takes jobs for that toolchain (HIP,
CUDA and SYCL compiles, backends, device links) from the server's stream,
runs them with its own clang and lld in private directories under DIR,
and stores their outputs and diagnostics for the client. It runs nothing
else: jobs naming other tools, plugins or files they do not ship are
refused (the client then runs them itself). SIGTERM or SIGINT drains:
running jobs finish, no new ones are taken, then it exits.

Clients send jobs when OFFCC_REMOTE_EXEC=URL is set (or --remote-exec=URL).

OPTIONS:
  --redis URL    redis://[user:password@]host:port[/db] or rediss://...
                 (default: $OFFCC_REMOTE_EXEC)
  --jobs N       jobs run at once (default: the number of CPUs)
  --name NAME    the worker's name (default: host name and process ID)
  --dir DIR      where job directories go (default: $TMPDIR or /tmp)
  --quiet        log nothing but errors

offcc worker status lists the live workers (toolchain, slots, running and
finished jobs) and each toolchain's queued and running jobs.
`

// workerMain runs "offcc worker ARGS...".
func workerMain(ctx context.Context, args []string) int {
	return workerRun(ctx, args, os.Getenv, os.Stdout, os.Stderr)
}

func workerRun(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "status" {
		return workerStatus(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet("offcc worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("redis", getenv("OFFCC_REMOTE_EXEC"), "")
	jobs := fs.Int("jobs", runtime.NumCPU(), "")
	name := fs.String("name", "", "")
	dir := fs.String("dir", "", "")
	quiet := fs.Bool("quiet", false, "")
	if code, done := parseWorkerFlags(fs, "worker", args, url, stdout, stderr); done {
		return code
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "offcc: error: worker: --jobs must be at least 1, not %d\n", *jobs)
		return 1
	}
	store, err := redisstore.Open(*url, redisstore.Options{OpTimeout: 30 * time.Second, DialTimeout: 2 * time.Second})
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker: %v\n", err)
		return 1
	}
	defer store.Close()
	llvm, err := toolchain.Find("", getenv)
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker: %v\n", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker: cannot find offcc's own executable: %v\n", err)
		return 1
	}
	opt := farm.WorkerOptions{Name: *name, Clang: llvm.Clang(), Slots: *jobs, Dir: *dir, Self: self}
	logger := log.New(stderr, "", log.LstdFlags)
	if !*quiet {
		opt.Log = logger
	}
	w, err := farm.NewWorker(store, opt)
	if err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker: %v\n", err)
		return 1
	}
	if err := w.Serve(ctx); err != nil {
		fmt.Fprintf(stderr, "offcc: error: worker: %v\n", err)
		return 1
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
		fmt.Fprintln(tw, "WORKER\tHOST\tTOOLCHAIN\tSLOTS\tRUNNING\tDONE\tFAILED\tREFUSED\tUP\tSTATE")
		for _, w := range st.Workers {
			state := "serving"
			if w.Draining {
				state = "draining"
			}
			up := time.Since(time.UnixMilli(w.Started)).Round(time.Second)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%v\t%s\n", w.Name, w.Host, w.Toolchain, w.Slots, w.Running, w.Done, w.Failed, w.Refused, up, state)
		}
		tw.Flush()
	}
	for _, q := range st.Queues {
		fmt.Fprintf(stdout, "toolchain %s: %d queued, %d running\n", q.Toolchain, q.Queued, q.Running)
	}
	return 0
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
		fmt.Fprintf(stderr, "offcc: error: %s: %v (see 'offcc worker --help')\n", what, err)
		return 1, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "offcc: error: %s: unexpected argument '%s' (see 'offcc worker --help')\n", what, fs.Arg(0))
		return 1, true
	}
	if *url == "" {
		fmt.Fprintf(stderr, "offcc: error: %s: no server: give --redis URL or set OFFCC_REMOTE_EXEC\n", what)
		return 1, true
	}
	return 0, false
}
