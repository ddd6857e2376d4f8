package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/internal/atomicfile"
	"github.com/offcc/offcc/poclbin"
	"github.com/offcc/offcc/toolchain"
)

const cacheUsage = `USAGE: offcc cache <subcommand> [options]

Manage offcc's build cache (OFFCC_CACHE_DIR, else $XDG_CACHE_HOME/offcc,
else ~/.cache/offcc).

SUBCOMMANDS:
  stats [--json] [--zero]      the cache's directory, size limit and entries
                               (by kind), and its counters per job kind: hits,
                               misses, hit rate, uncacheable and not stored by
                               reason, time saved, bytes stored and restored;
                               --zero resets the counters after printing them
  clear                        remove every entry and the counters
  trim [--size SIZE]           remove least recently used entries now, down to
                               90% of OFFCC_CACHE_SIZE, or down to SIZE (bytes,
                               or with a K, M, G or T suffix)
  explain [--] COMMAND...      run the offcc command COMMAND (for example
                               "offcc -c x.c"; a leading offcc, offcc++, clang
                               or clang++ is optional) with OFFCC_CACHE_DEBUG=1:
                               each job's hit or miss, and for a miss what
                               changed, go to stderr; exits with COMMAND's status
  export (--all | KEY...) -o FILE.poclbin
                               write entries (all, or those with the given
                               64-hex-digit keys) to a poclbin archive
                               (-o - writes to stdout)
  import FILE.poclbin          store the entries of an archive written by export
                               (- reads stdin); every entry is checked before
                               anything is written. Import only archives you
                               trust with your builds' outputs.
`

// cacheSubcommands are the usage lines of each subcommand, for its errors
// and --help.
var cacheSubcommands = map[string]string{
	"stats":   "offcc cache stats [--json] [--zero]",
	"clear":   "offcc cache clear",
	"trim":    "offcc cache trim [--size SIZE]",
	"explain": "offcc cache explain [--] COMMAND...",
	"export":  "offcc cache export (--all | KEY...) -o FILE.poclbin",
	"import":  "offcc cache import FILE.poclbin",
}

