package nvfatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

// fixture is one entry for build to write.
type fixture struct {
	kind                Kind
	arch                uint32
	major, minor        uint16
	flags               Flags
	payload             []byte // stored as is (compressed if flags say so)
	uncompressed        uint64
	ident, options      string
	headerSize          uint32 // 0: the smallest that holds the strings, 8-aligned
	payloadSizeOverride uint64 // when not 0, written instead of the real size
}

func align8(n int) int { return (n + 7) &^ 7 }

// entry writes one entry in the documented layout: the 64-byte header, the
// options descriptor and the strings after it, the payload padded to 8.
func (f fixture) entry() []byte {
	le := binary.LittleEndian
	hdr := make([]byte, 64)
	var ext []byte
	var optOff, identOff uint32
	if f.options != "" || f.kind == KindPTX {
		optOff = 64
		ext = make([]byte, 8)
		if f.options != "" {
			le.PutUint32(ext, uint32(64+8))
			le.PutUint32(ext[4:], uint32(len(f.options)))
			ext = append(ext, f.options...)
		}
	}
	if f.ident != "" {
		identOff = uint32(64 + len(ext))
		ext = append(ext, f.ident...)
	}
	hs := f.headerSize
	if hs == 0 {
		hs = uint32(align8(64 + len(ext)))
	}
	stored := align8(len(f.payload))
	le.PutUint16(hdr[0:], uint16(f.kind))
	le.PutUint16(hdr[2:], 0x0101)
	le.PutUint32(hdr[4:], hs)
	le.PutUint64(hdr[8:], uint64(stored))
	if f.payloadSizeOverride != 0 {
		le.PutUint64(hdr[8:], f.payloadSizeOverride)
	}
	if f.flags&(FlagLZ4|FlagZstd|FlagLegacy) != 0 {
		le.PutUint32(hdr[16:], uint32(len(f.payload)))
		le.PutUint64(hdr[56:], f.uncompressed)
	}
	le.PutUint32(hdr[20:], optOff)
	le.PutUint16(hdr[24:], f.minor)
	le.PutUint16(hdr[26:], f.major)
	le.PutUint32(hdr[28:], f.arch)
	le.PutUint32(hdr[32:], identOff)
	le.PutUint32(hdr[36:], uint32(len(f.ident)))
	le.PutUint64(hdr[40:], uint64(f.flags))
	out := append(hdr, ext...)
	if int(hs) > len(out) {
		out = append(out, make([]byte, int(hs)-len(out))...)
	}
	out = append(out, f.payload...)
	return append(out, make([]byte, stored-len(f.payload))...)
}

