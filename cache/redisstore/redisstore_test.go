package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// setup starts a server and opens a store on it, and a plain client for
// looking at (and tampering with) the keys.
func setup(t *testing.T, opt redisstore.Options) (*redisstore.Store, *redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	s, err := redisstore.Open(srv.URL, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ro, _ := redis.ParseURL(srv.URL)
	rc := redis.NewClient(ro)
	t.Cleanup(func() { rc.Close() })
	return s, srv, rc
}

// blob writes data to a file in dir and returns it as a blob.
func blob(t *testing.T, dir, name string, data []byte) cache.Blob {
	t.Helper()
	path := filepath.Join(dir, name+"-"+cache.SumBytes(data).String()[:8])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cache.Blob{Name: name, Size: int64(len(data)), Sum: cache.SumBytes(data), Mode: 0o644, Path: path}
}

func random(n int, seed int64) []byte {
	data := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(data)
	return data
}

func key(text string) cache.Sum { return cache.SumBytes([]byte(text)) }

func readBlob(s *redisstore.Store, b cache.Blob) ([]byte, error) {
	r, err := s.OpenBlob(b)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// checkEntry checks that got is want as stored: blobs without paths.
func checkEntry(t *testing.T, s *redisstore.Store, got, want *cache.Entry, data map[string][]byte) {
	t.Helper()
	if got.Kind != want.Kind || !bytes.Equal(got.Record, want.Record) || len(got.Blobs) != len(want.Blobs) {
		t.Fatalf("got entry %+v, want %+v", got, want)
	}
	for i, b := range got.Blobs {
		w := want.Blobs[i]
		if b.Name != w.Name || b.Size != w.Size || b.Sum != w.Sum || b.Mode != w.Mode || b.Path != "" {
			t.Errorf("blob %d = %+v, want %+v with no path", i, b, w)
		}
		bytes, err := readBlob(s, b)
		if err != nil || string(bytes) != string(data[b.Name]) {
			t.Errorf("blob %s: read %d bytes, %v; want %d bytes", b.Name, len(bytes), err, len(data[b.Name]))
		}
	}
}

func keys(t *testing.T, rc *redis.Client, pattern string) []string {
	t.Helper()
	ks, err := rc.Keys(context.Background(), pattern).Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestRoundTrip(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{ChunkSize: 1000})
	dir := t.TempDir()
	data := map[string][]byte{"out0": {}, "out1": random(3500, 1), "out2": []byte("hello\n")}
	a := &cache.Entry{Kind: cache.KindResult, Record: []byte("{\"latin1\":\"\xe9\"}")}
	for _, name := range []string{"out0", "out1", "out2"} {
		a.Blobs = append(a.Blobs, blob(t, dir, name, data[name]))
	}
	if err := s.Put(key("a"), a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(key("a"))
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, s, got, a, data)
	if up, down := s.Transferred(); up != 3506 || down != 3506 {
		t.Errorf("Transferred() = %d, %d; want 3506, 3506", up, down)
	}
	// The 3500 bytes are 4 chunks of at most 1000, beside the metadata.
	if n, err := rc.HLen(context.Background(), "offcc:b:"+a.Blobs[1].Sum.String()).Result(); n != 5 || err != nil {
		t.Errorf("HLEN of the 3500-byte blob = %d, %v; want 5", n, err)
	}
	// A second entry shares out1: only its new blob is uploaded.
	b := &cache.Entry{Kind: cache.KindResult, Record: []byte("b"),
		Blobs: []cache.Blob{blob(t, dir, "x", data["out1"]), blob(t, dir, "y", []byte("new"))}}
	if err := s.Put(key("b"), b); err != nil {
		t.Fatal(err)
	}
	if up, _ := s.Transferred(); up != 3506+3 {
		t.Errorf("after the second Put, %d bytes uploaded; want %d (shared blob uploaded once)", up, 3506+3)
	}
	got, err = s.Get(key("b"))
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, s, got, b, map[string][]byte{"x": data["out1"], "y": []byte("new")})
	if ks := keys(t, rc, "offcc:u:*"); len(ks) != 0 {
		t.Errorf("upload keys left: %q", ks)
	}
	if ks := keys(t, rc, "offcc:b:*"); len(ks) != 4 {
		t.Errorf("blob keys %q; want 4", ks)
	}
}

// TestConcurrentPuts races writers of one blob under different keys, and
// of one key.
func TestConcurrentPuts(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{ChunkSize: 4096})
	dir := t.TempDir()
	data := random(100000, 7)
	b := blob(t, dir, "out0", data)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			errs <- s.Put(key(fmt.Sprint(i%4)), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}})
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range 4 {
		e, err := s.Get(key(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		checkEntry(t, s, e, &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{{Name: "out0", Size: 100000, Sum: cache.SumBytes(data), Mode: 0o644}}}, map[string][]byte{"out0": data})
	}
	if ks := keys(t, rc, "offcc:u:*"); len(ks) != 0 {
		t.Errorf("upload keys left: %q", ks)
	}
}