// cacheEnv is what the cache subcommands read of the process: its
// environment and standard streams (tests give their own).
type cacheEnv struct {
	getenv         func(string) string
	environ        []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func osCacheEnv() *cacheEnv {
	return &cacheEnv{getenv: os.Getenv, environ: os.Environ(), stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
}

// usageError is a command-line mistake: reported with the subcommand's
// usage line.
type usageError struct{ sub, msg string }

func (e *usageError) Error() string { return e.msg }

func cacheMain(ctx context.Context, args []string) int {
	return cacheRun(ctx, args, osCacheEnv())
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
		fmt.Fprintf(env.stderr, "offcc: error: cache: unknown subcommand '%s' (see 'offcc cache --help')\n", sub)
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
	case "explain":
		status, err = cacheExplain(ctx, rest, env)
	case "export":
		err = cacheExport(rest, env)
	case "import":
		err = cacheImport(rest, env)
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
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

func modeName(m cache.Mode) string {
	switch m {
	case cache.ReadOnly:
		return "readonly"
	case cache.Off:
		return "off"
	}
	return "readwrite"
}

// cacheStatsJSON is the output of "offcc cache stats --json". Its fields
// are stable (new ones may be added):
//
//	dir          the cache directory
//	mode         "readwrite", "readonly" or "off" (OFFCC_CACHE; builds'
//	             use of the cache)
//	max_size     the size limit in bytes (OFFCC_CACHE_SIZE); a trim keeps
//	             90% of it
//	entries      the number of sound entries
//	bytes        their bytes (records and blobs, not the index files)
//	entry_kinds  per entry kind ("result", "manifest", "last", "plan",
//	             "tool", "derived"): {"entries": N, "bytes": N}
//	total        the counters (below) of all job kinds together
//	kinds        per job kind (as --print-job-graph names them): counters
//	remote       the shared cache (OFFCC_REMOTE_CACHE): {"hits", "misses",
//	             "errors", "stores", "bytes_up", "bytes_down"}; a remote hit
//	             is also a hit of its job kind
//
// The counters, since the statistics were last zeroed:
//
//	hits, misses    cache lookups that restored the job's outputs, and not
//	hit_rate        hits / (hits + misses), 0 when there were none
//	uncacheable     {reason: N}: jobs never looked up, by reason
//	not_stored      {reason: N}: misses whose outputs were not stored
//	saved_ms        milliseconds the hits' jobs took when they ran
//	stored_bytes    output bytes stored
//	restored_bytes  output bytes restored by hits
type cacheStatsJSON struct {
	Dir        string                   `json:"dir"`
	Mode       string                   `json:"mode"`
	MaxSize    int64                    `json:"max_size"`
	Entries    int64                    `json:"entries"`
	Bytes      int64                    `json:"bytes"`
	EntryKinds map[string]entryKindJSON `json:"entry_kinds"`
	Total      countersJSON             `json:"total"`
	Kinds      map[string]countersJSON  `json:"kinds"`
	Remote     cache.RemoteStats        `json:"remote"`
}

type entryKindJSON struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

type countersJSON struct {
	Hits          int64            `json:"hits"`
	Misses        int64            `json:"misses"`
	HitRate       float64          `json:"hit_rate"`
	Uncacheable   map[string]int64 `json:"uncacheable"`
	NotStored     map[string]int64 `json:"not_stored"`
	SavedMillis   int64            `json:"saved_ms"`
	StoredBytes   int64            `json:"stored_bytes"`
	RestoredBytes int64            `json:"restored_bytes"`
}

func counters(k cache.KindStats) countersJSON {
	c := countersJSON{
		Hits: k.Hits, Misses: k.Misses, Uncacheable: map[string]int64{}, NotStored: map[string]int64{},
		SavedMillis: k.SavedMillis, StoredBytes: k.StoredBytes, RestoredBytes: k.RestoredBytes,
	}
	if n := k.Hits + k.Misses; n > 0 {
		c.HitRate = float64(k.Hits) / float64(n)
	}
	for r, n := range k.Uncacheable {
		c.Uncacheable[r] = n
	}
	for r, n := range k.NotStored {
		c.NotStored[r] = n
	}
	return c
}

// collectStats gathers what stats prints.
func collectStats(c *cache.Cache) (*cacheStatsJSON, error) {
	usage, err := c.Usage()
	if err != nil {
		return nil, err
	}
	st := c.ReadStats()
	out := &cacheStatsJSON{
		Dir: c.Dir, Mode: modeName(c.Mode), MaxSize: c.MaxSize,
		EntryKinds: map[string]entryKindJSON{}, Total: counters(st.Total()), Kinds: map[string]countersJSON{},
		Remote: st.Remote,
	}
	for k, v := range usage {
		out.EntryKinds[string(k)] = entryKindJSON{v[0], v[1]}
		out.Entries += v[0]
		out.Bytes += v[1]
	}
	for name, k := range st.Kinds {
		out.Kinds[name] = counters(*k)
	}
	return out, nil
}

func cacheStats(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("stats", args, []string{"--json", "--zero"}, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"stats", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	st, err := collectStats(c)
	if err != nil {
		return err
	}
	if ca.bools["--json"] {
		data, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintf(env.stdout, "%s\n", data)
	} else {
		printStats(env.stdout, st)
	}
	if ca.bools["--zero"] {
		if err := c.ZeroStats(); err != nil {
			return err
		}
		if !ca.bools["--json"] {
			fmt.Fprintln(env.stdout, "\nstatistics zeroed")
		}
	}
	return nil
}

// printStats prints the statistics as aligned text.
func printStats(w io.Writer, st *cacheStatsJSON) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "cache directory\t%s\n", st.Dir)
	fmt.Fprintf(tw, "mode\t%s\n", st.Mode)
	fmt.Fprintf(tw, "size limit\t%s (a trim keeps %s)\n", humanBytes(st.MaxSize), humanBytes(st.MaxSize/10*9))
	fmt.Fprintf(tw, "entries\t%d (%s)\n", st.Entries, humanBytes(st.Bytes))
	for _, k := range sortedKeys(st.EntryKinds) {
		v := st.EntryKinds[k]
		fmt.Fprintf(tw, "  %s\t%d (%s)\n", k, v.Entries, humanBytes(v.Bytes))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(st.Kinds) == 0 {
		fmt.Fprintln(w, "no jobs counted since the statistics were last zeroed")
		return
	}
	// Numbers right-aligned; the kinds, padded to one width, stay left.
	width := len("job kind")
	for k := range st.Kinds {
		width = max(width, len(k))
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\thits\tmisses\thit rate\tuncacheable\tnot stored\ttime saved\tstored\trestored\t\n", width, "job kind")
	row := func(name string, c countersJSON) {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%s\t%d\t%d\t%s\t%s\t%s\t\n", width, name, c.Hits, c.Misses, percent(c),
			sum(c.Uncacheable), sum(c.NotStored), humanMillis(c.SavedMillis), humanBytes(c.StoredBytes), humanBytes(c.RestoredBytes))
	}
	for _, k := range sortedKeys(st.Kinds) {
		row(k, st.Kinds[k])
	}
	row("total", st.Total)
	tw.Flush()
	reasons := func(title string, get func(countersJSON) map[string]int64) {
		any := false
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		for _, k := range sortedKeys(st.Kinds) {
			m := get(st.Kinds[k])
			for _, r := range sortedKeys(m) {
				if !any {
					fmt.Fprintf(w, "\n%s:\n", title)
					any = true
				}
				fmt.Fprintf(tw, "  %s\t%s\t%d\n", k, r, m[r])
			}
		}
		tw.Flush()
	}
	reasons("uncacheable, by reason", func(c countersJSON) map[string]int64 { return c.Uncacheable })
	reasons("not stored, by reason", func(c countersJSON) map[string]int64 { return c.NotStored })
	if r := st.Remote; r != (cache.RemoteStats{}) {
		fmt.Fprintf(w, "\nshared cache: %d hits, %d misses, %d errors, %d stored; %s up, %s down\n",
			r.Hits, r.Misses, r.Errors, r.Stores, humanBytes(r.BytesUp), humanBytes(r.BytesDown))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func percent(c countersJSON) string {
	if c.Hits+c.Misses == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*c.HitRate)
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

func humanMillis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(100 * time.Millisecond)
	}
	return d.String()
}

func cacheClear(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("clear", args, nil, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"clear", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	res, err := c.Clear()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d entries (%s) and the statistics from %s\n", res.Entries, humanBytes(res.Bytes), c.Dir)
	return nil
}

func cacheTrim(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("trim", args, nil, []string{"--size"})
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"trim", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	var res cache.TrimResult
	if v, ok := ca.values["--size"]; ok {
		size, perr := cache.ParseSize(v)
		if perr != nil {
			return &usageError{"trim", fmt.Sprintf("--size %s: %v", v, perr)}
		}
		res, err = c.Store.Trim(size, time.Now())
	} else {
		res, err = c.Trim(time.Now())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "removed %d entries (%s); kept %d entries (%s)\n",
		res.RemovedEntries, humanBytes(res.RemovedBytes), res.Entries, humanBytes(res.Bytes))
	return nil
}

// cacheExplain runs a compile with OFFCC_CACHE_DEBUG=1 and returns its
// exit status.
func cacheExplain(ctx context.Context, args []string, env *cacheEnv) (int, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return 1, &usageError{"explain", "no command given"}
	}
	argv0 := "offcc"
	switch toolchain.ToolName(args[0]) {
	case "offcc", "clang":
		args = args[1:]
	case "offcc++", "clang++":
		argv0 = "offcc++"
		args = args[1:]
	}
	cfg, err := cache.ConfigFromEnv(env.getenv)
	if err != nil {
		return 1, err
	}
	if cfg.Mode == cache.Off {
		fmt.Fprintf(env.stderr, "offcc: warning: cache explain: the build cache is off (OFFCC_CACHE or no cache directory): there is nothing to explain\n")
	}
	self, err := os.Executable()
	if err != nil {
		self = argv0
	}
	inv := &driver.Invocation{
		Argv0: argv0, Args: args, Env: append(append([]string(nil), env.environ...), "OFFCC_CACHE_DEBUG=1"),
		Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, Self: self,
	}
	return driver.Main(ctx, inv), nil
}

func cacheExport(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("export", args, []string{"--all"}, []string{"-o", "--output"})
	if err != nil {
		return err
	}
	out, ok := ca.values["-o"]
	if v, ok2 := ca.values["--output"]; ok2 {
		out, ok = v, true
	}
	if !ok || out == "" {
		return &usageError{"export", "no output file (-o FILE.poclbin)"}
	}
	all := ca.bools["--all"]
	if all == (len(ca.operands) > 0) {
		return &usageError{"export", "give --all or keys, not both or neither"}
	}
	var keys []cache.Sum
	if !all {
		keys = []cache.Sum{}
		for _, k := range ca.operands {
			s, err := cache.ParseSum(strings.TrimSpace(k))
			if err != nil {
				return &usageError{"export", fmt.Sprintf("key '%s': want 64 lower-case hex digits", k)}
			}
			keys = append(keys, s)
		}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	var n int
	if out == "-" {
		n, err = c.Export(env.stdout, keys)
	} else {
		err = atomicfile.WriteFunc(out, 0o666, func(w io.Writer) error {
			var werr error
			n, werr = c.Export(w, keys)
			return werr
		})
	}
	if err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(env.stderr, "offcc: exported %d entries to %s\n", n, out)
	}
	return nil
}

// maxImportSize bounds the archive import reads: the largest archive
// ParseArchive accepts.
const maxImportSize = 15 + poclbin.MaxPathLen + poclbin.MaxEntries*(8+poclbin.MaxPathLen) + poclbin.MaxTotalSize

func cacheImport(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("import", args, nil, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) != 1 {
		return &usageError{"import", "want one archive"}
	}
	name := ca.operands[0]
	var r io.Reader = env.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > maxImportSize {
			return fmt.Errorf("%s: %d bytes, larger than any poclbin archive", name, info.Size())
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxImportSize+1))
	if err != nil {
		return err
	}
	if int64(len(data)) > maxImportSize {
		return fmt.Errorf("%s: larger than any poclbin archive", name)
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	n, err := c.Import(data)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "offcc: imported %d entries into %s\n", n, filepath.Clean(c.Dir))
	return nil
}
