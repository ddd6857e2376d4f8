package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/toolchain"
	"github.com/offcc/offcc/trust"
)

// runCache runs "offcc cache ARGS..." with the environment vars (NAME=VALUE)
// and returns its status, stdout and stderr.
func runCache(t *testing.T, vars []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cacheEnv{
		getenv: func(name string) string {
			for i := len(vars) - 1; i >= 0; i-- {
				if v, ok := strings.CutPrefix(vars[i], name+"="); ok {
					return v
				}
			}
			return ""
		},
		environ: vars, stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
	}
	rc := cacheRun(context.Background(), args, env)
	return rc, stdout.String(), stderr.String()
}

func TestCacheIsSubcommand(t *testing.T) {
	if !isSubcommand("cache") {
		t.Errorf("cache is not a subcommand")
	}
}

func TestCacheUsageErrors(t *testing.T) {
	vars := []string{"OFFCC_CACHE_DIR=" + filepath.Join(t.TempDir(), "cache")}
	rc, out, errs := runCache(t, vars)
	if rc == 0 || out != "" {
		t.Errorf("no arguments: status %d, stdout %q", rc, out)
	}
	for _, sub := range []string{"stats", "clear", "trim", "evict", "explain", "export", "import"} {
		if !strings.Contains(errs, "\n  "+sub) {
			t.Errorf("usage without arguments does not list %s:\n%s", sub, errs)
		}
	}
	for _, help := range []string{"--help", "-h", "help"} {
		rc, out, errs := runCache(t, vars, help)
		if rc != 0 || errs != "" || !strings.Contains(out, "USAGE: offcc cache") || !strings.Contains(out, "  explain") {
			t.Errorf("%s: status %d, stdout %q, stderr %q", help, rc, out, errs)
		}
	}
	for _, sub := range []string{"stats", "clear", "trim", "explain", "export", "import"} {
		rc, out, errs := runCache(t, vars, sub, "--help")
		if rc != 0 || errs != "" || !strings.HasPrefix(out, "USAGE: offcc cache "+sub) {
			t.Errorf("%s --help: status %d, stdout %q, stderr %q", sub, rc, out, errs)
		}
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "offcc: error: unknown cache subcommand 'bogus' (see 'offcc cache --help')\n"},
		{[]string{"stat"}, "offcc: error: unknown cache subcommand 'stat'; did you mean 'stats'?\n"},
		{[]string{"evic"}, "did you mean 'evict'?"},
		{[]string{"evcit"}, "unknown cache subcommand 'evcit' (see"},
		{[]string{"stats", "--bogus"}, "unknown argument '--bogus'"},
		{[]string{"stats", "--jsn"}, "offcc: error: cache stats: unknown argument '--jsn'; did you mean '--json'?\n"},
		{[]string{"stats", "-zero"}, "did you mean '--zero'?"},
		{[]string{"trim", "--sise=1G"}, "unknown argument '--sise=1G'; did you mean '--size=1G'?"},
		{[]string{"evict"}, "cache evict: no age given (--older-than AGE) (usage: offcc cache evict --older-than AGE)"},
		{[]string{"evict", "--older-than", "7"}, "cache evict: --older-than '7': want a whole number with the suffix d (days) or s (seconds), such as 7d or 3600s"},
		{[]string{"evict", "--older-than=1h"}, "--older-than '1h': want a whole number"},
		{[]string{"evict", "--older-than", "-1d"}, "--older-than '-1d': want a whole number"},
		{[]string{"evict", "--older-then", "7d"}, "did you mean '--older-than'?"},
		{[]string{"evict", "--older-than", "7d", "x"}, "unexpected argument 'x'"},
		{[]string{"stats", "extra"}, "unexpected argument 'extra'"},
		{[]string{"clear", "now"}, "unexpected argument 'now'"},
		{[]string{"trim", "--size"}, "option '--size' needs a value"},
		{[]string{"trim", "--size", "lots"}, "--size lots: not a size"},
		{[]string{"trim", "--size=-1"}, "--size -1: not a size"},
		{[]string{"explain"}, "no command given"},
		{[]string{"explain", "--"}, "no command given"},
		{[]string{"export", "--all"}, "no output file"},
		{[]string{"export", "-o", "x.poclbin"}, "give --all or keys"},
		{[]string{"export", "--all", strings.Repeat("a", 64), "-o", "x.poclbin"}, "give --all or keys"},
		{[]string{"export", "-o", "x.poclbin", "abc"}, "key 'abc': want 64 lower-case hex digits"},
		{[]string{"export", "-o", "x.poclbin", strings.Repeat("A", 64)}, "want 64 lower-case hex digits"},
		{[]string{"import"}, "want one archive"},
		{[]string{"import", "a", "b"}, "want one archive"},
	}
	// A missing archive: the message names it.
	missing := filepath.Join(t.TempDir(), "missing.poclbin")
	if rc, _, errs := runCache(t, vars, "import", missing); rc == 0 || errs != "offcc: error: "+missing+": no such file or directory\n" {
		t.Errorf("import of a missing archive: status %d, stderr %q", rc, errs)
	}
	for _, b := range bad {
		rc, out, errs := runCache(t, vars, b.args...)
		if rc == 0 || out != "" || !strings.HasPrefix(errs, "offcc: error: ") || !strings.Contains(errs, b.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want one error line saying %q", b.args, rc, out, errs, b.want)
		}
	}

	// A bad setting is an error too.
	rc, _, errs = runCache(t, []string{"OFFCC_CACHE=maybe"}, "stats")
	if rc == 0 || !strings.Contains(errs, "OFFCC_CACHE=maybe") {
		t.Errorf("bad OFFCC_CACHE: %d %q", rc, errs)
	}
}

func TestCacheStatsEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	vars := []string{"OFFCC_CACHE_DIR=" + dir, "OFFCC_CACHE_SIZE=1M"}
	rc, out, errs := runCache(t, vars, "stats", "--json")
	if rc != 0 || errs != "" {
		t.Fatalf("stats --json: status %d, stderr %q", rc, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]any{
		"dir": dir, "mode": "readwrite", "max_size": float64(1 << 20), "entries": float64(0), "bytes": float64(0),
		"uncompressed_bytes": float64(0), "compression": "zstd level 1 (fastest)",
		"entry_kinds": map[string]any{}, "kinds": map[string]any{},
		"peaks": map[string]any{"jobs": float64(0), "largest": []any{}},
		"total": map[string]any{
			"hits": float64(0), "misses": float64(0), "hit_rate": float64(0),
			"uncacheable": map[string]any{}, "not_stored": map[string]any{},
			"saved_ms": float64(0), "stored_bytes": float64(0), "restored_bytes": float64(0),
		},
		"remote": map[string]any{
			"hits": float64(0), "misses": float64(0), "errors": float64(0), "stores": float64(0),
			"untrusted": float64(0), "bytes_up": float64(0), "bytes_down": float64(0),
		},
	}
	gotText, _ := json.Marshal(got)
	wantText, _ := json.Marshal(want)
	if string(gotText) != string(wantText) {
		t.Errorf("stats --json of an empty cache:\n got %s\nwant %s", gotText, wantText)
	}
	rc, out, errs = runCache(t, vars, "stats")
	if rc != 0 || errs != "" || !strings.Contains(out, "cache directory  "+dir) || !strings.Contains(out, "no jobs counted") {
		t.Errorf("stats: status %d, stderr %q, stdout:\n%s", rc, errs, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stats created the cache directory")
	}
	// OFFCC_CACHE=0 turns off builds' use, not the subcommands.
	rc, out, _ = runCache(t, append(vars, "OFFCC_CACHE=0"), "stats", "--json")
	if rc != 0 || !strings.Contains(out, `"mode": "off"`) {
		t.Errorf("stats with OFFCC_CACHE=0: %d\n%s", rc, out)
	}
}

// putResult puts a result entry with one blob into the cache in dir.
func putResult(t *testing.T, dir, name, data string) cache.Sum {
	t.Helper()
	c := cache.Open(cache.Config{Dir: dir})
	src := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	key := cache.SumBytes([]byte(name))
	err := c.Store.Put(key, &cache.Entry{Kind: cache.KindResult, Record: []byte(`{"kind":"compile"}`),
		Blobs: []cache.Blob{{Name: "out0", Size: int64(len(data)), Sum: cache.SumBytes([]byte(data)), Mode: 0o666, Path: src}}})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestCacheCLI(t *testing.T) {
	root := t.TempDir()
	dir, dir2 := filepath.Join(root, "cache"), filepath.Join(root, "cache2")
	vars := []string{"OFFCC_CACHE_DIR=" + dir}
	// Half random, half x's: 3000 bytes that take about 1600 on disk
	// compressed, the other entry a few hundred.
	var half strings.Builder
	for i := 0; half.Len() < 1500; i++ {
		sum := cache.SumBytes([]byte{byte(i)})
		half.Write(sum[:])
	}
	k1 := putResult(t, dir, "one", half.String()[:1500]+strings.Repeat("x", 1500))
	k2 := putResult(t, dir, "two", "y")
	// Counters, as a build leaves them.
	os.MkdirAll(filepath.Join(dir, "stats"), 0o777)
	os.WriteFile(filepath.Join(dir, "stats", "3"), []byte(`{"kinds":{"compile":{"hits":3,"misses":1,"uncacheable":{"-E":2},"saved_ms":1500,"stored_bytes":10,"restored_bytes":30}}}`), 0o644)

	rc, out, errs := runCache(t, vars, "stats", "--json")
	if rc != 0 {
		t.Fatalf("stats --json: %d %s", rc, errs)
	}
	var st cacheStatsJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	// The 1500 x's take next to nothing on disk, compressed.
	if st.Entries != 2 || st.UncompressedBytes <= 3001+2*int64(len(`{"kind":"compile"}`)) || st.Bytes >= st.UncompressedBytes-1400 ||
		st.EntryKinds["result"].Bytes != st.Bytes || st.EntryKinds["result"].Uncompressed != st.UncompressedBytes || st.EntryKinds["result"].Entries != 2 ||
		st.Compression != "zstd level 1 (fastest)" ||
		st.Total.Hits != 3 || st.Total.Misses != 1 || st.Total.HitRate != 0.75 || st.Kinds["compile"].Uncacheable["-E"] != 2 {
		t.Errorf("stats --json:\n%s", out)
	}
	rc, out, _ = runCache(t, vars, "stats")
	for _, want := range []string{"compile", "75.0%", "1.5s", "uncacheable, by reason:", "-E"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats text lacks %q:\n%s", want, out)
		}
	}
	// The entries by kind: a table, its numbers right-aligned under
	// their headings, the total last.
	kinds := []string{
		"  entry kind  entries  on disk  uncompressed  what it holds",
		fmt.Sprintf("  result            2  %7s  %12s  a job's outputs and diagnostics", humanBytes(st.Bytes), humanBytes(st.UncompressedBytes)),
		fmt.Sprintf("  total             2  %7s  %12s", humanBytes(st.Bytes), humanBytes(st.UncompressedBytes)),
	}
	if !strings.Contains(out, "\n"+strings.Join(kinds, "\n")+"\n") {
		t.Errorf("stats text lacks the entry kinds' table\n%s\n", strings.Join(kinds, "\n"))
	}
	t.Logf("stats:\n%s", out)

	// Export one key, then all, signed; import into a fresh cache that
	// trusts the key.
	keyFile, pubFile := genKeyPair(t, root, "ci")
	signing := append(vars, "OFFCC_SIGNING_KEY="+keyFile)
	one := filepath.Join(root, "one.poclbin")
	if rc, _, errs := runCache(t, signing, "export", "-o", one, k2.String()); rc != 0 || !strings.Contains(errs, "signed by ci (") {
		t.Fatalf("export KEY: %s", errs)
	}
	all := filepath.Join(root, "all.poclbin")
	if rc, _, errs := runCache(t, signing, "export", "--all", "-o"+all); rc != 0 {
		t.Fatalf("export --all: %s", errs)
	}
	missing := cache.SumBytes([]byte("missing")).String()
	if rc, _, errs := runCache(t, vars, "export", "-o", filepath.Join(root, "no.poclbin"), missing); rc == 0 || !strings.Contains(errs, missing) {
		t.Errorf("export of a missing key: %d %q", rc, errs)
	}
	if _, err := os.Stat(filepath.Join(root, "no.poclbin")); !os.IsNotExist(err) {
		t.Errorf("a failed export left its output")
	}
	vars2 := []string{"OFFCC_CACHE_DIR=" + dir2, "OFFCC_TRUSTED_CACHE_KEYS=" + pubFile}
	if rc, _, errs := runCache(t, vars2, "import", one); rc != 0 || !strings.Contains(errs, "imported 1 entries") {
		t.Fatalf("import one: %d %s", rc, errs)
	}
	if rc, _, errs := runCache(t, vars2, "import", all); rc != 0 || !strings.Contains(errs, "imported 2 entries") {
		t.Fatalf("import all: %d %s", rc, errs)
	}
	c2 := cache.Open(cache.Config{Dir: dir2})
	for _, k := range []cache.Sum{k1, k2} {
		if _, err := c2.Store.Get(k); err != nil {
			t.Errorf("%s not imported", k)
		}
	}
	// A damaged archive is refused whole.
	data, _ := os.ReadFile(all)
	data[len(data)-1] ^= 1
	bad := filepath.Join(root, "bad.poclbin")
	os.WriteFile(bad, data, 0o644)
	dir3 := filepath.Join(root, "cache3")
	if rc, _, errs := runCache(t, []string{"OFFCC_CACHE_DIR=" + dir3, "OFFCC_TRUSTED_CACHE_KEYS=" + pubFile}, "import", bad); rc == 0 || strings.Count(errs, "\n") != 1 {
		t.Errorf("import of a damaged archive: %d %q", rc, errs)
	}
	if _, err := os.Stat(dir3); !os.IsNotExist(err) {
		t.Errorf("a refused import created the cache directory")
	}

	// --zero prints, then zeroes.
	if rc, out, _ := runCache(t, vars, "stats", "--zero"); rc != 0 || !strings.Contains(out, "75.0%") || !strings.Contains(out, "statistics zeroed") {
		t.Errorf("stats --zero: %d\n%s", rc, out)
	}
	if rc, out, _ := runCache(t, vars, "stats", "--json"); rc != 0 || !strings.Contains(out, `"kinds": {}`) {
		t.Errorf("stats after --zero: %d\n%s", rc, out)
	}

	// trim --size 1K removes the larger entry (least recently used
	// first, all being of the same age, by key): at most 1K is kept.
	if rc, out, errs := runCache(t, vars, "trim", "--size", "1K"); rc != 0 || !strings.HasPrefix(out, "removed ") {
		t.Errorf("trim: %d %q %q", rc, out, errs)
	}
	c := cache.Open(cache.Config{Dir: dir})
	if _, err := c.Store.Get(k1); err == nil {
		t.Errorf("trim --size 1K kept the 3000-byte entry")
	}
	// Plain trim (to 90% of the 5G default) removes nothing.
	if rc, out, _ := runCache(t, vars, "trim"); rc != 0 || !strings.HasPrefix(out, "removed 0 entries") {
		t.Errorf("trim: %d %q", rc, out)
	}

	if rc, out, errs := runCache(t, vars2, "clear"); rc != 0 || !strings.Contains(out, "removed 2 entries") {
		t.Errorf("clear: %d %q %q", rc, out, errs)
	}
	if u, _ := c2.Usage(); len(u) != 0 {
		t.Errorf("entries after clear: %v", u)
	}
}

// TestCacheExplain runs a compile twice through "offcc cache explain"
// (needs LLVM): a miss, then a hit, and a failing command's status.
func TestCacheExplain(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clang")
	}
	if _, err := toolchain.Find("", os.Getenv); err != nil {
		t.Skipf("no LLVM: %v", err)
	}
	root := t.TempDir()
	src := filepath.Join(root, "x.c")
	os.WriteFile(src, []byte("int f(int x) { return x + 1; }\n"), 0o644)
	// The source's time must be in the past for its result to be stored.
	old := mustTime(t, "2020-01-01T00:00:00Z")
	os.Chtimes(src, old, old)
	vars := append(os.Environ(), "OFFCC_CACHE=1", "OFFCC_CACHE_DIR="+filepath.Join(root, "cache"), "OFFCC_CACHE_DEBUG=0")
	obj := filepath.Join(root, "x.o")
	rc, _, errs := runCache(t, vars, "explain", "--", "offcc", "-c", src, "-o", obj)
	if rc != 0 || !strings.Contains(errs, ": miss") {
		t.Fatalf("first explain: status %d, stderr:\n%s", rc, errs)
	}
	t.Logf("first:\n%s", errs)
	rc, _, errs = runCache(t, vars, "explain", "-c", src, "-o", obj)
	t.Logf("second:\n%s", errs)
	if rc != 0 || !strings.Contains(errs, ": hit") {
		t.Errorf("second explain: status %d, stderr:\n%s", rc, errs)
	}
	rc, _, errs = runCache(t, vars, "explain", "--", "-c", filepath.Join(root, "missing.c"), "-o", obj)
	if rc == 0 {
		t.Errorf("explain of a failing compile: status 0, stderr:\n%s", errs)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestCacheImportTrust: import takes a signed archive from a trusted key;
// an unsigned one, or one signed by another key, is refused whole with one
// line naming the entry, unless --trust-archive; plans and machine-local
// entries are skipped and counted in the summary.
func TestCacheImportTrust(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cache")
	keyFile, pubFile := genKeyPair(t, root, "ci")
	rogueKey, _ := genKeyPair(t, root, "rogue")
	k := putResult(t, dir, "one", "object")
	c := cache.Open(cache.Config{Dir: dir})
	plan, tool := cache.SumBytes([]byte("plan")), cache.SumBytes([]byte("tool"))
	c.Store.Put(plan, &cache.Entry{Kind: cache.KindPlan, Record: []byte("clang -cc1 ...")})
	c.Store.Put(tool, &cache.Entry{Kind: cache.KindTool, Record: []byte("sha256=00")})
	vars := []string{"OFFCC_CACHE_DIR=" + dir}
	export := func(name string, extra ...string) string {
		t.Helper()
		out := filepath.Join(root, name)
		if rc, _, errs := runCache(t, append(append([]string(nil), vars...), extra...), "export", "-o", out, k.String(), plan.String(), tool.String()); rc != 0 {
			t.Fatalf("export %s: %s", name, errs)
		}
		return out
	}
	signed := export("signed.poclbin", "OFFCC_SIGNING_KEY="+keyFile)
	unsigned := export("unsigned.poclbin")
	rogue := export("rogue.poclbin", "OFFCC_SIGNING_KEY="+rogueKey)

	n := 0
	fresh := func(extra ...string) ([]string, string) {
		n++
		d := filepath.Join(root, fmt.Sprintf("import%d", n))
		return append([]string{"OFFCC_CACHE_DIR=" + d}, extra...), d
	}
	trusting := "OFFCC_TRUSTED_CACHE_KEYS=" + pubFile
	skipped := "; skipped 2: 1 plan (plans are derived again, never imported), 1 machine-local"

	v, d := fresh(trusting)
	rc, _, errs := runCache(t, v, "import", signed)
	if rc != 0 || !strings.HasPrefix(errs, "offcc: imported 1 entries into "+d+skipped) || strings.Contains(errs, "trust-archive") {
		t.Errorf("signed import: %d %q", rc, errs)
	}
	entry := fmt.Sprintf("%q", k.String()[:2]+"/"+k.String()+"/index")
	for _, tc := range []struct {
		name, archive string
		vars          []string
		want          string
	}{
		{"unsigned", unsigned, []string{trusting}, "not signed by a trusted key: unsigned"},
		{"untrusted key", rogue, []string{trusting}, "signed by unknown key"},
		{"no trusted keys", signed, nil, "no trusted keys"},
	} {
		v, d := fresh(tc.vars...)
		rc, out, errs := runCache(t, v, "import", tc.archive)
		if rc != 1 || out != "" || !strings.HasPrefix(errs, "offcc: error: cache import: entry "+entry) || !strings.Contains(errs, tc.want) ||
			!strings.Contains(errs, "--trust-archive") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: %d %q; want one error line naming %s and saying %q", tc.name, rc, errs, entry, tc.want)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s: a refused import created the cache directory", tc.name)
		}
		rc, _, errs = runCache(t, v, "import", "--trust-archive", tc.archive)
		if rc != 0 || !strings.Contains(errs, "imported 1 entries") || !strings.Contains(errs, skipped) || !strings.Contains(errs, "(signatures not checked: --trust-archive)") {
			t.Errorf("%s --trust-archive: %d %q", tc.name, rc, errs)
		}
	}
	// A bad key setting is an error naming it; --trust-archive reads no keys.
	v, _ = fresh("OFFCC_TRUSTED_CACHE_KEYS=" + filepath.Join(root, "missing.pub"))
	if rc, _, errs := runCache(t, v, "import", signed); rc != 1 || !strings.Contains(errs, "OFFCC_TRUSTED_CACHE_KEYS: ") || strings.Count(errs, "\n") != 1 {
		t.Errorf("bad OFFCC_TRUSTED_CACHE_KEYS: %d %q", rc, errs)
	}
	if rc, _, errs := runCache(t, v, "import", "--trust-archive", signed); rc != 0 {
		t.Errorf("bad OFFCC_TRUSTED_CACHE_KEYS with --trust-archive: %d %q", rc, errs)
	}
	if rc, _, errs := runCache(t, append(vars, "OFFCC_SIGNING_KEY="+pubFile), "export", "--all", "-o", filepath.Join(root, "x.poclbin")); rc != 1 || !strings.Contains(errs, "OFFCC_SIGNING_KEY: ") {
		t.Errorf("export with a bad OFFCC_SIGNING_KEY: %d %q", rc, errs)
	}
	if rc, _, errs := runCache(t, vars, "export", "--all", "-o", filepath.Join(root, "y.poclbin")); rc != 0 || !strings.Contains(errs, "(not signed: no OFFCC_SIGNING_KEY)") {
		t.Errorf("unsigned export: %d %q", rc, errs)
	}
}