// build writes a fat binary holding the entries.
func build(entries ...fixture) []byte {
	var body []byte
	for _, e := range entries {
		body = append(body, e.entry()...)
	}
	h := make([]byte, 16)
	binary.LittleEndian.PutUint32(h, Magic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint16(h[6:], 16)
	binary.LittleEndian.PutUint64(h[8:], uint64(len(body)))
	return append(h, body...)
}

const testPTX = "//\n.version 7.0\n.target sm_70\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n"

// threeEntries is one PTX and two ELF entries, as nvcc -gencode writes for
// two real architectures and one virtual one.
func threeEntries() []fixture {
	elf := func(arch byte) []byte {
		return append([]byte("\x7fELF\x02\x01\x01\x33"), bytes.Repeat([]byte{arch}, 29)...)
	}
	return []fixture{
		{kind: KindELF, arch: 70, major: 1, minor: 7, flags: Flag64Bit | FlagLinux, payload: elf(70), ident: "k.cu"},
		{kind: KindELF, arch: 90, major: 1, minor: 8, flags: Flag64Bit | FlagLinux | FlagDebug, payload: elf(90), ident: "k.cu"},
		{kind: KindPTX, arch: 90, major: 8, minor: 0, flags: Flag64Bit | FlagLinux, payload: []byte(testPTX), ident: "k.cu", options: "-O3"},
	}
}

func TestParseThreeEntries(t *testing.T) {
	fx := threeEntries()
	data := build(fx...)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 1 || f.HeaderSize != 16 || f.Size() != uint64(len(data)) || len(f.Entries) != 3 {
		t.Fatalf("file %+v (size %d of %d)", f, f.Size(), len(data))
	}
	for i, e := range f.Entries {
		want := fx[i]
		if e.Kind != want.kind || e.SMArch != want.arch || e.CodeMajor != want.major || e.CodeMinor != want.minor ||
			e.Flags != want.flags || e.Identifier != want.ident || e.Options != want.options || e.Version != 0x0101 {
			t.Errorf("entry %d: %+v, want %+v", i, e, want)
		}
		if e.Compression() != CompressionNone || e.CompressedSize != 0 || e.UncompressedSize != 0 {
			t.Errorf("entry %d: compressed %v", i, e.Compression())
		}
		// Data is the padded payload and lies where the offsets say.
		if !bytes.HasPrefix(e.Data, want.payload) || len(e.Data) != align8(len(want.payload)) ||
			!bytes.Equal(data[e.PayloadOffset():e.PayloadOffset()+e.PayloadSize], e.Data) {
			t.Errorf("entry %d: data %q at %#x", i, e.Data, e.PayloadOffset())
		}
		if out, err := e.Decompress(); err != nil || !bytes.Equal(out, e.Data) {
			t.Errorf("entry %d: Decompress: %v", i, err)
		}
	}
	if f.Entries[0].Offset != 16 || f.Entries[1].Offset != f.Entries[0].PayloadOffset()+f.Entries[0].PayloadSize {
		t.Errorf("entry offsets %#x %#x", f.Entries[0].Offset, f.Entries[1].Offset)
	}
	if a := f.Entries[1].Arch(); a != "sm_90" {
		t.Errorf("Arch() = %q", a)
	}
	// A longer file header moves the entries; the fat size still counts
	// from the header's end.
	long := append(append(append([]byte{}, data[:16]...), make([]byte, 8)...), data[16:]...)
	binary.LittleEndian.PutUint16(long[6:], 24)
	if g, err := Parse(long); err != nil || g.HeaderSize != 24 || g.Size() != uint64(len(long)) || len(g.Entries) != 3 || g.Entries[0].Offset != 24 {
		t.Errorf("24-byte header: %v %+v", err, g)
	}
	// Bytes after the fat binary are not Parse's business.
	if g, err := Parse(append(append([]byte{}, data...), "trailing"...)); err != nil || g.Size() != f.Size() {
		t.Errorf("with trailing bytes: %v", err)
	}
}

func TestKindsAndFlags(t *testing.T) {
	for k, want := range map[Kind]string{KindPTX: "PTX", KindELF: "ELF", KindOldCubin: "old cubin", KindNVVMIR: "NVVM IR", 0x10: "kind 0x10", 0x40: "kind 0x40"} {
		if k.String() != want {
			t.Errorf("Kind(%d) = %q, want %q", k, k.String(), want)
		}
	}
	// Unknown kinds (libcublasLt has 0x10 and 0x40, per nvopen-tools) are
	// reported, not rejected.
	f, err := Parse(build(fixture{kind: 0x10, arch: 100, payload: []byte("opaque")}, fixture{kind: 0x40, payload: []byte{1}}))
	if err != nil || len(f.Entries) != 2 || f.Entries[0].Kind != 0x10 || f.Entries[1].Kind != 0x40 || string(f.Entries[0].Data[:6]) != "opaque" {
		t.Fatalf("unknown kinds: %v %+v", err, f)
	}
	for flags, want := range map[Flags]Compression{0: CompressionNone, FlagLZ4: CompressionLZ4, FlagZstd | Flag64Bit: CompressionZstd, FlagLegacy: CompressionLegacy, FlagLZ4 | FlagZstd: CompressionLZ4} {
		e := Entry{Flags: flags}
		if e.Compression() != want {
			t.Errorf("flags %#x: %v, want %v", flags, e.Compression(), want)
		}
	}
	for c, want := range map[Compression]string{CompressionNone: "none", CompressionLZ4: "lz4", CompressionZstd: "zstd", CompressionLegacy: "legacy"} {
		if c.String() != want {
			t.Errorf("%d: %q", c, c.String())
		}
	}
}

func TestCompressedEntries(t *testing.T) {
	// An LZ4 block of "abcabcabcabc": literals "abc", then a 9-byte match
	// at distance 3, then nothing.
	block := []byte{0x35, 'a', 'b', 'c', 3, 0}
	zst := []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0}
	f, err := Parse(build(
		fixture{kind: KindPTX, arch: 80, flags: FlagLZ4 | Flag64Bit, payload: block, uncompressed: 12},
		fixture{kind: KindELF, arch: 100, flags: FlagZstd, payload: zst, uncompressed: 4000},
	))
	if err != nil {
		t.Fatal(err)
	}
	lz, zs := f.Entries[0], f.Entries[1]
	if lz.Compression() != CompressionLZ4 || lz.CompressedSize != 6 || lz.PayloadSize != 8 || !bytes.Equal(lz.Data, block) {
		t.Errorf("lz4 entry %+v", lz)
	}
	if out, err := lz.Decompress(); err != nil || string(out) != "abcabcabcabc" {
		t.Errorf("lz4 Decompress = %q, %v", out, err)
	}
	if zs.Compression() != CompressionZstd || !bytes.Equal(zs.Data, zst) || zs.UncompressedSize != 4000 {
		t.Errorf("zstd entry %+v", zs)
	}
	if _, err := zs.Decompress(); !errors.Is(err, ErrNotDecompressible) {
		t.Errorf("zstd Decompress: %v", err)
	}
	// The header's uncompressed size must be met exactly, and be possible.
	big := lz
	big.UncompressedSize = 1 << 40
	if _, err := big.Decompress(); err == nil || !strings.Contains(err.Error(), "is more than 6 compressed bytes can expand to") {
		t.Errorf("huge uncompressed size: %v", err)
	}
	lz.UncompressedSize = 11
	if _, err := lz.Decompress(); err == nil {
		t.Error("Decompress accepted output longer than UncompressedSize")
	}
	lz.UncompressedSize = 13
	if _, err := lz.Decompress(); err == nil || !strings.Contains(err.Error(), "decoded 12 bytes") {
		t.Errorf("short output: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	good := build(threeEntries()...)
	le := binary.LittleEndian
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	first := 16 // first entry's header
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated header: 0 bytes"},
		{"truncated header", good[:15], "truncated header: 15 bytes, want 16"},
		{"bad magic", mod(func(b []byte) []byte { b[0] ^= 1; return b }), "magic 0xba55ed51 is not 0xba55ed50"},
		{"version 2", mod(func(b []byte) []byte { le.PutUint16(b[4:], 2); return b }), "unsupported version 2"},
		{"header size 8", mod(func(b []byte) []byte { le.PutUint16(b[6:], 8); return b }), "header size 8 is less than 16"},
		{"header only", good[:16], "fat size 0x"},
		{"huge header size", mod(func(b []byte) []byte { le.PutUint16(b[6:], 0xffff); return b })[:16], "header size 65535 runs past the end"},
		{"fat size past end", good[:len(good)-8], "fat size 0x"},
		{"fat size overflow", mod(func(b []byte) []byte { le.PutUint64(b[8:], ^uint64(0)); return b }), "runs past the end of the data"},
		{"truncated entry header", mod(func(b []byte) []byte { le.PutUint64(b[8:], 40); return b }), "entry 0 at offset 0x10: truncated entry header: 40 bytes left"},
		{"entry header size 32", mod(func(b []byte) []byte { le.PutUint32(b[first+4:], 32); return b }), "entry 0 at offset 0x10: header size 32 is less than 64"},
		{"entry header size past end", mod(func(b []byte) []byte { le.PutUint32(b[first+4:], 0xfffffff0); return b }), "header size 0xfffffff0 runs past the end of the fat binary"},
		{"entry payload overflow", mod(func(b []byte) []byte { le.PutUint64(b[first+8:], ^uint64(0)-8); return b }), "payload size 0xfffffffffffffff7 runs past the end"},
		{"second entry payload past end", build(append(threeEntries()[:1], fixture{kind: KindELF, payload: []byte("x"), payloadSizeOverride: 1 << 40})...), "entry 1 at offset"},
		{"identifier past header", mod(func(b []byte) []byte { le.PutUint32(b[first+36:], 200); return b }), "identifier: 200 bytes at 0x40 run past the 72-byte entry header"},
		{"options descriptor past header", mod(func(b []byte) []byte {
			e := 16 + len(threeEntries()[0].entry()) + len(threeEntries()[1].entry())
			le.PutUint32(b[e+20:], 0x7ffffff0)
			return b
		}), "entry 2 at offset 0xf0: options descriptor at 0x7ffffff0 runs past"},
		{"options string past header", mod(func(b []byte) []byte {
			e := 16 + len(threeEntries()[0].entry()) + len(threeEntries()[1].entry())
			le.PutUint32(b[e+64+4:], 0xffffffff)
			return b
		}), "options: 4294967295 bytes at 0x48 run past"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.data)
			var fe *Error
			if err == nil || !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a *Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}

	// A compressed size larger than the stored payload is an error.
	b := build(fixture{kind: KindPTX, flags: FlagLZ4, payload: []byte{0x10, 'a'}, uncompressed: 1})
	le.PutUint32(b[16+16:], 9)
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "compressed size 0x9 exceeds the payload size 0x8") {
		t.Errorf("compressed size: %v", err)
	}
}

