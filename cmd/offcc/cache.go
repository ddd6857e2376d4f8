package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/config"
)

const cacheUsage = `USAGE: offcc cache <subcommand> [options]

Manage offcc's build cache (OFFCC_CACHE_DIR, else $XDG_CACHE_HOME/offcc,
else ~/.cache/offcc).

SUBCOMMANDS:
  stats [--json] [--zero | --zero-only]
                               the cache's directory, mode, size limit and
                               entries (by kind), how builds trust the shared cache
                               (OFFCC_REMOTE_CACHE: the key they sign with and
                               the keys they trust, or INSECURE, or off), and
                               the counters per job kind: hits, misses, hit
                               rate, uncacheable and not stored by reason, time
                               saved, bytes stored and restored, and the shared
                               cache's (untrusted: entries no trusted key
                               signed), when the counters were last zeroed,
                               and how many jobs have a learned peak memory,
                               the largest listed;
                               --zero resets the counters after printing them,
                               --zero-only resets them and prints nothing
  clear                        remove every entry and zero the counters
  trim [--size SIZE]           remove least recently used entries now, down to
                               90% of OFFCC_CACHE_SIZE (0: no limit, only damaged
                               entries go), or down to SIZE (bytes, or with a
                               K, M, G or T suffix)
  evict --older-than AGE       remove the entries no build has stored or used
                               for longer than AGE: a whole number with the
                               suffix d (days) or s (seconds), such as 7d or
                               3600s (ccache's --evict-older-than)
  explain [--] COMMAND...      run the offcc command COMMAND (for example
                               "offcc -c x.c"; a leading offcc, offcc++, clang
                               or clang++ is optional) with OFFCC_CACHE_DEBUG=1:
                               each job's hit or miss, and for a miss what
                               changed, go to stderr; exits with COMMAND's status
  export (--all | KEY...) -o FILE.poclbin
                               write entries (all, or those with the given
                               64-hex-digit keys) to a poclbin archive
                               (-o - writes to stdout); with OFFCC_SIGNING_KEY
                               every entry is signed with it for its key
  import [--trust-archive] FILE.poclbin
                               store the entries of an archive written by export
                               (- reads stdin). Every entry must be signed for
                               its key by a key of OFFCC_TRUSTED_CACHE_KEYS, or
                               the archive is refused whole (naming the first
                               bad entry); --trust-archive skips that check:
                               only for archives you trust with your builds'
                               outputs. Plans (command lines a build would run:
                               derived again) and machine-local entries (tool
                               digests, last-stored keys) are never imported;
                               the summary counts them. Every entry is checked
                               before anything is written.

KEYS (offcc key generate NAME writes a pair):
  OFFCC_SIGNING_KEY=NAME.key   signs what export writes and, in builds, what
                               goes to the shared cache; without it, or when it
                               is not one of OFFCC_TRUSTED_CACHE_KEYS, a build
                               never writes to the shared cache
  OFFCC_TRUSTED_CACHE_KEYS=LIST
                               public keys (NAME.pub files or directories of
                               them, separated by ':' or ',') whose archives
                               import takes and whose shared entries builds
                               use; with none, builds do not use the shared
                               cache
  OFFCC_REMOTE_CACHE_INSECURE=1
                               builds use shared entries no trusted key signed,
                               and write unsigned ones without a signing key
`

// cacheSubcommands are the usage lines of each subcommand, for its errors
// and --help.
var cacheSubcommands = map[string]string{
	"stats":   "offcc cache stats [--json] [--zero | --zero-only]",
	"clear":   "offcc cache clear",
	"trim":    "offcc cache trim [--size SIZE]",
	"evict":   "offcc cache evict --older-than AGE",
	"explain": "offcc cache explain [--] COMMAND...",
	"export":  "offcc cache export (--all | KEY...) -o FILE.poclbin",
	"import":  "offcc cache import [--trust-archive] FILE.poclbin",
}

