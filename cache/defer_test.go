package cache

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/offcc/offcc/actions"
)

// chainBuild is a two-step build: mid packs in into the temporary
// directory, final packs mid into the user's output.
type chainBuild struct {
	in, out, root string
	runs          [2]atomic.Int32
}

// build builds once in a temporary directory under root that is made only
// when the session asks (PrepareTempDir); it returns the counts of the
// build, whether the directory was made, and whether mid was there at the
// end.
func (b *chainBuild) build(t *testing.T, c *Cache) (st Stats, made, midWritten bool) {
	t.Helper()
	temp := filepath.Join(b.root, "t"+filepath.Base(t.TempDir()))
	mid := filepath.Join(temp, "mid.bin")
	step := func(i int, inA, outA *actions.Artifact) *actions.Action {
		in, out := inA.Path, outA.Path
		return &actions.Action{
			Kind: actions.Package, Inputs: []*actions.Artifact{inA},
			Outputs: []*actions.Artifact{outA},
			Command: []string{os.Args[0], "pack", "-o", out, in},
			Run: func(ctx context.Context, sh *actions.Shell) error {
				b.runs[i].Add(1)
				data, err := os.ReadFile(in)
				if err != nil {
					return err
				}
				return sh.WriteFile(out, append([]byte("packed:"), data...), 0o644)
			},
		}
	}
	var g actions.Graph
	midA := actions.NewArtifact(mid)
	g.MustAdd(step(0, actions.NewArtifact(b.in), midA))
	g.MustAdd(step(1, midA, actions.NewArtifact(b.out)))
	var stderr bytes.Buffer
	sh := actions.NewShell(actions.ShellOptions{Stdout: &stderr, Stderr: &stderr, TempDir: temp})
	var once sync.Once
	var mkErr error
	s := c.NewSession(SessionOptions{TempDir: temp, Self: os.Args[0], Env: os.Environ(), PrepareTempDir: func() error {
		once.Do(func() { made, mkErr = true, os.Mkdir(temp, 0o700) })
		return mkErr
	}})
	if err := actions.Execute(context.Background(), &g, sh, actions.Options{Jobs: 2, Cache: s}); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr.String())
	}
	st = s.Stats()
	s.Close()
	_, err := os.Stat(mid)
	return st, made, err == nil
}

// TestDeferredRestore: a build whose steps all hit writes only the user's
// output (no temporary directory, no intermediate file); when a later step
// misses, the intermediate it reads is written first, with its bytes; a
// damaged intermediate entry is a miss of its own step.
func TestDeferredRestore(t *testing.T) {
	work := t.TempDir()
	b := &chainBuild{in: filepath.Join(work, "in.txt"), out: filepath.Join(work, "out.bin"), root: t.TempDir()}
	c := Open(Config{Dir: filepath.Join(t.TempDir(), "cache"), MaxSize: DefaultMaxSize})
	(&packBuild{in: b.in}).setInput(t, "data")

	st, made, _ := b.build(t, c)
	if k := st.Kinds["package"]; k == nil || k.Misses != 2 || !made {
		t.Fatalf("first build: %+v, directory made %v; want two misses", k, made)
	}
	want := "packed:packed:data"
	if got := string(mustRead(t, b.out)); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}

	os.Remove(b.out)
	st, made, midWritten := b.build(t, c)
	if k := st.Kinds["package"]; k == nil || k.Hits != 2 || b.runs[0].Load() != 1 || b.runs[1].Load() != 1 {
		t.Fatalf("warm build: %+v, runs %d %d; want two hits", k, b.runs[0].Load(), b.runs[1].Load())
	}
	if made || midWritten {
		t.Errorf("warm build: temporary directory made %v, intermediate written %v; want neither", made, midWritten)
	}
	if got := string(mustRead(t, b.out)); got != want {
		t.Errorf("restored output %q, want %q", got, want)
	}

	// The final step's entry damaged: it runs, reading the intermediate
	// restored for it.
	for _, e := range walkEntries(t, c.Store) {
		if e.Kind == KindResult && len(e.Blobs) == 1 && e.Blobs[0].Size == int64(len(want)) {
			data := mustRead(t, e.Blobs[0].Path)
			data[len(data)-1] ^= 1
			if err := os.WriteFile(e.Blobs[0].Path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.Remove(b.out)
	st, made, midWritten = b.build(t, c)
	if k := st.Kinds["package"]; k == nil || k.Hits != 1 || k.Misses != 1 || b.runs[1].Load() != 2 || b.runs[0].Load() != 1 {
		t.Fatalf("damaged final entry: %+v, runs %d %d; want the final step alone to run", k, b.runs[0].Load(), b.runs[1].Load())
	}
	if !made || !midWritten {
		t.Errorf("damaged final entry: temporary directory made %v, intermediate written %v; want both", made, midWritten)
	}
	if got := string(mustRead(t, b.out)); got != want {
		t.Errorf("rebuilt output %q, want %q", got, want)
	}

	// The intermediate's entry damaged: its step runs; the final hits.
	for _, e := range walkEntries(t, c.Store) {
		if e.Kind == KindResult && len(e.Blobs) == 1 && e.Blobs[0].Size == int64(len("packed:data")) {
			data := mustRead(t, e.Blobs[0].Path)
			data[0] ^= 1
			if err := os.WriteFile(e.Blobs[0].Path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.Remove(b.out)
	st, _, _ = b.build(t, c)
	if k := st.Kinds["package"]; k == nil || k.Hits != 1 || k.Misses != 1 || b.runs[0].Load() != 2 || b.runs[1].Load() != 2 {
		t.Fatalf("damaged intermediate entry: %+v, runs %d %d; want the first step alone to run", k, b.runs[0].Load(), b.runs[1].Load())
	}
	if got := string(mustRead(t, b.out)); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// walkEntries returns the store's entries, blob paths set.
func walkEntries(t *testing.T, s *DirStore) []*Entry {
	t.Helper()
	var out []*Entry
	if err := s.Walk(func(key Sum, e *Entry) error {
		if full, err := s.Get(key); err == nil {
			out = append(out, full)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