// TestCacheStatsShared: stats says how builds with the environment trust
// the shared cache.
func TestCacheStatsShared(t *testing.T) {
	root := t.TempDir()
	keyFile, pubFile := genKeyPair(t, root, "ci")
	_, pub2 := genKeyPair(t, root, "ci2")
	ci, _ := trust.LoadPublicKey(pubFile)
	url := "redis://user:secret@cache.example:6379"
	base := []string{"OFFCC_CACHE_DIR=" + filepath.Join(root, "cache"), "OFFCC_REMOTE_CACHE=" + url}
	for _, tc := range []struct {
		name   string
		vars   []string
		state  string
		text   string
		signer bool
	}{
		{"signed", []string{"OFFCC_SIGNING_KEY=" + keyFile, "OFFCC_TRUSTED_CACHE_KEYS=" + pubFile + ":" + pub2}, "signed",
			"entries signed by ci (" + ci.ID + "), trusting 2 keys (ci, ci2)", true},
		{"verify only", []string{"OFFCC_TRUSTED_CACHE_KEYS=" + pubFile}, "verify-only",
			"entries verified, never written: no signing key (OFFCC_SIGNING_KEY), trusting 1 key (ci)", false},
		{"read-only", []string{"OFFCC_SIGNING_KEY=" + keyFile, "OFFCC_TRUSTED_CACHE_KEYS=" + pubFile, "OFFCC_REMOTE_CACHE_READONLY=1"}, "verify-only",
			"entries verified, never written: read-only", true},
		{"signing key not trusted", []string{"OFFCC_SIGNING_KEY=" + keyFile, "OFFCC_TRUSTED_CACHE_KEYS=" + pub2}, "verify-only",
			"entries verified, never written: the signing key ci (" + ci.ID + ") is not one of OFFCC_TRUSTED_CACHE_KEYS, trusting 1 key (ci2)", true},
		{"insecure", []string{"OFFCC_REMOTE_CACHE_INSECURE=1"}, "insecure",
			"INSECURE (unsigned entries accepted: OFFCC_REMOTE_CACHE_INSECURE=1)", false},
		{"off", nil, "off",
			"off: no trusted keys (OFFCC_TRUSTED_CACHE_KEYS) and not marked insecure (OFFCC_REMOTE_CACHE_INSECURE=1)", false},
		{"bad key", []string{"OFFCC_TRUSTED_CACHE_KEYS=" + filepath.Join(root, "missing.pub")}, "off",
			"off: OFFCC_TRUSTED_CACHE_KEYS: ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := append(append([]string(nil), base...), tc.vars...)
			rc, out, errs := runCache(t, vars, "stats")
			line := "shared cache     redis://user:xxxxx@cache.example:6379: " + tc.text
			if rc != 0 || errs != "" || !strings.Contains(out, line) || strings.Contains(out, "secret") {
				t.Errorf("stats: %d %q; want a line %q:\n%s", rc, errs, line, out)
			}
			rc, out, _ = runCache(t, vars, "stats", "--json")
			var st cacheStatsJSON
			if err := json.Unmarshal([]byte(out), &st); rc != 0 || err != nil {
				t.Fatalf("stats --json: %d %v\n%s", rc, err, out)
			}
			if st.Shared == nil || st.Shared.State != tc.state || strings.Contains(st.Shared.URL, "secret") || (st.Shared.SigningKey != nil) != tc.signer {
				t.Errorf("shared %+v", st.Shared)
			}
		})
	}
	// The counters' line counts untrusted entries.
	dir := filepath.Join(root, "counted")
	os.MkdirAll(filepath.Join(dir, "stats"), 0o777)
	os.WriteFile(filepath.Join(dir, "stats", "1"), []byte(`{"kinds":{"compile":{"misses":3}},"remote":{"misses":3,"untrusted":2}}`), 0o644)
	rc, out, _ := runCache(t, []string{"OFFCC_CACHE_DIR=" + dir}, "stats")
	if rc != 0 || !strings.Contains(out, "shared cache: 0 hits, 3 misses, 2 untrusted, 0 errors") || strings.Contains(out, "shared cache  ") {
		t.Errorf("stats:\n%s", out)
	}
}