func TestPutKeepsReplaceReplaces(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{})
	one := &cache.Entry{Kind: cache.KindManifest, Record: []byte("one")}
	two := &cache.Entry{Kind: cache.KindManifest, Record: []byte("two")}
	k := key("k")
	record := func() string {
		t.Helper()
		e, err := s.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		return string(e.Record)
	}
	if err := s.Put(k, one); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(k, two); err != nil || record() != "one" {
		t.Errorf("Put over a sound entry: %v, record %q; want it kept", err, record())
	}
	if err := s.Replace(k, two); err != nil || record() != "two" {
		t.Errorf("Replace: %v, record %q; want two", err, record())
	}
	// A damaged entry is not kept by Put.
	rc.Set(context.Background(), "offcc:e:"+k.String(), "garbage", 0)
	if err := s.Put(k, one); err != nil || record() != "one" {
		t.Errorf("Put over a damaged entry: %v, record %q; want one", err, record())
	}
}

func TestMissingAndRemove(t *testing.T) {
	s, _, _ := setup(t, redisstore.Options{})
	if _, err := s.Get(key("none")); err != cache.ErrNotFound {
		t.Errorf("Get of a missing key: %v, want ErrNotFound", err)
	}
	if err := s.Remove(key("none")); err != nil {
		t.Errorf("Remove of a missing key: %v", err)
	}
	b := blob(t, t.TempDir(), "out0", []byte("data"))
	if err := s.Put(key("k"), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(key("k")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(key("k")); err != cache.ErrNotFound {
		t.Errorf("Get after Remove: %v, want ErrNotFound", err)
	}
	// The blob stays (it may be shared) ...
	if data, err := readBlob(s, b); err != nil || string(data) != "data" {
		t.Errorf("blob after Remove: %q, %v", data, err)
	}
	// ... and a blob not in the store is a miss.
	other := cache.Blob{Name: "x", Size: 1, Sum: cache.SumBytes([]byte("x"))}
	if _, err := s.OpenBlob(other); !errors.Is(err, cache.ErrNotFound) {
		t.Errorf("OpenBlob of an absent blob: %v, want ErrNotFound", err)
	}
}

func TestWalk(t *testing.T) {
	srv := redistest.Start(t)
	open := func(prefix string) *redisstore.Store {
		s, err := redisstore.Open(srv.URL, redisstore.Options{KeyPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	// A prefix with glob characters must not match the other's keys.
	s, other := open("t*["), open("tx[")
	want := map[cache.Sum]string{}
	for i := range 250 { // more than one SCAN page
		k := key(fmt.Sprint(i))
		want[k] = fmt.Sprint(i)
		if err := s.Put(k, &cache.Entry{Kind: cache.KindPlan, Record: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Put(key("other"), &cache.Entry{Kind: cache.KindPlan}); err != nil {
		t.Fatal(err)
	}
	ro, _ := redis.ParseURL(srv.URL)
	rc := redis.NewClient(ro)
	defer rc.Close()
	rc.Set(context.Background(), "t*[e:"+key("garbage").String(), "garbage", 0)
	rc.Set(context.Background(), "t*[e:not-a-key", cache.EncodeIndex(&cache.Entry{Kind: cache.KindPlan}), 0)
	got := map[cache.Sum]string{}
	err := s.Walk(func(k cache.Sum, e *cache.Entry) error {
		if _, dup := got[k]; dup {
			t.Errorf("key %s walked twice", k)
		}
		got[k] = string(e.Record)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("walked %d entries, want %d", len(got), len(want))
	}
	for k, r := range want {
		if got[k] != r {
			t.Errorf("entry %s: record %q, want %q", k, got[k], r)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Walk(func(cache.Sum, *cache.Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Walk with fn failing: %v after %d calls; want stop after 1", err, n)
	}
}

func TestTamper(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{ChunkSize: 100})
	ctx := context.Background()
	dir := t.TempDir()
	data := random(450, 2)
	put := func() (cache.Blob, string) {
		t.Helper()
		b := blob(t, dir, "out0", data)
		rc.Del(ctx, "offcc:b:"+b.Sum.String())
		if err := s.Replace(key("k"), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}}); err != nil {
			t.Fatal(err)
		}
		e, err := s.Get(key("k"))
		if err != nil {
			t.Fatal(err)
		}
		return e.Blobs[0], "offcc:b:" + b.Sum.String()
	}
	for _, tc := range []struct {
		name    string
		tamper  func(bkey string)
		corrupt bool // errors.Is(err, cache.ErrCorrupt), else any error
	}{
		{"same length", func(k string) { rc.HSet(ctx, k, "2", bytes.Repeat([]byte{'x'}, 100)) }, true},
		{"shorter", func(k string) { rc.HSet(ctx, k, "4", "x") }, true},
		{"longer than a chunk", func(k string) { rc.HSet(ctx, k, "1", bytes.Repeat([]byte{'x'}, 101)) }, true},
		{"empty", func(k string) { rc.HSet(ctx, k, "0", "") }, true},
		{"metadata", func(k string) { rc.HSet(ctx, k, "m", "450 90") }, true},
		{"bad metadata", func(k string) { rc.HSet(ctx, k, "m", "x") }, true},
		{"missing chunk", func(k string) { rc.HDel(ctx, k, "3") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, bkey := put()
			if got, err := readBlob(s, b); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("before tampering: %d bytes, %v", len(got), err)
			}
			tc.tamper(bkey)
			got, err := readBlob(s, b)
			if err == nil || tc.corrupt && !errors.Is(err, cache.ErrCorrupt) {
				t.Errorf("after tampering: %d bytes, %v; want an error (ErrCorrupt: %v)", len(got), err, tc.corrupt)
			}
			// A blob found damaged is gone, so the next Put repairs it.
			if n, _ := rc.Exists(ctx, bkey).Result(); tc.corrupt && n != 0 {
				t.Errorf("a damaged blob stays in Redis")
			}
		})
	}
	rc.Set(ctx, "offcc:e:"+key("k").String(), "garbage", 0)
	if _, err := s.Get(key("k")); err != cache.ErrNotFound {
		t.Errorf("Get of a garbage entry: %v, want ErrNotFound", err)
	}
	// An entry whose checksum no longer matches is a miss too.
	index := cache.EncodeIndex(&cache.Entry{Kind: cache.KindPlan, Record: []byte("plan")})
	index[len(index)-3] ^= 1
	rc.Set(ctx, "offcc:e:"+key("k").String(), index, 0)
	if _, err := s.Get(key("k")); err != cache.ErrNotFound {
		t.Errorf("Get of an entry failing its checksum: %v, want ErrNotFound", err)
	}
}

func TestChangedFile(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{ChunkSize: 64})
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		modified []byte
	}{
		{"same size", random(300, 4)},
		{"shorter", random(200, 3)},
		{"longer", random(301, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := blob(t, dir, "out0", random(300, 3))
			if err := os.WriteFile(b.Path, tc.modified, 0o644); err != nil {
				t.Fatal(err)
			}
			k := key(tc.name)
			err := s.Put(k, &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}})
			if err == nil {
				t.Fatal("Put of a changed file succeeded")
			}
			if _, err := s.Get(k); err != cache.ErrNotFound {
				t.Errorf("Get after the failed Put: %v, want ErrNotFound", err)
			}
			if ks := keys(t, rc, "offcc:[bu]:*"); len(ks) != 0 {
				t.Errorf("keys left: %q", ks)
			}
		})
	}
	big := blob(t, dir, "big", random(300, 5))
	s2, err := redisstore.Open("redis://"+rc.Options().Addr, redisstore.Options{MaxBlob: 299})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Put(key("big"), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{big}}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Put of a blob over MaxBlob: %v", err)
	}
	bad := &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{blob(t, dir, "../x", nil)}}
	if err := s.Put(key("bad"), bad); err == nil {
		t.Errorf("Put of a bad blob name succeeded")
	}
}

// TestServerDown checks that a dead, hung or absent server makes every
// operation fail quickly.
func TestServerDown(t *testing.T) {
	opt := redisstore.Options{DialTimeout: 100 * time.Millisecond, OpTimeout: 300 * time.Millisecond}
	dir := t.TempDir()
	b := blob(t, dir, "out0", []byte("bytes"))
	e := &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}}
	ops := []struct {
		name string
		op   func(s *redisstore.Store) error
	}{
		{"Ping", func(s *redisstore.Store) error { return s.Ping(context.Background()) }},
		{"Get", func(s *redisstore.Store) error { _, err := s.Get(key("k")); return err }},
		{"Put", func(s *redisstore.Store) error { return s.Put(key("new"), e) }},
		{"Replace", func(s *redisstore.Store) error { return s.Replace(key("k"), e) }},
		{"OpenBlob", func(s *redisstore.Store) error { _, err := readBlob(s, cache.Blob{Size: 5, Sum: b.Sum}); return err }},
		{"Remove", func(s *redisstore.Store) error { return s.Remove(key("k")) }},
		{"Walk", func(s *redisstore.Store) error { return s.Walk(func(cache.Sum, *cache.Entry) error { return nil }) }},
	}
	check := func(t *testing.T, s *redisstore.Store) {
		for _, o := range ops {
			start := time.Now()
			err := o.op(s)
			d := time.Since(start)
			t.Logf("%s: %v in %v", o.name, err, d.Round(time.Millisecond))
			if err == nil || err == cache.ErrNotFound {
				t.Errorf("%s succeeded: %v", o.name, err)
			}
			if d > time.Second {
				t.Errorf("%s took %v", o.name, d)
			}
		}
	}
	for _, mode := range []string{"killed", "paused"} {
		t.Run(mode, func(t *testing.T) {
			s, srv, _ := setup(t, opt)
			if err := s.Put(key("k"), e); err != nil {
				t.Fatal(err)
			}
			if mode == "killed" {
				srv.Kill()
			} else {
				srv.Pause()
			}
			check(t, s)
		})
	}
	t.Run("wrong port", func(t *testing.T) {
		srv := redistest.Start(t)
		srv.Stop()
		s, err := redisstore.Open(srv.URL, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, s)
	})
}