// cacheEnv is what the cache subcommands read of the process: its
// environment and standard streams (tests give their own).
type cacheEnv struct {
	getenv         func(string) string
	environ        []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// osCacheEnv is the process's standard streams with the configuration
// cfg: its merged environment (the file's settings added) and getenv.
func osCacheEnv(cfg *config.Config) *cacheEnv {
	return &cacheEnv{getenv: cfg.Getenv, environ: cfg.Environ(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
}

// usageError is a command-line mistake: reported with the subcommand's
// usage line.
type usageError struct{ sub, msg string }

func (e *usageError) Error() string { return e.msg }

// plainError is a message printed as it is, after "offcc: error: " (it
// names what the user gave, such as the archive).
type plainError struct{ msg string }

func (e *plainError) Error() string { return e.msg }

func cacheMain(ctx context.Context, args []string, cfg *config.Config) int {
	return cacheRun(ctx, args, osCacheEnv(cfg))
}

// cacheRun runs "offcc cache ARGS...", returning the exit status.
func cacheRun(ctx context.Context, args []string, env *cacheEnv) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, cacheUsage)
		return 1
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stdout, cacheUsage)
		return 0
	}
	usage, ok := cacheSubcommands[sub]
	if !ok {
		fmt.Fprintf(env.stderr, "offcc: error: %s\n", unknownSubcommand("cache", sub, sortedKeys(cacheSubcommands)))
		return 1
	}
	for _, a := range rest {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(env.stdout, "USAGE: %s\n", usage)
			return 0
		}
		if a == "--" || sub == "explain" {
			break // explain: COMMAND's options follow
		}
	}
	var err error
	status := 0
	switch sub {
	case "stats":
		err = cacheStats(rest, env)
	case "clear":
		err = cacheClear(rest, env)
	case "trim":
		err = cacheTrim(rest, env)
	case "evict":
		err = cacheEvict(rest, env)
	case "explain":
		status, err = cacheExplain(ctx, rest, env)
	case "export":
		err = cacheExport(rest, env)
	case "import":
		err = cacheImport(rest, env)
	}
	if err != nil {
		var ue *usageError
		var pe *plainError
		if errors.As(err, &pe) {
			fmt.Fprintf(env.stderr, "offcc: error: %s\n", oneLine(pe.msg))
		} else if errors.As(err, &ue) {
			fmt.Fprintf(env.stderr, "offcc: error: cache %s: %s (usage: %s)\n", sub, ue.msg, usage)
		} else {
			msg := strings.TrimPrefix(oneLine(err.Error()), "cache "+sub+": ")
			fmt.Fprintf(env.stderr, "offcc: error: cache %s: %s\n", sub, msg)
		}
		return 1
	}
	return status
}

// oneLine keeps a message on one line.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

// cacheArgs is a subcommand's command line, parsed: flags and operands.
type cacheArgs struct {
	bools    map[string]bool
	values   map[string]string
	operands []string
}

// parseCacheArgs parses args with the boolean flags bools and the flags
// with a value values (each "--name"; "--name=value" and "--name value"
// for those with values; "-o" also as "-oFILE"). "--" ends the flags.
func parseCacheArgs(sub string, args []string, bools, values []string) (*cacheArgs, error) {
	ca := &cacheArgs{bools: map[string]bool{}, values: map[string]string{}}
	has := func(list []string, f string) bool {
		for _, x := range list {
			if x == f {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ca.operands = append(ca.operands, args[i+1:]...)
			return ca, nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			ca.operands = append(ca.operands, a)
		case has(bools, a):
			ca.bools[a] = true
		case has(values, a):
			if i+1 >= len(args) {
				return nil, &usageError{sub, fmt.Sprintf("option '%s' needs a value", a)}
			}
			ca.values[a] = args[i+1]
			i++
		default:
			name, val, eq := strings.Cut(a, "=")
			switch {
			case eq && has(values, name):
				ca.values[name] = val
			case strings.HasPrefix(a, "-o") && len(a) > 2 && has(values, "-o"):
				ca.values["-o"] = a[2:]
			default:
				flags := append(append([]string(nil), bools...), values...)
				if near := nearestName(name, flags); near != "" {
					if eq {
						near += "=" + val
					}
					return nil, fmt.Errorf("unknown argument '%s'; did you mean '%s'?", a, near)
				}
				return nil, &usageError{sub, fmt.Sprintf("unknown argument '%s'", a)}
			}
		}
	}
	return ca, nil
}

// openCache returns the cache the environment names, whether or not
// builds use it (OFFCC_CACHE=0 turns off builds' use, not these
// subcommands). Nothing is created.
func openCache(env *cacheEnv) (*cache.Cache, error) {
	cfg, err := cache.ConfigFromEnv(env.getenv)
	if err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		return nil, errors.New("no cache directory: set OFFCC_CACHE_DIR (or HOME)")
	}
	return &cache.Cache{Config: cfg, Store: cache.NewDirStore(cfg.Dir)}, nil
}

// unwritable says why nothing can be written to the directory dir, or
// the directory created ("" when it can): the nearest part of dir that
// exists is a file, or a directory this process may not write to (a
// read-only file system stops root too).
func unwritable(dir string) string {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			if p == filepath.Dir(p) {
				return ""
			}
			continue // missing: its parent decides
		}
		if !info.IsDir() {
			if p == filepath.Clean(dir) {
				return "directory not writable: not a directory"
			}
			return "directory not writable: " + p + " is not a directory"
		}
		if err := syscall.Access(p, 2 /* W_OK */); err != nil {
			if errors.Is(err, syscall.EROFS) {
				return "directory not writable: read-only file system"
			}
			return "directory not writable"
		}
		return ""
	}
}

// humanBytes writes n bytes with a binary unit.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || u == "TiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return ""
}
