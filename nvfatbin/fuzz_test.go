package nvfatbin

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse, ParseAll, Decompress or
// ParseWrappers panic, that errors are one line, and that what Parse
// returns lies inside its input.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/paddle-compilerid.fatbin", "testdata/paddle-a_dlink.fatbin"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add(build(threeEntries()...))
	f.Add(build(fixture{kind: KindPTX, arch: 80, flags: FlagLZ4, payload: []byte{0x35, 'a', 'b', 'c', 3, 0}, uncompressed: 12}))
	f.Add(build(fixture{kind: KindELF, arch: 100, flags: FlagZstd, payload: []byte{0x28, 0xb5, 0x2f, 0xfd}, uncompressed: 99}))
	f.Add([]byte("\x50\xed\x55\xba\x01\x00\x10\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		check := func(err error) {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
		}
		fb, err := Parse(in)
		check(err)
		if err == nil {
			if fb.Size() > uint64(len(in)) {
				t.Fatalf("size %d of %d bytes", fb.Size(), len(in))
			}
			for _, e := range fb.Entries {
				if e.PayloadOffset()+e.PayloadSize > fb.Size() || uint64(len(e.Data)) > e.PayloadSize {
					t.Fatalf("entry %+v outside the fat binary (%d bytes)", e, fb.Size())
				}
				out, err := e.Decompress()
				check(err)
				if err == nil && e.Compression() == CompressionLZ4 && uint64(len(out)) != e.UncompressedSize {
					t.Fatalf("decompressed %d bytes, header says %d", len(out), e.UncompressedSize)
				}
			}
		}
		_, err = ParseAll(in)
		check(err)
		_, err = ParseWrappers(in, binary.LittleEndian, 8)
		check(err)
	})
}