func TestPaddingAndParseAll(t *testing.T) {
	one := build(threeEntries()[:1]...)
	two := build(threeEntries()[1:]...)

	// Zero bytes at the end of the entries are padding.
	padded := append(append([]byte{}, one...), make([]byte, 16)...)
	binary.LittleEndian.PutUint64(padded[8:], binary.LittleEndian.Uint64(padded[8:])+16)
	if f, err := Parse(padded); err != nil || len(f.Entries) != 1 || f.Size() != uint64(len(padded)) {
		t.Errorf("padded: %v", err)
	}

	all := append(append(append([]byte{}, one...), make([]byte, 8)...), two...)
	files, err := ParseAll(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Offset != 0 || files[1].Offset != uint64(len(one)+8) || len(files[1].Entries) != 2 ||
		files[1].Entries[0].Offset != files[1].Offset+16 || !bytes.Equal(files[1].Entries[1].Data[:len(testPTX)], []byte(testPTX)) {
		t.Fatalf("ParseAll: %+v", files)
	}
	bad := append(append([]byte{}, one...), "garbage!garbage!"...)
	if _, err := ParseAll(bad); err == nil || !strings.Contains(err.Error(), "NVIDIA fat binary at offset 0x") || !strings.Contains(err.Error(), "magic") {
		t.Errorf("ParseAll with garbage: %v", err)
	}
	if _, err := ParseAll(make([]byte, 8)); err == nil {
		t.Error("ParseAll accepted zeros")
	}
}

// TestRealFatBinaries reads fat binaries nvcc wrote (testdata/README.md):
// CMake's CUDA compiler identification object for sm_30, which holds a
// cubin and an LZ4-compressed PTX module, and its device link fat binary.
func TestRealFatBinaries(t *testing.T) {
	id, err := os.ReadFile("testdata/paddle-compilerid.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != uint64(len(id)) || len(f.Entries) != 2 {
		t.Fatalf("%d entries, size %d of %d", len(f.Entries), f.Size(), len(id))
	}
	cubin, ptx := f.Entries[0], f.Entries[1]

	// The cubin: ELF, sm_30, code version 1.7 as cuobjdump prints it, 64-bit
	// Linux, stored uncompressed. The ELF header's e_flags name the same
	// architecture in their low byte (EF_CUDA_SM30).
	if cubin.Kind != KindELF || cubin.SMArch != 30 || cubin.CodeMajor != 1 || cubin.CodeMinor != 7 ||
		cubin.Flags != Flag64Bit|FlagLinux || cubin.Compression() != CompressionNone || cubin.HeaderSize != 64 ||
		cubin.PayloadSize != 0x268 || cubin.Offset != 16 || cubin.Identifier != "" || cubin.Options != "" {
		t.Errorf("cubin entry %+v", cubin)
	}
	if !bytes.HasPrefix(cubin.Data, []byte("\x7fELF\x02\x01\x01")) || binary.LittleEndian.Uint16(cubin.Data[18:]) != 190 ||
		binary.LittleEndian.Uint32(cubin.Data[48:])&0xff != cubin.SMArch {
		t.Errorf("cubin payload is not an sm_30 EM_CUDA ELF: % x", cubin.Data[:52])
	}

	// The PTX: LZ4-compressed 54 bytes to 56, PTX ISA 6.5, which the
	// decompressed text's .version directive confirms.
	if ptx.Kind != KindPTX || ptx.SMArch != 30 || ptx.CodeMajor != 6 || ptx.CodeMinor != 5 ||
		ptx.Flags != Flag64Bit|FlagLinux|FlagLZ4 || ptx.HeaderSize != 0x48 || ptx.OptionsOffset != 0x40 ||
		ptx.CompressedSize != 54 || ptx.PayloadSize != 56 || ptx.UncompressedSize != 56 || len(ptx.Data) != 54 {
		t.Errorf("PTX entry %+v", ptx)
	}
	text, err := ptx.Decompress()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), ".version 6.5\n.target sm_30\n.address_size 64\n") {
		t.Errorf("decompressed PTX %q", text)
	}

	// The device link fat binary holds the same cubin; a linked program's
	// .nv_fatbin holds such fat binaries back to back.
	dlink, err := os.ReadFile("testdata/paddle-a_dlink.fatbin")
	if err != nil {
		t.Fatal(err)
	}
	files, err := ParseAll(append(append([]byte{}, id...), dlink...))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[1].Offset != uint64(len(id)) || len(files[1].Entries) != 1 ||
		!bytes.Equal(files[1].Entries[0].Data, cubin.Data) || files[1].Entries[0].Offset != uint64(len(id))+16 {
		t.Errorf("ParseAll: %+v", files)
	}
}