func TestBadURL(t *testing.T) {
	for _, u := range []string{
		"",
		"localhost:6379",
		"http://localhost:6379",
		"redis://",
		"redis:///0",
		"redis://localhost:6379/db",
		"redis://localhost:6379/0/1",
		"redis://localhost:6379?dial_timeout=1",
		"redis://user:secret@localhost:6379/x",
		"redis://user:secret@local host:6379",
		"unix:///tmp/redis.sock",
	} {
		_, err := redisstore.Open(u, redisstore.Options{})
		if err == nil {
			t.Errorf("Open(%q) succeeded", u)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "bad Redis URL ") || strings.Contains(msg, "secret") || strings.Contains(msg, "\n") {
			t.Errorf("Open(%q): %q; want one line saying bad URL, without the password", u, msg)
		}
	}
	for _, u := range []string{"redis://127.0.0.1:1", "redis://u:p@h:1/2", "rediss://h", "redis://[::1]:6379/0"} {
		s, err := redisstore.Open(u, redisstore.Options{})
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		s.Close()
	}
}

// TestLargeBlob moves a 64 MiB blob with the default options and logs the
// time each way.
func TestLargeBlob(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	s, _, _ := setup(t, redisstore.Options{})
	data := random(64<<20, 6)
	b := blob(t, t.TempDir(), "out0", data)
	start := time.Now()
	if err := s.Put(key("large"), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}}); err != nil {
		t.Fatal(err)
	}
	upT := time.Since(start)
	start = time.Now()
	r, err := s.OpenBlob(cache.Blob{Name: b.Name, Size: b.Size, Sum: b.Sum})
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, r)
	r.Close()
	downT := time.Since(start)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("read %d bytes, %v", n, err)
	}
	mib := float64(len(data)) / (1 << 20)
	t.Logf("64 MiB blob: upload %v (%.0f MiB/s), download %v (%.0f MiB/s)",
		upT.Round(time.Millisecond), mib/upT.Seconds(), downT.Round(time.Millisecond), mib/downT.Seconds())
}

