package cache

import (
	"github.com/offcc/offcc/config"

	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1024", 1024, true},
		{"100M", 100 << 20, true},
		{"5G", 5 << 30, true},
		{"5g", 5 << 30, true},
		{"2T", 2 << 40, true},
		{"64K", 64 << 10, true},
		{"1.5G", 3 << 29, true},
		{"5GB", 5 << 30, true},
		{"5GiB", 5 << 30, true},
		{"100MiB", 100 << 20, true},
		{"512B", 512, true},
		{" 7M ", 7 << 20, true},
		{"1e3", 1000, true},

		{"", 0, false},
		{"garbage", 0, false},
		{"G", 0, false},
		{"5X", 0, false},
		{"5 GB extra", 0, false},
		{"-1", 0, false},
		{"-5G", 0, false},
		{"nan", 0, false},
		{"NaN", 0, false},
		{"inf", 0, false},
		{"+Inf", 0, false},
		{"9999999T", 0, false},
		{"1e30", 0, false},
	}
	for _, tt := range tests {
		got, err := config.ParseSize(tt.in)
		if (err == nil) != tt.ok || tt.ok && got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err == nil && got < 0 {
			t.Errorf("ParseSize(%q) = %d: negative", tt.in, got)
		}
	}
}

// envOf returns a getenv for the given NAME=VALUE pairs.
func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		name, value, _ := strings.Cut(s, "=")
		m[name] = value
	}
	return func(name string) string { return m[name] }
}

