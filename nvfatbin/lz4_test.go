package nvfatbin

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lz4FrameBlocks returns the data blocks of an LZ4 frame (the format the
// lz4 command writes) and whether each is compressed. Only what lz4 -B4
// --no-frame-crc writes is handled: no dictionary, no block checksums.
func lz4FrameBlocks(t *testing.T, frame []byte) (blocks [][]byte, compressed []bool) {
	t.Helper()
	le := binary.LittleEndian
	if len(frame) < 7 || le.Uint32(frame) != 0x184D2204 {
		t.Fatalf("not an LZ4 frame: % x", frame[:min(len(frame), 8)])
	}
	flg := frame[4]
	if flg>>6 != 1 || flg&0x10 != 0 || flg&1 != 0 {
		t.Fatalf("unsupported frame flags %#x", flg)
	}
	p := 6 // magic, FLG, BD
	if flg&0x08 != 0 {
		p += 8 // content size
	}
	p++ // header checksum
	for {
		n := le.Uint32(frame[p:])
		p += 4
		if n == 0 {
			return blocks, compressed
		}
		size := int(n &^ (1 << 31))
		blocks = append(blocks, frame[p:p+size])
		compressed = append(compressed, n&(1<<31) == 0)
		p += size
	}
}

// TestLZ4Vectors decodes blocks the lz4 command line tool (v1.9.4, an
// encoder independent of NVIDIA's and of this decoder) wrote: a PTX file
// clang generated, and data with a literal run and matches longer than 270
// bytes, an overlapping match at distance 1 and short matches.
func TestLZ4Vectors(t *testing.T) {
	for _, name := range []string{"axpy.ptx", "mixed.bin"} {
		want, err := os.ReadFile(filepath.Join("testdata/lz4", name))
		if err != nil {
			t.Fatal(err)
		}
		frame, err := os.ReadFile(filepath.Join("testdata/lz4", name+".lz4"))
		if err != nil {
			t.Fatal(err)
		}
		blocks, comp := lz4FrameBlocks(t, frame)
		if len(blocks) != 1 || !comp[0] {
			t.Fatalf("%s: want one compressed block, got %d", name, len(blocks))
		}
		got, err := DecodeLZ4Block(blocks[0], uint64(len(want)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: decoded data differs", name)
		}
		// As the payload of an entry.
		f, err := Parse(build(fixture{kind: KindPTX, arch: 70, flags: FlagLZ4, payload: blocks[0], uncompressed: uint64(len(want))}))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := f.Entries[0].Decompress(); err != nil || !bytes.Equal(out, want) {
			t.Errorf("%s: Decompress: %v", name, err)
		}
	}
}

// TestLZ4Command cross-checks the decoder against the lz4 command on
// random inputs, when it is installed.
func TestLZ4Command(t *testing.T) {
	lz4, err := exec.LookPath("lz4")
	if err != nil {
		t.Skip("lz4 command not installed")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20; i++ {
		// Runs of repeated short patterns among random bytes: both
		// literals and matches of every length class.
		var in []byte
		for len(in) < 100+i*3000 {
			switch r.Intn(3) {
			case 0:
				n := r.Intn(400)
				for k := 0; k < n; k++ {
					in = append(in, byte(r.Intn(256)))
				}
			default:
				pat := make([]byte, 1+r.Intn(12))
				r.Read(pat)
				in = append(in, bytes.Repeat(pat, 1+r.Intn(100))...)
			}
		}
		src := filepath.Join(dir, "in")
		os.WriteFile(src, in, 0o644)
		level := []string{"-1", "-9", "--fast=5"}[i%3]
		if out, err := exec.Command(lz4, "-q", level, "--no-frame-crc", "-B4", "-f", src, src+".lz4").CombinedOutput(); err != nil {
			t.Fatalf("lz4: %v\n%s", err, out)
		}
		frame, _ := os.ReadFile(src + ".lz4")
		var got []byte
		blocks, comp := lz4FrameBlocks(t, frame)
		for k, b := range blocks {
			if !comp[k] {
				got = append(got, b...)
				continue
			}
			d, err := DecodeLZ4Block(b, 4<<20)
			if err != nil {
				t.Fatalf("input %d block %d: %v", i, k, err)
			}
			got = append(got, d...)
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("input %d (%d bytes, %s): decoded data differs", i, len(in), level)
		}
	}
}

func TestLZ4Errors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   []byte
		limit uint64
		want  string
	}{
		{"zero offset", []byte{0x10, 'a', 0, 0}, 100, "match offset 0 at input offset 0x2"},
		{"offset before start", []byte{0x10, 'a', 2, 0}, 100, "match offset 2 at input offset 0x2 reaches before the start of the output (1 bytes)"},
		{"truncated literals", []byte{0x50, 'a', 'b'}, 100, "5 literal bytes at input offset 0x1 run past the end"},
		{"truncated offset", []byte{0x10, 'a', 1}, 100, "truncated match offset"},
		{"truncated literal length", []byte{0xf0}, 100, "truncated length at input offset 0x1"},
		{"truncated match length", []byte{0x1f, 'a', 1, 0, 255}, 1000, "truncated length at input offset 0x5"},
		{"literals over limit", []byte{0x30, 'a', 'b', 'c'}, 2, "output exceeds 2 bytes"},
		{"match over limit", []byte{0x10, 'a', 1, 0}, 4, "output exceeds 4 bytes"},
		{"length over limit", append([]byte{0x1f, 'a', 1, 0}, bytes.Repeat([]byte{255}, 8)...), 1000, "exceeds the output size 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DecodeLZ4Block(tc.src, tc.limit)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeLZ4Block = %q, %v; want error containing %q", out, err, tc.want)
			}
		})
	}
	// A block may end after a match (n-eiling/cuda-fatbin-decompression
	// and jiegec/fatbinary accept that too), or be empty.
	if out, err := DecodeLZ4Block([]byte{0x12, 'a', 1, 0}, 7); err != nil || string(out) != "aaaaaaa" {
		t.Errorf("ending on a match: %q, %v", out, err)
	}
	if out, err := DecodeLZ4Block(nil, 0); err != nil || len(out) != 0 {
		t.Errorf("empty block: %q, %v", out, err)
	}
}