// TestErrorsNameNoPackage checks that a server that cannot be reached is
// said so in words the user knows, without the package's name or Go's
// "dial tcp" (the caller names the server: "shared cache URL: ...").
func TestErrorsNameNoPackage(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	s, err := redisstore.Open(srv.URL, redisstore.Options{DialTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Get(key("k"))
	if err == nil || err.Error() != "cannot connect: connection refused" {
		t.Errorf("Get from a stopped server: %v; want cannot connect: connection refused", err)
	}
	if err := s.Ping(context.Background()); err == nil || err.Error() != "cannot connect: connection refused" {
		t.Errorf("Ping: %v", err)
	}
	// The build farm runs its own commands on the store's client:
	// Describe spells their errors the same way.
	raw := s.Client().HGetAll(context.Background(), "k").Err()
	if got := redisstore.Describe(raw); got != "cannot connect: connection refused" {
		t.Errorf("Describe(%v) = %q; want cannot connect: connection refused", raw, got)
	}
	if got := redisstore.Describe(err); got != "cannot connect: connection refused" {
		t.Errorf("Describe of a store's error = %q", got)
	}
	if got := redisstore.Describe(context.DeadlineExceeded); got != "no answer (timed out)" {
		t.Errorf("Describe(deadline) = %q", got)
	}
	if got := redisstore.Describe(errors.New("redis: nil")); got != "nil" {
		t.Errorf("Describe(redis: nil) = %q", got)
	}
	_, err = redisstore.Open("http://h:1", redisstore.Options{})
	if err == nil || strings.Contains(err.Error(), "redisstore") || !strings.HasPrefix(err.Error(), "bad Redis URL http://h:1: ") {
		t.Errorf("Open(http://h:1): %v", err)
	}
}