func TestConfigFromEnv(t *testing.T) {
	home := "/home/u"
	def := filepath.Join(home, ".cache", "offcc")
	tests := []struct {
		name string
		env  []string
		want Config
		err  bool
	}{
		{"defaults", []string{"HOME=" + home}, Config{Dir: def, Mode: ReadWrite, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=1", []string{"HOME=" + home, "OFFCC_CACHE=1"}, Config{Dir: def, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=on", []string{"HOME=" + home, "OFFCC_CACHE=on"}, Config{Dir: def, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=0", []string{"HOME=" + home, "OFFCC_CACHE=0"}, Config{Dir: def, Mode: Off, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=off", []string{"HOME=" + home, "OFFCC_CACHE=off"}, Config{Dir: def, Mode: Off, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=OFF", []string{"HOME=" + home, "OFFCC_CACHE=OFF"}, Config{Dir: def, Mode: Off, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=false", []string{"HOME=" + home, "OFFCC_CACHE=false"}, Config{Dir: def, Mode: Off, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=readonly", []string{"HOME=" + home, "OFFCC_CACHE=readonly"}, Config{Dir: def, Mode: ReadOnly, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=read-only", []string{"HOME=" + home, "OFFCC_CACHE=read-only"}, Config{Dir: def, Mode: ReadOnly, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=ro", []string{"HOME=" + home, "OFFCC_CACHE=ro"}, Config{Dir: def, Mode: ReadOnly, MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE=garbage", []string{"HOME=" + home, "OFFCC_CACHE=garbage"}, Config{}, true},
		{"OFFCC_CACHE=2", []string{"HOME=" + home, "OFFCC_CACHE=2"}, Config{}, true},

		{"OFFCC_CACHE_SIZE=5G", []string{"HOME=" + home, "OFFCC_CACHE_SIZE=5G"}, Config{Dir: def, MaxSize: 5 << 30}, false},
		{"OFFCC_CACHE_SIZE=100M", []string{"HOME=" + home, "OFFCC_CACHE_SIZE=100M"}, Config{Dir: def, MaxSize: 100 << 20}, false},
		{"OFFCC_CACHE_SIZE=1024", []string{"HOME=" + home, "OFFCC_CACHE_SIZE=1024"}, Config{Dir: def, MaxSize: 1024}, false},
		{"OFFCC_CACHE_SIZE=garbage", []string{"HOME=" + home, "OFFCC_CACHE_SIZE=garbage"}, Config{}, true},
		{"OFFCC_CACHE_SIZE=-1", []string{"HOME=" + home, "OFFCC_CACHE_SIZE=-1"}, Config{}, true},

		{"OFFCC_CACHE_DIR", []string{"HOME=" + home, "XDG_CACHE_HOME=/xdg", "OFFCC_CACHE_DIR=/c/d/"}, Config{Dir: "/c/d", MaxSize: DefaultMaxSize}, false},
		{"OFFCC_CACHE_DIR relative", []string{"OFFCC_CACHE_DIR=rel/./d"}, Config{Dir: absPath("rel/d"), MaxSize: DefaultMaxSize}, false},
		{"XDG_CACHE_HOME", []string{"HOME=" + home, "XDG_CACHE_HOME=/xdg"}, Config{Dir: "/xdg/offcc", MaxSize: DefaultMaxSize}, false},
		{"XDG_CACHE_HOME relative is ignored", []string{"HOME=" + home, "XDG_CACHE_HOME=xdg"}, Config{Dir: def, MaxSize: DefaultMaxSize}, false},
		{"HOME", []string{"HOME=/h"}, Config{Dir: "/h/.cache/offcc", MaxSize: DefaultMaxSize}, false},

		{"OFFCC_CACHE_DEBUG=1", []string{"HOME=" + home, "OFFCC_CACHE_DEBUG=1"}, Config{Dir: def, MaxSize: DefaultMaxSize, Debug: true}, false},
		{"OFFCC_CACHE_DEBUG=0", []string{"HOME=" + home, "OFFCC_CACHE_DEBUG=0"}, Config{Dir: def, MaxSize: DefaultMaxSize}, false},

		{"OFFCC_REMOTE_CACHE", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE=redis://h:1"}, Config{Dir: def, MaxSize: DefaultMaxSize, RemoteURL: "redis://h:1"}, false},
		{"OFFCC_REMOTE_CACHE|readonly", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE=redis://h:1|readonly"}, Config{Dir: def, MaxSize: DefaultMaxSize, RemoteURL: "redis://h:1", RemoteReadOnly: true}, false},
		{"OFFCC_REMOTE_CACHE_READONLY=1", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE=redis://h:1", "OFFCC_REMOTE_CACHE_READONLY=1"}, Config{Dir: def, MaxSize: DefaultMaxSize, RemoteURL: "redis://h:1", RemoteReadOnly: true}, false},
		{"OFFCC_REMOTE_CACHE_INSECURE=1", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE=redis://h:1", "OFFCC_REMOTE_CACHE_INSECURE=1"}, Config{Dir: def, MaxSize: DefaultMaxSize, RemoteURL: "redis://h:1", RemoteInsecure: true}, false},
		{"OFFCC_REMOTE_CACHE_INSECURE=0", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE=redis://h:1", "OFFCC_REMOTE_CACHE_INSECURE=0"}, Config{Dir: def, MaxSize: DefaultMaxSize, RemoteURL: "redis://h:1"}, false},
		{"OFFCC_REMOTE_CACHE_INSECURE without a shared cache", []string{"HOME=" + home, "OFFCC_REMOTE_CACHE_INSECURE=1"}, Config{Dir: def, MaxSize: DefaultMaxSize}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(envOf(tt.env...))
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "OFFCC_CACHE") {
					t.Errorf("error %q does not name the variable", err)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestConfigFromEnvNoHome: with no HOME in the environment given nor in
// the process's, there is no directory and the cache is off.
func TestConfigFromEnvNoHome(t *testing.T) {
	t.Setenv("HOME", "")
	got, err := ConfigFromEnv(envOf())
	if err != nil || got.Mode != Off || got.Dir != "" {
		t.Errorf("no HOME: %+v, %v; want the cache off", got, err)
	}
	if Open(got) != nil {
		t.Error("Open of a cache with no directory is not nil")
	}
	// The process's HOME is the last fallback.
	t.Setenv("HOME", "/proc-home")
	if got := DefaultDir(envOf()); got != "/proc-home/.cache/offcc" {
		t.Errorf("DefaultDir with HOME only in the process = %q", got)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		mode     Mode
		open     bool
		writable bool
	}{{ReadWrite, true, true}, {ReadOnly, true, false}, {Off, false, false}} {
		c := Open(Config{Dir: dir, Mode: tt.mode, MaxSize: DefaultMaxSize})
		if (c != nil) != tt.open || c.Writable() != tt.writable {
			t.Errorf("mode %v: open %v writable %v; want %v %v", tt.mode, c != nil, c.Writable(), tt.open, tt.writable)
		}
		if c != nil && c.Store.Dir != dir {
			t.Errorf("mode %v: store in %s, want %s", tt.mode, c.Store.Dir, dir)
		}
	}
}

// TestMaybeTrim checks that a build trims at most every TrimInterval, by
// the marker file, and that a trim brings the cache under 90% of MaxSize.
func TestMaybeTrim(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		marker string // "" for none
		trims  bool
	}{
		{"no marker", "", true},
		{"trimmed a minute ago", fmt.Sprint(now.Add(-time.Minute).Unix()), false},
		{"trimmed just within the interval", fmt.Sprint(now.Add(-TrimInterval + time.Minute).Unix()), false},
		{"trimmed an interval ago", fmt.Sprint(now.Add(-TrimInterval - time.Minute).Unix()), true},
		{"marker from the future", fmt.Sprint(now.Add(48 * time.Hour).Unix()), true},
		{"unreadable marker", "yesterday", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Open(Config{Dir: t.TempDir(), MaxSize: 1 << 20})
			// 2 MiB of entries in a cache of 1 MiB.
			for i := 0; i < 8; i++ {
				putEntry(t, c.Store, testKey(fmt.Sprint(i)), "{}", incompressible(256<<10, int64(i)))
				setUsed(t, c.Store, testKey(fmt.Sprint(i)), now.Add(-time.Duration(i)*time.Minute))
			}
			marker := filepath.Join(c.Dir, trimMarker)
			if tt.marker != "" {
				if err := os.WriteFile(marker, []byte(tt.marker+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c.MaybeTrim(now)
			u, err := c.Usage()
			if err != nil {
				t.Fatal(err)
			}
			n, size := u[KindResult][0], u[KindResult][1]
			if trimmed := n < 8; trimmed != tt.trims {
				t.Fatalf("trimmed = %v (%d entries left), want %v", trimmed, n, tt.trims)
			}
			if !tt.trims {
				return
			}
			if size > c.MaxSize/10*9 || n != 3 {
				t.Errorf("after a trim: %d entries, %d bytes; want 3 entries under %d", n, size, c.MaxSize/10*9)
			}
			for i := 0; i < 3; i++ {
				if _, err := c.Store.Get(testKey(fmt.Sprint(i))); err != nil {
					t.Errorf("entry used %d minutes ago trimmed", i)
				}
			}
			if data, _ := os.ReadFile(marker); strings.TrimSpace(string(data)) != fmt.Sprint(now.Unix()) {
				t.Errorf("marker %q, want the trim's time %d", data, now.Unix())
			}
		})
	}
}

func TestStats(t *testing.T) {
	c := Open(Config{Dir: t.TempDir(), MaxSize: DefaultMaxSize})
	st := Stats{Kinds: map[string]*KindStats{
		"compile": {Hits: 2, Misses: 1, SavedMillis: 30, Uncacheable: map[string]int64{"-save-temps": 1}},
		"package": {Misses: 1, NotStored: map[string]int64{"an output file is missing": 2}, StoredBytes: 10},
	}}
	c.addStats(st)
	c.addStats(st)
	got := c.ReadStats()
	comp, pack := got.Kinds["compile"], got.Kinds["package"]
	if comp == nil || pack == nil || comp.Hits != 4 || comp.Misses != 2 || comp.SavedMillis != 60 || comp.Uncacheable["-save-temps"] != 2 ||
		pack.Misses != 2 || pack.NotStored["an output file is missing"] != 4 || pack.StoredBytes != 20 {
		t.Errorf("stats after adding twice: compile %+v package %+v", comp, pack)
	}
	if tot := got.Total(); tot.Hits != 4 || tot.Misses != 4 {
		t.Errorf("total %+v", tot)
	}
	if err := c.ZeroStats(); err != nil {
		t.Fatal(err)
	}
	if got := c.ReadStats(); len(got.Kinds) != 0 {
		t.Errorf("after ZeroStats: %+v", got.Kinds)
	}
	// A damaged shard starts again from zero.
	name := filepath.Join(c.statsDir(), fmt.Sprint(os.Getpid()%statsShards))
	os.WriteFile(name, []byte("{damaged"), 0o644)
	c.addStats(st)
	if got := c.ReadStats(); got.Kinds["compile"] == nil || got.Kinds["compile"].Hits != 2 {
		t.Errorf("after a damaged shard: %+v", got.Kinds["compile"])
	}
}

// packBuild is a one-action build: an in-process "pack" step that writes
// out from in, counting its runs.
type packBuild struct {
	in, out, temp string
	runs          atomic.Int32
}

func (p *packBuild) action() *actions.Action {
	return &actions.Action{
		Kind:    actions.Package,
		Inputs:  []*actions.Artifact{actions.NewArtifact(p.in)},
		Outputs: []*actions.Artifact{actions.NewArtifact(p.out)},
		Command: []string{os.Args[0], "pack", "-o", p.out, p.in},
		Run: func(ctx context.Context, sh *actions.Shell) error {
			p.runs.Add(1)
			data, err := os.ReadFile(p.in)
			if err != nil {
				return err
			}
			fmt.Fprintf(sh.Stderr(), "warning: packing %d bytes\n", len(data))
			return sh.WriteFile(p.out, append([]byte("packed:"), data...), 0o644)
		},
	}
}

// run builds once with the cache c and returns the session's counts for
// the package step and what the build printed on standard error.
func (p *packBuild) run(t *testing.T, c *Cache) (KindStats, string) {
	t.Helper()
	k, _, stderr := p.build(t, c, SessionOptions{})
	return k, stderr
}

// build builds once with the cache c, in a session of opt (its TempDir,
// Self and Env set here), and returns the session's counts for the package
// step and for the shared cache, and what the build printed on standard
// error.
func (p *packBuild) build(t *testing.T, c *Cache, opt SessionOptions) (KindStats, RemoteStats, string) {
	t.Helper()
	var g actions.Graph
	a := g.MustAdd(p.action())
	var stdout, stderr bytes.Buffer
	sh := actions.NewShell(actions.ShellOptions{Stdout: &stdout, Stderr: &stderr, TempDir: p.temp})
	opt.TempDir, opt.Self, opt.Env = p.temp, os.Args[0], os.Environ()
	s := c.NewSession(opt)
	if err := actions.Execute(context.Background(), &g, sh, actions.Options{Jobs: 2, Cache: s}); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr.String())
	}
	st := s.Stats()
	s.Close()
	k := KindStats{}
	if ks := st.Kinds[a.Kind.String()]; ks != nil {
		k = *ks
	}
	return k, st.Remote, stderr.String()
}

// setInput writes the input and waits until it is older than the slack
// for a file changed while an action read it (else nothing is stored).
func (p *packBuild) setInput(t *testing.T, data string) {
	t.Helper()
	if err := os.WriteFile(p.in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
}

func (p *packBuild) output(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(p.out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// entries counts the sound entries of a store by kind.
func entries(t *testing.T, s *DirStore) map[Kind]int {
	t.Helper()
	n := map[Kind]int{}
	if err := s.Walk(func(_ Sum, e *Entry) error { n[e.Kind]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSession runs a one-action build through actions.Execute with the
// cache: a rebuild restores the output without running the action; a
// changed input, or a damaged stored output, runs it again.
func TestSession(t *testing.T) {
	work := t.TempDir()
	p := &packBuild{in: filepath.Join(work, "in.txt"), out: filepath.Join(work, "out.bin"), temp: t.TempDir()}
	c := Open(Config{Dir: filepath.Join(t.TempDir(), "cache"), MaxSize: DefaultMaxSize})
	p.setInput(t, "version 1")

	st, _ := p.run(t, c)
	if st.Misses != 1 || st.Hits != 0 || p.runs.Load() != 1 || len(st.NotStored) != 0 || len(st.Uncacheable) != 0 {
		t.Fatalf("first build: %+v, %d runs; want a miss, stored", st, p.runs.Load())
	}
	first := p.output(t)
	if first != "packed:version 1" {
		t.Fatalf("output %q", first)
	}
	if n := entries(t, c.Store); n[KindResult] != 1 {
		t.Errorf("after the first build: entries %v, want one result", n)
	}

	os.Remove(p.out)
	st, stderr := p.run(t, c)
	if st.Hits != 1 || st.Misses != 0 || p.runs.Load() != 1 {
		t.Fatalf("second build: %+v, %d runs; want a hit and no run", st, p.runs.Load())
	}
	if got := p.output(t); got != first {
		t.Errorf("restored output %q, want %q", got, first)
	}
	if !strings.Contains(stderr, "warning: packing 9 bytes") {
		t.Errorf("a hit did not print the action's messages: %q", stderr)
	}
	if st.RestoredBytes != int64(len(first)) {
		t.Errorf("restored %d bytes, want %d", st.RestoredBytes, len(first))
	}
	tot := c.ReadStats()
	if k := tot.Kinds["package"]; k == nil || k.Hits != 1 || k.Misses != 1 {
		t.Errorf("cache statistics after two builds: %+v, want 1 hit, 1 miss", k)
	}

	// Another input: a miss.
	p.setInput(t, "version 2")
	if st, _ := p.run(t, c); st.Misses != 1 || p.runs.Load() != 2 || p.output(t) != "packed:version 2" {
		t.Fatalf("changed input: %+v, %d runs, output %q; want a miss", st, p.runs.Load(), p.output(t))
	}

	// A damaged stored output (same size): a miss, and the entry is
	// replaced with a sound one.
	s := c.NewSession(SessionOptions{TempDir: p.temp, Self: os.Args[0], Env: os.Environ()})
	key, status := s.Probe(p.action())
	if status != "hit" {
		t.Fatalf("Probe = %s %s, want a hit", key, status)
	}
	rk, err := ParseSum(key)
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(c.Store.EntryDir(rk), "out0")
	data := mustRead(t, blob)
	data[0] ^= 0x20
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ = p.run(t, c)
	if st.Misses != 1 || st.Hits != 0 || p.runs.Load() != 3 {
		t.Fatalf("damaged entry: %+v, %d runs; want a miss and a run", st, p.runs.Load())
	}
	if got := p.output(t); got != "packed:version 2" {
		t.Errorf("after a damaged entry: output %q", got)
	}
	e, err := c.Store.Get(rk)
	if err != nil {
		t.Fatalf("damaged entry not replaced: %v", err)
	}
	if got, err := readBlob(c.Store, e.Blobs[0]); err != nil || string(got) != "packed:version 2" {
		t.Errorf("replaced entry: %q, %v", got, err)
	}
	os.Remove(p.out)
	if st, _ := p.run(t, c); st.Hits != 1 || p.runs.Load() != 3 || p.output(t) != "packed:version 2" {
		t.Errorf("after the replacement: %+v, %d runs; want a hit", st, p.runs.Load())
	}

	// Read-only: a hit where there is an entry; a miss stores nothing.
	ro := Open(Config{Dir: c.Dir, Mode: ReadOnly, MaxSize: DefaultMaxSize})
	before := entries(t, c.Store)
	if st, _ := p.run(t, ro); st.Hits != 1 || p.runs.Load() != 3 {
		t.Errorf("read-only over a full cache: %+v, %d runs; want a hit", st, p.runs.Load())
	}
	p.setInput(t, "version 3")
	if st, _ := p.run(t, ro); st.Misses != 1 || p.runs.Load() != 4 || len(st.NotStored) != 0 {
		t.Errorf("read-only, new input: %+v, %d runs; want a miss", st, p.runs.Load())
	}
	if after := entries(t, c.Store); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a read-only build changed the entries: %v, was %v", after, before)
	}
}

// TestSessionReadOnlyEmpty: a read-only build on an empty cache runs every
// action and writes no entry.
func TestSessionReadOnlyEmpty(t *testing.T) {
	work := t.TempDir()
	p := &packBuild{in: filepath.Join(work, "in.txt"), out: filepath.Join(work, "out.bin"), temp: t.TempDir()}
	p.setInput(t, "data")
	dir := filepath.Join(t.TempDir(), "cache")
	ro := Open(Config{Dir: dir, Mode: ReadOnly, MaxSize: DefaultMaxSize})
	for i := 1; i <= 2; i++ {
		if st, _ := p.run(t, ro); st.Misses != 1 || p.runs.Load() != int32(i) {
			t.Errorf("read-only build %d: %+v, %d runs; want a miss", i, st, p.runs.Load())
		}
	}
	if n := entries(t, ro.Store); len(n) != 0 {
		t.Errorf("a read-only build stored %v", n)
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if len(n.Name()) == 2 && isHex(n.Name()) {
			t.Errorf("a read-only build made shard %s", n.Name())
		}
	}
}

// absPath is filepath.Abs for paths that always have one.
func absPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return abs
}
