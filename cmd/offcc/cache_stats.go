package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/trust"
)

// modeText is the cache's mode as stats shows it, with the reason when it
// is readonly: set so (OFFCC_CACHE=readonly), or a directory builds cannot
// write.
func modeText(c *cache.Cache) string {
	switch {
	case c.Mode == cache.ReadOnly:
		return "readonly (OFFCC_CACHE=readonly)"
	case c.Mode == cache.Off:
		return "off (OFFCC_CACHE=0)"
	}
	if why := unwritable(c.Dir); why != "" {
		return "readonly (" + why + ")"
	}
	return "readwrite"
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
//	             use of the cache): "readonly" also for a directory that
//	             cannot be written (mode_reason says why)
//	mode_reason  why the mode is not readwrite, when it is not
//	max_size     the size limit in bytes (OFFCC_CACHE_SIZE); a trim keeps
//	             90% of it
//	entries      the number of sound entries
//	bytes        the bytes they take on disk: index files (which hold the
//	             records) and blob files, compressed or not
//	uncompressed_bytes
//	             the bytes they would take uncompressed
//	compression  how builds with this environment write blobs
//	             (OFFCC_CACHE_COMPRESSION_LEVEL): "off", or "zstd level N
//	             (ENCODER)"
//	entry_kinds  per entry kind ("result", "manifest", "last", "plan",
//	             "tool", "derived"; see entryKindDocs): {"entries": N,
//	             "bytes": N, "uncompressed_bytes": N}
//	zeroed       when the counters were last zeroed (RFC 3339), absent
//	             when never
//	total        the counters (below) of all job kinds together
//	kinds        per job kind (as --print-job-graph names them): counters
//	remote       the shared cache's counters: {"hits", "misses",
//	             "untrusted", "errors", "stores", "bytes_up", "bytes_down"};
//	             a remote hit is also a hit of its job kind; untrusted
//	             counts shared entries no trusted key signed (misses, or
//	             with OFFCC_REMOTE_CACHE_INSECURE=1 hits all the same)
//	shared       present when OFFCC_REMOTE_CACHE names a shared cache: how
//	             builds with this environment use it (sharedJSON)
//	peaks        the jobs' learned peak memory: {"jobs": N (how many jobs
//	             have one), "largest": the largest few, largest first,
//	             each {"tool", "kind", "target", "source", "peak", "last"}
//	             (bytes: the estimate, and the run that last changed it)}
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
	Dir        string `json:"dir"`
	Mode       string `json:"mode"`
	ModeReason string `json:"mode_reason,omitempty"`
	MaxSize    int64  `json:"max_size"`
	Entries    int64  `json:"entries"`
	Bytes      int64  `json:"bytes"`
	// UncompressedBytes and Compression: see above.
	UncompressedBytes int64                    `json:"uncompressed_bytes"`
	Compression       string                   `json:"compression"`
	EntryKinds        map[string]entryKindJSON `json:"entry_kinds"`
	Total             countersJSON             `json:"total"`
	Kinds             map[string]countersJSON  `json:"kinds"`
	Remote            cache.RemoteStats        `json:"remote"`
	Shared            *sharedJSON              `json:"shared,omitempty"`
	Zeroed            *time.Time               `json:"zeroed,omitempty"`
	Peaks             cache.PeakSummary        `json:"peaks"`
}

// peaksShown is how many of the largest learned peaks stats lists.
const peaksShown = 5

// entryKindDocs say what each kind of cache entry holds, for stats.
var entryKindDocs = map[string]string{
	string(cache.KindResult):          "a job's outputs and diagnostics",
	string(cache.KindManifest):        "direct mode: the header sets seen for a job's inputs, and the result each gave",
	string(cache.KindPlan):            "clang's job list for a command line (OFFCC_PLAN_CACHE)",
	string(cache.KindLast):            "the key text last stored for a job, for explain",
	string(cache.KindTool):            "a tool file's content digest, by its identity",
	string(cache.KindDerived):         "a digest computed from a file's bytes (OpenMP offload entries), by their digest",
	string(cache.KindPeak):            "a job's learned peak memory, by its tool, kind, target and source",
	string(cache.KindCommand):         "a whole compile's outputs (command entries: machine-local)",
	string(cache.KindCommandManifest): "for a compile's command line, the files its builds read (by stat) and the command entry each gave",
	string(cache.KindDigests):         "a directory's file digests, by the files' stats (headers are hashed once per machine)",
}

// sharedJSON is the shared cache's security as builds with the
// environment of "offcc cache stats" use it:
//
//	url           OFFCC_REMOTE_CACHE without its password
//	state         "signed": entries are verified and written signed;
//	              "verify-only": verified, never written (no signing key,
//	              or read-only: see reason); "insecure": unsigned and
//	              untrusted entries accepted (OFFCC_REMOTE_CACHE_INSECURE=1);
//	              "off": not used (see reason)
//	reason        why it is off or not written
//	signing_key   {"name", "id"}: the key that signs what builds write
//	              (OFFCC_SIGNING_KEY)
//	trusted_keys  the names of the keys whose entries are hits
//	              (OFFCC_TRUSTED_CACHE_KEYS)
type sharedJSON struct {
	URL         string   `json:"url"`
	State       string   `json:"state"`
	Reason      string   `json:"reason,omitempty"`
	SigningKey  *keyJSON `json:"signing_key,omitempty"`
	TrustedKeys []string `json:"trusted_keys"`
}