func TestCacheStatsZeroOnlyAndZeroedLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	os.MkdirAll(dir, 0o777)
	vars := []string{"OFFCC_CACHE_DIR=" + dir}
	rc, out, _ := runCache(t, vars, "stats")
	if rc != 0 || !regexp.MustCompile(`(?m)^stats zeroed +never$`).MatchString(out) {
		t.Errorf("stats of a new cache: status %d\n%s\nwant a line 'stats zeroed never'", rc, out)
	}
	rc, out, errs := runCache(t, vars, "stats", "--zero-only")
	if rc != 0 || out != "" || errs != "" {
		t.Errorf("--zero-only: status %d, stdout %q, stderr %q; want nothing printed", rc, out, errs)
	}
	rc, out, _ = runCache(t, vars, "stats")
	if rc != 0 || !regexp.MustCompile(`(?m)^stats zeroed +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`).MatchString(out) {
		t.Errorf("stats after --zero-only:\n%s\nwant the time zeroed", out)
	}
	if !regexp.MustCompile(`(?m)^mode +readwrite$`).MatchString(out) {
		t.Errorf("mode of a writable cache:\n%s", out)
	}
}

func TestCacheStatsReadonlyReason(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		vars []string
		want string
	}{
		{[]string{"OFFCC_CACHE_DIR=" + t.TempDir(), "OFFCC_CACHE=readonly"}, "readonly (OFFCC_CACHE=readonly)"},
		{[]string{"OFFCC_CACHE_DIR=" + filepath.Join(file, "cache")}, "readonly (directory not writable: " + file + " is not a directory)"},
	} {
		rc, out, errs := runCache(t, tc.vars, "stats")
		if rc != 0 || !regexp.MustCompile(`(?m)^mode +`+regexp.QuoteMeta(tc.want)+`$`).MatchString(out) {
			t.Errorf("%q: status %d, stderr %q\n%s\nwant mode %s", tc.vars, rc, errs, out, tc.want)
		}
	}
}

func TestCacheImportNotAnArchive(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "rand.bin")
	os.WriteFile(junk, []byte("\x00\x01 not an archive at all"), 0o644)
	rc, _, errs := runCache(t, []string{"OFFCC_CACHE_DIR=" + filepath.Join(dir, "cache")}, "import", junk)
	if rc == 0 || !strings.HasPrefix(errs, "offcc: error: "+junk+": not an offcc cache archive (") || strings.Count(errs, "\n") != 1 {
		t.Errorf("status %d, stderr %q; want one line naming %s", rc, errs, junk)
	}
}