func TestParseWrappers(t *testing.T) {
	le := binary.LittleEndian
	sec := make([]byte, 48)
	for i, v := range []uint32{1, 2} {
		le.PutUint32(sec[i*24:], WrapperMagic)
		le.PutUint32(sec[i*24+4:], v)
		le.PutUint64(sec[i*24+8:], 0x1000*uint64(i+1))
	}
	ws, err := ParseWrappers(sec, le, 8)
	if err != nil || len(ws) != 2 || ws[0].Version != WrapperVersion || ws[1].Version != WrapperLinkVersion || ws[1].Data != 0x2000 {
		t.Fatalf("ParseWrappers: %+v, %v", ws, err)
	}
	sec32 := make([]byte, 16)
	le.PutUint32(sec32, WrapperMagic)
	le.PutUint32(sec32[4:], 1)
	le.PutUint32(sec32[8:], 0x400)
	le.PutUint32(sec32[12:], 0x800)
	if ws, err := ParseWrappers(sec32, le, 4); err != nil || len(ws) != 1 || ws[0].Data != 0x400 || ws[0].Filename != 0x800 {
		t.Errorf("32-bit: %+v, %v", ws, err)
	}
	for _, tc := range []struct {
		sec  []byte
		ptr  int
		want string
	}{
		{sec[:20], 8, "not a multiple of 24"},
		{sec, 2, "pointer size 2"},
		{append(append([]byte{}, sec[:24]...), make([]byte, 24)...), 8, "wrapper at offset 0x18: magic 0x0"},
	} {
		if _, err := ParseWrappers(tc.sec, le, tc.ptr); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseWrappers: %v, want %q", err, tc.want)
		}
	}
}