type keyJSON struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// sharedSecurity says how builds with cfg and the keys of getenv use the
// shared cache, as driver.openCache and cache.Layered decide it; nil when
// there is none.
func sharedSecurity(cfg cache.Config, getenv func(string) string) *sharedJSON {
	if cfg.RemoteURL == "" {
		return nil
	}
	sh := &sharedJSON{URL: redisstore.Redact(cfg.RemoteURL), TrustedKeys: []string{}}
	keys, err := trust.FromEnv(getenv)
	if err != nil {
		sh.State, sh.Reason = "off", oneLine(err.Error())
		return sh
	}
	if k := keys.SigningKey; k != nil {
		sh.SigningKey = &keyJSON{k.Name, k.ID}
	}
	sh.TrustedKeys = append(sh.TrustedKeys, keys.CacheWriters.Names()...)
	if why := cache.SharedCacheOff(keys.CacheWriters, cfg.RemoteInsecure); why != "" {
		sh.State, sh.Reason = "off", why
		return sh
	}
	switch {
	case cfg.RemoteReadOnly:
		sh.Reason = "read-only (OFFCC_REMOTE_CACHE_READONLY or |readonly)"
	case cfg.Mode != cache.ReadWrite:
		sh.Reason = "the build cache is not written (OFFCC_CACHE=" + modeName(cfg.Mode) + ")"
	case cfg.RemoteInsecure:
	case keys.SigningKey == nil:
		sh.Reason = "no signing key (" + trust.EnvSigningKey + ")"
	case !keys.CacheWriters.Trusts(&keys.SigningKey.PublicKey):
		sh.Reason = fmt.Sprintf("the signing key %s (%s) is not one of %s", keys.SigningKey.Name, keys.SigningKey.ID, trust.EnvCacheWriters)
	}
	switch {
	case cfg.RemoteInsecure:
		sh.State = "insecure"
	case sh.Reason != "":
		sh.State = "verify-only"
	default:
		sh.State = "signed"
	}
	return sh
}

// text is the shared cache's line of "offcc cache stats".
func (sh *sharedJSON) text() string {
	var b strings.Builder
	b.WriteString(sh.URL + ": ")
	trusting := func() {
		n := len(sh.TrustedKeys)
		if n == 0 {
			return
		}
		plural := "s"
		if n == 1 {
			plural = ""
		}
		fmt.Fprintf(&b, ", trusting %d key%s (%s)", n, plural, strings.Join(sh.TrustedKeys, ", "))
	}
	switch sh.State {
	case "off":
		b.WriteString("off: " + sh.Reason)
		return b.String()
	case "insecure":
		b.WriteString("INSECURE (unsigned entries accepted: OFFCC_REMOTE_CACHE_INSECURE=1)")
		if sh.SigningKey != nil {
			fmt.Fprintf(&b, ", entries signed by %s (%s)", sh.SigningKey.Name, sh.SigningKey.ID)
		}
		if sh.Reason != "" {
			b.WriteString(", " + sh.Reason)
		}
	case "verify-only":
		b.WriteString("entries verified, never written: " + sh.Reason)
	default:
		fmt.Fprintf(&b, "entries signed by %s (%s)", sh.SigningKey.Name, sh.SigningKey.ID)
	}
	trusting()
	return b.String()
}

