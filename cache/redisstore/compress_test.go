package redisstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
)

func text(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "#define MACRO_%d %d\n", i%500, i)
	}
	return b.Bytes()[:n]
}

// TestCompressedBlobs: blobs go compressed ("z") when that pays and as
// they are ("m") otherwise or with compression off; a store reads what
// any other wrote, whatever its level; Transferred counts the blobs'
// bytes, WireTransferred what travelled.
func TestCompressedBlobs(t *testing.T) {
	s, srv, rc := setup(t, redisstore.Options{ChunkSize: 1000})
	ctx := context.Background()
	dir := t.TempDir()
	data := map[string][]byte{"text": text(50000), "random": random(3000, 3), "empty": {}}
	e := &cache.Entry{Kind: cache.KindResult}
	for _, n := range []string{"text", "random", "empty"} {
		e.Blobs = append(e.Blobs, blob(t, dir, n, data[n]))
	}
	if err := s.Put(key("a"), e); err != nil {
		t.Fatal(err)
	}
	for _, b := range e.Blobs {
		fields, err := rc.HKeys(ctx, "offcc:b:"+b.Sum.String()).Result()
		if err != nil {
			t.Fatal(err)
		}
		hasZ, hasM := contains(fields, "z"), contains(fields, "m")
		if wantZ := b.Name == "text"; hasZ != wantZ || hasM == wantZ {
			t.Errorf("blob %s: fields %q; want compressed = %v", b.Name, fields, wantZ)
		}
	}
	got, err := s.Get(key("a"))
	if err != nil {
		t.Fatal(err)
	}
	checkEntry(t, s, got, e, data)
	up, down := s.Transferred()
	wup, wdown := s.WireTransferred()
	if up != 53000 || down != 53000 || wup >= 20000 || wdown != wup {
		t.Errorf("Transferred %d up, %d down; on the wire %d, %d", up, down, wup, wdown)
	}
	// Another writer, compression off, and a reader at another level.
	off, err := redisstore.Open(srv.URL, redisstore.Options{Compression: cache.Compression{Off: true}, ChunkSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	other := text(40000)
	e2 := &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{blob(t, dir, "text", other)}}
	if err := off.Put(key("b"), e2); err != nil {
		t.Fatal(err)
	}
	if fields, _ := rc.HKeys(ctx, "offcc:b:"+e2.Blobs[0].Sum.String()).Result(); !contains(fields, "m") {
		t.Errorf("compression off: fields %q", fields)
	}
	best, err := redisstore.Open(srv.URL, redisstore.Options{Compression: cache.Compression{Level: 19}})
	if err != nil {
		t.Fatal(err)
	}
	defer best.Close()
	for _, r := range []*redisstore.Store{s, off, best} {
		for _, k := range []string{"a", "b"} {
			got, err := r.Get(key(k))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range got.Blobs {
				want := data[b.Name]
				if k == "b" {
					want = other
				}
				if d, err := readBlob(r, b); err != nil || !bytes.Equal(d, want) {
					t.Errorf("entry %s blob %s: %d bytes, %v", k, b.Name, len(d), err)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestCompressedTamper: whoever can write to the server can put anything
// in a compressed blob's hash: a zstd bomb, a frame claiming gigabytes, a
// truncated or changed frame, metadata that lies. Each is a miss
// (ErrCorrupt) that removes the blob, decoded within bounds.
func TestCompressedTamper(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{ChunkSize: 100})
	ctx := context.Background()
	dir := t.TempDir()
	data := text(5000)
	var bkey string
	put := func() cache.Blob {
		t.Helper()
		b := blob(t, dir, "out0", data)
		bkey = "offcc:b:" + b.Sum.String()
		rc.Del(ctx, bkey)
		if err := s.Replace(key("k"), &cache.Entry{Kind: cache.KindResult, Blobs: []cache.Blob{b}}); err != nil {
			t.Fatal(err)
		}
		e, err := s.Get(key("k"))
		if err != nil {
			t.Fatal(err)
		}
		return e.Blobs[0]
	}
	// replace stores stored as the blob's compressed bytes.
	replace := func(stored []byte, meta string) {
		rc.Del(ctx, bkey)
		fields := []any{"z", meta}
		for i := 0; i*100 < len(stored); i++ {
			fields = append(fields, strconv.Itoa(i), stored[i*100:min(len(stored), (i+1)*100)])
		}
		rc.HSet(ctx, bkey, fields...)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(4096))
	var bomb []byte
	for i := 0; i < 64; i++ {
		bomb = enc.EncodeAll(make([]byte, 1<<20), bomb)
	}
	otherFrame := enc.EncodeAll(text(5001)[1:], nil)
	claims := binary.LittleEndian.AppendUint64([]byte{0x28, 0xb5, 0x2f, 0xfd, 3 << 6, 0}, 4<<30)
	claims = append(claims, 1, 0, 0)
	z := func(stored []byte) string { return fmt.Sprintf("5000 %d 100", len(stored)) }
	for _, tc := range []struct {
		name   string
		tamper func(stored []byte)
	}{
		{"bomb", func([]byte) { replace(bomb, z(bomb)) }},
		{"claims 4 GiB", func([]byte) { replace(claims, z(claims)) }},
		{"other bytes", func([]byte) { replace(otherFrame, z(otherFrame)) }},
		{"truncated", func(st []byte) { replace(st[:len(st)-1], z(st[:len(st)-1])) }},
		{"changed byte", func(st []byte) {
			c := append([]byte(nil), st...)
			c[len(c)/2] ^= 0x55
			replace(c, z(c))
		}},
		{"stored size too large", func(st []byte) { replace(st, "5000 1000000 100") }},
		{"stored size a lie", func(st []byte) { replace(st, fmt.Sprintf("5000 %d 100", len(st)+100)) }},
		{"size a lie", func(st []byte) { replace(st, fmt.Sprintf("4999 %d 100", len(st))) }},
		{"both fields", func([]byte) { rc.HSet(ctx, bkey, "m", "5000 100") }},
		{"z not numbers", func([]byte) { rc.HSet(ctx, bkey, "z", "a b c") }},
		{"z two numbers", func([]byte) { rc.HSet(ctx, bkey, "z", "5000 100") }},
		{"zero chunk size", func(st []byte) { rc.HSet(ctx, bkey, "z", fmt.Sprintf("5000 %d 0", len(st))) }},
		{"as it is, marked compressed", func([]byte) {
			rc.Del(ctx, bkey)
			args := []any{"z", "5000 5000 100"}
			for i := 0; i < 50; i++ {
				args = append(args, strconv.Itoa(i), data[i*100:(i+1)*100])
			}
			rc.HSet(ctx, bkey, args...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := put()
			if got, err := readBlob(s, b); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("before tampering: %d bytes, %v", len(got), err)
			}
			var stored []byte
			n, _ := rc.HLen(ctx, bkey).Result()
			for i := 0; i < int(n)-1; i++ {
				c, _ := rc.HGet(ctx, bkey, strconv.Itoa(i)).Bytes()
				stored = append(stored, c...)
			}
			if len(stored) == 0 || stored[0] != 0x28 {
				t.Fatalf("the blob was not stored compressed")
			}
			tc.tamper(stored)
			got, err := readBlob(s, b)
			if !errors.Is(err, cache.ErrCorrupt) {
				t.Errorf("after tampering: %d bytes, %v; want ErrCorrupt", len(got), err)
			}
			if len(got) > 2*len(data) {
				t.Errorf("%d bytes out of a blob of %d", len(got), len(data))
			}
			if n, _ := rc.Exists(ctx, bkey).Result(); n != 0 {
				t.Errorf("a damaged blob stays in Redis")
			}
		})
	}
}

// TestCompressedEntries: a large entry (a manifest) is stored compressed
// and reads back through Get and Walk; a compressed entry that does not
// decode, or decodes past MaxIndex, is a miss.
func TestCompressedEntries(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{MaxIndex: 64 << 10})
	ctx := context.Background()
	rec := text(50000)
	if err := s.Replace(key("m"), &cache.Entry{Kind: cache.KindManifest, Record: rec}); err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get(ctx, "offcc:e:"+key("m").String()).Bytes()
	if err != nil || len(raw) > 20000 || !bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Errorf("the entry is stored as %d bytes starting %q, %v", len(raw), raw[:min(8, len(raw))], err)
	}
	if e, err := s.Get(key("m")); err != nil || !bytes.Equal(e.Record, rec) {
		t.Errorf("Get: %v", err)
	}
	walked := 0
	s.Walk(func(k cache.Sum, e *cache.Entry) error {
		if k == key("m") && bytes.Equal(e.Record, rec) {
			walked++
		}
		return nil
	})
	if walked != 1 {
		t.Errorf("Walk found the entry %d times", walked)
	}
	enc, _ := zstd.NewWriter(nil)
	for name, v := range map[string][]byte{
		"truncated":        raw[:len(raw)-5],
		"past MaxIndex":    enc.EncodeAll(append(cache.EncodeIndex(&cache.Entry{Kind: cache.KindPlan}), make([]byte, 65<<10)...), nil),
		"not an index":     enc.EncodeAll([]byte("hello"), nil),
		"changed manifest": enc.EncodeAll(append(cache.EncodeIndex(&cache.Entry{Kind: cache.KindManifest, Record: rec}), ' '), nil),
	} {
		rc.Set(ctx, "offcc:e:"+key("m").String(), v, 0)
		if _, err := s.Get(key("m")); err != cache.ErrNotFound {
			t.Errorf("%s: Get = %v, want ErrNotFound", name, err)
		}
	}
}

// TestGetWithin: a reader's own bound applies to the index as decoded: an
// entry stored compressed in far fewer bytes than the bound, decoding to
// more, is ErrNotFound (what a farm worker bounds a job's entry by);
// within the bound it reads.
func TestGetWithin(t *testing.T) {
	s, _, rc := setup(t, redisstore.Options{})
	rec := text(200000)
	if err := s.Replace(key("j"), &cache.Entry{Kind: cache.KindManifest, Record: rec}); err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get(context.Background(), "offcc:e:"+key("j").String()).Bytes()
	if err != nil || len(raw) >= 50000 {
		t.Fatalf("the entry is stored in %d bytes (%v), want compressed under 50000", len(raw), err)
	}
	if _, err := s.GetWithin(key("j"), 100000); err != cache.ErrNotFound {
		t.Errorf("GetWithin 100000 of an index decoding to over 200000 bytes: %v, want ErrNotFound", err)
	}
	if e, err := s.GetWithin(key("j"), 400000); err != nil || !bytes.Equal(e.Record, rec) {
		t.Errorf("GetWithin 400000: %v", err)
	}
}
