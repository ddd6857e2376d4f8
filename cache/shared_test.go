package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/trust"
)

// runExplained is packBuild.run with OFFCC_CACHE_DEBUG's explanations,
// returning them too, and the session's shared-cache counts; a warning
// fails the test.
func (p *packBuild) runExplained(t *testing.T, c *Cache) (KindStats, RemoteStats, string) {
	t.Helper()
	var explain bytes.Buffer
	k, remote, _ := p.build(t, c, SessionOptions{Explain: &explain, Warn: func(m string) { t.Errorf("warning: %s", m) }})
	return k, remote, explain.String()
}

// resultKeyOf returns the result key the cache c holds for p's action as
// its input is now.
func (p *packBuild) resultKeyOf(t *testing.T, c *Cache) Sum {
	t.Helper()
	s := c.NewSession(SessionOptions{TempDir: p.temp, Self: os.Args[0], Env: os.Environ()})
	key, status := s.Probe(p.action())
	if status != "hit" {
		t.Fatalf("Probe: %s %s", key, status)
	}
	rk, err := ParseSum(key)
	if err != nil {
		t.Fatal(err)
	}
	return rk
}

// TestSessionSharedSwappedEntry is the attack the signatures defeat: a CI
// machine fills the shared cache; someone who can write to it copies the
// entry of one input's result over another's. A developer's fresh build
// of the first input must miss, build, and have the right output; without
// signatures (insecure) it would have restored the other input's output
// and called it a hit.
func TestSessionSharedSwappedEntry(t *testing.T) {
	shared := NewDirStore(t.TempDir())
	ci, err := trust.Generate("ci")
	if err != nil {
		t.Fatal(err)
	}
	trusted := trust.NewKeyring(&ci.PublicKey)
	open := func(keys *trust.Settings, insecure bool) *Cache {
		c := Open(Config{Dir: filepath.Join(t.TempDir(), "cache"), MaxSize: DefaultMaxSize, RemoteInsecure: insecure})
		c.Remote, c.RemoteName, c.Keys = shared, "shared", keys
		return c
	}
	work := t.TempDir()
	p := &packBuild{in: filepath.Join(work, "in.txt"), out: filepath.Join(work, "out.bin"), temp: t.TempDir()}

	// CI builds both versions.
	ciCache := open(&trust.Settings{SigningKey: ci, CacheWriters: trusted}, false)
	p.setInput(t, "version B")
	p.runExplained(t, ciCache)
	keyB := p.resultKeyOf(t, ciCache)
	p.setInput(t, "version A")
	p.runExplained(t, ciCache)
	keyA := p.resultKeyOf(t, ciCache)
	if p.runs.Load() != 2 {
		t.Fatalf("CI ran %d times", p.runs.Load())
	}

	// A developer's fresh cache restores version A from the shared one.
	dev := open(&trust.Settings{CacheWriters: trusted}, false)
	os.Remove(p.out)
	if st, rs, _ := p.runExplained(t, dev); st.Hits != 1 || rs.Hits == 0 || rs.Untrusted != 0 || p.output(t) != "packed:version A" {
		t.Fatalf("developer's build: %+v, shared %+v, output %q", st, rs, p.output(t))
	}

	// The attack: B's index copied over A's key.
	e, err := shared.Get(keyB)
	if err != nil {
		t.Fatal(err)
	}
	if err := shared.Replace(keyA, e); err != nil {
		t.Fatal(err)
	}

	// Without signatures the attack works: that is what it defeats.
	naive := open(nil, true)
	os.Remove(p.out)
	if st, rs, _ := p.runExplained(t, naive); st.Hits != 1 || rs.Untrusted == 0 || p.output(t) != "packed:version B" {
		t.Fatalf("insecure build over the swapped entry: %+v, shared %+v, output %q (the attack should work here)", st, rs, p.output(t))
	}

	// With them, a fresh developer cache misses, builds, and is right.
	dev2 := open(&trust.Settings{CacheWriters: trusted}, false)
	os.Remove(p.out)
	runs := p.runs.Load()
	st, rs, explain := p.runExplained(t, dev2)
	if st.Hits != 0 || st.Misses != 1 || p.runs.Load() != runs+1 {
		t.Errorf("build over the swapped entry: %+v, %d runs; want a miss and a run", st, p.runs.Load()-runs)
	}
	if got := p.output(t); got != "packed:version A" {
		t.Errorf("output %q, want version A's", got)
	}
	if rs.Untrusted != 1 || rs.Hits != 0 {
		t.Errorf("shared counts %+v, want one untrusted entry", rs)
	}
	if !strings.Contains(explain, "shared cache: entry "+keyA.String()[:16]) || !strings.Contains(explain, "not signed by a trusted key") {
		t.Errorf("OFFCC_CACHE_DEBUG does not say why:\n%s", explain)
	}
	// The developer has no signing key: the shared entry is left as it is.
	if e, err := shared.Get(keyA); err != nil || e.Signature == nil || e.Signature.Key != ci.ID {
		t.Errorf("shared entry after the developer's build: %v, %v", e, err)
	}
	if tot := dev2.ReadStats(); tot.Remote.Untrusted != 1 {
		t.Errorf("cache statistics: %+v", tot.Remote)
	}

	// CI, building A again, repairs the entry: its Put replaces what
	// does not verify.
	p.runExplained(t, open(&trust.Settings{SigningKey: ci, CacheWriters: trusted}, false))
	dev3 := open(&trust.Settings{CacheWriters: trusted}, false)
	os.Remove(p.out)
	if st, rs, _ := p.runExplained(t, dev3); st.Hits != 1 || rs.Untrusted != 0 || p.output(t) != "packed:version A" {
		t.Errorf("after CI's rebuild: %+v, shared %+v, output %q", st, rs, p.output(t))
	}
}