type entryKindJSON struct {
	Entries      int64 `json:"entries"`
	Bytes        int64 `json:"bytes"`
	Uncompressed int64 `json:"uncompressed_bytes"`
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

// collectStats gathers what stats prints; getenv gives the keys the shared
// cache's security is described with.
func collectStats(c *cache.Cache, getenv func(string) string) (*cacheStatsJSON, error) {
	_, peaks, err := c.UsageAndPeaks(peaksShown)
	var usage map[cache.Kind]cache.KindUsage
	if err == nil {
		usage, err = c.UsageByKind()
	}
	if errors.Is(err, syscall.ENOTDIR) {
		usage, err = nil, nil // a file on the way: no entries (the mode says why)
	}
	if err != nil {
		return nil, err
	}
	comp, err := cache.CompressionFromEnv(getenv)
	compression := comp.String()
	if err != nil {
		compression = err.Error()
	}
	st := c.ReadStats()
	mode, reason, _ := strings.Cut(modeText(c), " (")
	out := &cacheStatsJSON{
		Dir: c.Dir, Mode: mode, ModeReason: strings.TrimSuffix(reason, ")"), MaxSize: c.MaxSize,
		EntryKinds: map[string]entryKindJSON{}, Total: counters(st.Total()), Kinds: map[string]countersJSON{},
		Remote: st.Remote, Shared: sharedSecurity(c.Config, getenv), Peaks: peaks, Compression: compression,
	}
	for k, v := range usage {
		out.EntryKinds[string(k)] = entryKindJSON{v.Entries, v.Bytes, v.Uncompressed}
		out.Entries += v.Entries
		out.Bytes += v.Bytes
		out.UncompressedBytes += v.Uncompressed
	}
	for name, k := range st.Kinds {
		out.Kinds[name] = counters(*k)
	}
	if t, ok := c.StatsZeroed(); ok {
		out.Zeroed = &t
	}
	return out, nil
}

// cacheStats runs "offcc cache stats [--json] [--zero | --zero-only]".
func cacheStats(args []string, env *cacheEnv) error {
	ca, err := parseCacheArgs("stats", args, []string{"--json", "--zero", "--zero-only"}, nil)
	if err != nil {
		return err
	}
	if len(ca.operands) > 0 {
		return &usageError{"stats", fmt.Sprintf("unexpected argument '%s'", ca.operands[0])}
	}
	if ca.bools["--zero-only"] && (ca.bools["--zero"] || ca.bools["--json"]) {
		return &usageError{"stats", "--zero-only prints nothing: give it alone"}
	}
	c, err := openCache(env)
	if err != nil {
		return err
	}
	if ca.bools["--zero-only"] {
		if why := unwritable(c.Dir); why != "" {
			return fmt.Errorf("cannot zero the statistics: %s: %s", c.Dir, why)
		}
		return c.ZeroStats()
	}
	st, err := collectStats(c, env.getenv)
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
		if why := unwritable(c.Dir); why != "" {
			return fmt.Errorf("cannot zero the statistics: %s: %s", c.Dir, why)
		}
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
	mode := st.Mode
	if st.ModeReason != "" {
		mode += " (" + st.ModeReason + ")"
	}
	fmt.Fprintf(tw, "mode\t%s\n", mode)
	if st.MaxSize <= 0 {
		fmt.Fprintf(tw, "size limit\tnone (OFFCC_CACHE_SIZE=0)\n")
	} else {
		fmt.Fprintf(tw, "size limit\t%s (a trim keeps %s)\n", humanBytes(st.MaxSize), humanBytes(st.MaxSize/10*9))
	}
	fmt.Fprintf(tw, "compression\t%s\n", st.Compression)
	if st.Entries == 0 {
		fmt.Fprintf(tw, "entries\tnone\n")
	}
	zeroed := "never"
	if st.Zeroed != nil {
		zeroed = st.Zeroed.Local().Format("2006-01-02 15:04:05 MST")
	}
	fmt.Fprintf(tw, "stats zeroed\t%s\n", zeroed)
	if st.Shared != nil {
		fmt.Fprintf(tw, "shared cache\t%s\n", st.Shared.text())
	}
	tw.Flush()
	printPeaks(w, st.Peaks)
	if st.Entries > 0 {
		fmt.Fprintln(w)
		printEntryKinds(w, st)
	}
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
		fmt.Fprintf(w, "\nshared cache: %d hits, %d misses, %d untrusted, %d errors, %d stored; %s up, %s down\n",
			r.Hits, r.Misses, r.Untrusted, r.Errors, r.Stores, humanBytes(r.BytesUp), humanBytes(r.BytesDown))
	}
}

// printEntryKinds prints the entries by kind, as a table: how many, the
// bytes they take on disk (compressed) and uncompressed, and what the
// kind holds; then the totals.
func printEntryKinds(w io.Writer, st *cacheStatsJSON) {
	width := len("entry kind")
	for k := range st.EntryKinds {
		width = max(width, len(k))
	}
	// Numbers right-aligned; the kinds, padded to one width, stay left,
	// and what each holds follows the numbers.
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tentries\ton disk\tuncompressed\t  what it holds\n", width, "entry kind")
	for _, k := range sortedKeys(st.EntryKinds) {
		v := st.EntryKinds[k]
		fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t  %s\n", width, k, v.Entries, humanBytes(v.Bytes), humanBytes(v.Uncompressed), entryKindDocs[k])
	}
	fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t\n", width, "total", st.Entries, humanBytes(st.Bytes), humanBytes(st.UncompressedBytes))
	tw.Flush()
}

// printPeaks prints the learned peaks: how many jobs have one, and the
// largest.
func printPeaks(w io.Writer, ps cache.PeakSummary) {
	if ps.Jobs == 0 {
		fmt.Fprintln(w, "learned peaks    none yet (builds record each job's peak memory)")
		return
	}
	plural := "s"
	if ps.Jobs == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "learned peaks    %d job%s; the largest:\n", ps.Jobs, plural)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  peak\tkind\ttarget\tsource\n")
	for _, p := range ps.Largest {
		kind := p.Kind
		if p.Tool != "" {
			kind = p.Tool + " " + kind
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", humanBytes(p.Peak), dash(kind), dash(p.Target), p.Source)
	}
	tw.Flush()
}

// dash shows an empty field as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

func humanMillis(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(100 * time.Millisecond)
	}
	return d.String()
}
