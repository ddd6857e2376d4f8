package syclbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// workedExample builds the content of FORMATS.md §3.2's worked example.
func workedExample() *File {
	f := &File{Version: 1}
	f.SetState(StateExecutable)
	am := AbstractModule{IR: []IRModule{NewIRModule(IRTypeSPIRV, "spir64-unknown-unknown", []byte("\x03\x02\x23\x07SPV!"))}}
	am.Metadata.Add("SYCL/kernel names", "__sycl_kernel_TestKernel", UInt32Value(1))
	f.Modules = []AbstractModule{am}
	return f
}

func TestWorkedExample(t *testing.T) {
	f := workedExample()
	b := Marshal(f)
	if len(b) != 304 {
		t.Fatalf("len = %d, want 304", len(b))
	}
	le := binary.LittleEndian
	if !bytes.Equal(b[:4], []byte{0x49, 0x42, 0x59, 0x53}) || !IsSYCLBIN(b) {
		t.Errorf("magic = % x", b[:4])
	}
	want := map[int]uint64{ // offset -> value (u32 below 24, u64 above)
		4: 1, 8: 1, 12: 1, 16: 0, 20: 0,
		24: 173, 32: 8, 40: 0, 48: 36,
		56: 36, 64: 49, // AM header
		88: 85, 96: 88, 104: 0, 112: 8, // IR header
	}
	for off, v := range want {
		var got uint64
		if off < 24 {
			got = uint64(le.Uint32(b[off:]))
		} else {
			got = le.Uint64(b[off:])
		}
		if got != v {
			t.Errorf("field at %d = %d, want %d", off, got, v)
		}
	}
	// AM header counts/indices: 1 IR module from index 0, no native images.
	if got := b[72:88]; !bytes.Equal(got, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("AM counts = % x", got)
	}
	md := string(b[120 : 120+173])
	wantMD := "[SYCLBIN/global metadata]\nstate=1|2\n" +
		"[SYCL/kernel names]\n__sycl_kernel_TestKernel=1|1\n" +
		"[SYCLBIN/ir module metadata]\ntype=1|0\ntarget=2|wCAAAAAAAAwcwlmc2QTL152au92du1Sdutmbvdnb\n"
	if md != wantMD {
		t.Errorf("metadata table =\n%q\nwant\n%q", md, wantMD)
	}
	if !bytes.Equal(b[293:296], []byte{0, 0, 0}) || string(b[296:]) != "\x03\x02\x23\x07SPV!" {
		t.Errorf("padding/binary = % x", b[290:])
	}

	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := g.State(); !ok || s != StateExecutable {
		t.Errorf("State = %d, %v", s, ok)
	}
	ir := &g.Modules[0].IR[0]
	if typ, ok := ir.Type(); !ok || typ != IRTypeSPIRV {
		t.Errorf("Type = %d, %v", typ, ok)
	}
	if tgt, ok := ir.Target(); !ok || tgt != "spir64-unknown-unknown" {
		t.Errorf("Target = %q, %v", tgt, ok)
	}
	if &ir.Data[0] != &b[296] {
		t.Errorf("IR data does not alias the input")
	}
	if !bytes.Equal(Marshal(g), b) {
		t.Errorf("re-marshal differs")
	}
}

func bigFile() *File {
	f := &File{Version: 1}
	f.SetState(StateObject)
	for i := 0; i < 3; i++ {
		var am AbstractModule
		am.Metadata.Add("SYCL/kernel names", "k"+strings.Repeat("x", i), UInt32Value(1))
		for j := 0; j < i; j++ {
			am.IR = append(am.IR, NewIRModule(IRTypeSPIRV, "spir64-unknown-unknown", bytes.Repeat([]byte{byte(i), byte(j)}, i+j+1)))
		}
		for j := 0; j < 2-i; j++ {
			am.Native = append(am.Native, NewNativeImage("bmg_g21", "spir64_gen-unknown-unknown", bytes.Repeat([]byte{0xee, byte(j)}, 3*j+1)))
		}
		f.Modules = append(f.Modules, am)
	}
	f.Modules[1].Native = append(f.Modules[1].Native, NewNativeImage("", "spir64_x86_64-unknown-unknown", nil))
	return f
}

func TestRoundTrip(t *testing.T) {
	f := bigFile()
	b := Marshal(f)
	if len(b)%8 != 0 {
		t.Errorf("len %d not a multiple of 8", len(b))
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Modules) != 3 || len(g.Modules[1].Native) != 2 || len(g.Modules[2].IR) != 2 {
		t.Fatalf("shape: %+v", g)
	}
	for i := range f.Modules {
		for j, m := range f.Modules[i].IR {
			gm := g.Modules[i].IR[j]
			if !bytes.Equal(gm.Data, m.Data) || !reflect.DeepEqual(gm.Metadata, m.Metadata) {
				t.Errorf("IR %d/%d differs", i, j)
			}
		}
		for j, m := range f.Modules[i].Native {
			gm := g.Modules[i].Native[j]
			if !bytes.Equal(gm.Data, m.Data) || !reflect.DeepEqual(normalize(gm.Metadata), normalize(m.Metadata)) {
				t.Errorf("native %d/%d differs: %+v vs %+v", i, j, gm, m)
			}
		}
	}
	if a, _ := g.Modules[0].Native[1].Arch(); a != "bmg_g21" {
		t.Errorf("Arch = %q", a)
	}
	if a, ok := g.Modules[1].Native[1].Arch(); !ok || a != "" {
		t.Errorf("empty Arch = %q, %v", a, ok)
	}
	if tg, _ := g.Modules[1].Native[1].Target(); tg != "spir64_x86_64-unknown-unknown" {
		t.Errorf("Target = %q", tg)
	}
	if !bytes.Equal(Marshal(g), b) {
		t.Errorf("re-marshal differs")
	}
	// Empty file.
	e := Marshal(&File{})
	if len(e) != 56 {
		t.Errorf("empty len %d", len(e))
	}
	if g, err := Parse(e); err != nil || len(g.Modules) != 0 {
		t.Errorf("empty: %+v %v", g, err)
	}
}

// Files from an LLVM writer revision that does not advance the indices:
// every module's IR starts at index 0. Readers follow the stored values.
func TestNonAdvancingIndices(t *testing.T) {
	f := &File{}
	for i := 0; i < 3; i++ {
		am := AbstractModule{IR: []IRModule{NewIRModule(0, "spir64-unknown-unknown", []byte{byte(i)})}}
		am.Metadata.Add("SYCL/kernel names", "k", UInt32Value(1))
		f.Modules = append(f.Modules, am)
	}
	b := Marshal(f)
	for i := 0; i < 3; i++ {
		binary.LittleEndian.PutUint32(b[56+32*i+20:], 0)
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Modules {
		if d := g.Modules[i].IR[0].Data; len(d) != 1 || d[0] != 0 {
			t.Errorf("module %d IR = %x, want header 0's bytes", i, d)
		}
	}
}

func put32(b []byte, off int, v uint32) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

func put64(b []byte, off int, v uint64) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint64(c[off:], v)
	return c
}

func TestParseErrors(t *testing.T) {
	good := Marshal(workedExample()) // header block 120, md table 120..293, bin 296..304
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"short", good[:55], "file header at offset 0x0: input has 55 bytes"},
		{"magic", put32(good, 0, 0x4942595a), "incorrect magic"},
		{"version", put32(good, 4, 2), "unsupported version 2"},
		{"truncated", good[:303], "exceed input size 0x12f"},
		{"huge AM count", put32(good, 8, 0xffffffff), "exceed input size"},
		{"huge IR count", put32(good, 12, 0xffffffff), "exceed input size"},
		{"huge native count", put32(good, 16, 0xffffffff), "exceed input size"},
		{"md size overflow", put64(good, 24, ^uint64(0)), "exceed input size"},
		{"md size overflow 2", put64(good, 24, ^uint64(0)-6), "exceed input size"},
		{"bin size overflow", put64(good, 32, ^uint64(0)), "exceed input size"},
		{"global md offset", put64(good, 40, 1<<63), "global metadata at offset 0x28: metadata (offset 0x8000000000000000, size 0x24) runs past end of metadata table (0xad bytes)"},
		{"global md size", put64(good, 48, ^uint64(0)), "global metadata at offset 0x28"},
		{"AM md", put64(good, 56, 170), "abstract module header 0 at offset 0x38: metadata (offset 0xaa, size 0x31) runs past end"},
		{"md overlap", put64(put64(good, 88, 0), 96, 173), "IR module header 0 at offset 0x58: metadata (offset 0x0, size 0xad) overlaps other metadata: 0x102 bytes referenced, table has 0xad"},
		{"AM IR count", put32(good, 72, 2), "abstract module header 0 at offset 0x38: IR modules 0..2 (index 0, count 2) outside the 1 IR module headers"},
		{"AM IR index", put32(good, 76, 0xffffffff), "IR modules 4294967295..4294967296"},
		{"AM native count", put32(good, 80, 0xffffffff), "native images"},
		{"AM native index", put32(good, 84, 1), "native images 1..1 (index 1, count 0) outside the 0 native image headers"},
		{"IR md", put64(good, 96, 89), "IR module header 0 at offset 0x58: metadata (offset 0x55, size 0x59) runs past end of metadata table (0xad bytes)"},
		{"IR bytes offset", put64(good, 104, 1), "IR module header 0 at offset 0x58: raw IR bytes (offset 0x1, size 0x8) run past end of binary table (0x8 bytes)"},
		{"IR bytes size", put64(good, 112, ^uint64(0)), "raw IR bytes (offset 0x0, size 0xffffffffffffffff) run past end"},
		{"bad metadata", func() []byte { c := bytes.Clone(good); c[120+36+20+24] = '#'; return c }(), "abstract module header 0 at offset 0x38: metadata at table offset 0x24 (file offset 0x9c): property set registry line 2"},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want *FormatError", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %q", c.name, err, c.want)
		}
	}
}

func TestParseErrorMessageShape(t *testing.T) {
	// Two AMs so that IR header 2 is at 0x98 as in the brief's example.
	f := bigFile()
	b := Marshal(f)
	// headers: 56 + 3 AMs*32 = 152 = 0x98 is IR header 0.
	b = put64(b, 152+16, 1<<40)
	_, err := Parse(b)
	if err == nil || !strings.HasPrefix(err.Error(), "SYCLBIN IR module header 0 at offset 0x98: raw IR bytes (offset 0x10000000000, size 0x") {
		t.Errorf("err = %v", err)
	}
}

// allocBytes returns the bytes fn allocates (averaged over a few runs).
func allocBytes(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for i := 0; i < 10; i++ {
		fn()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / 10
}

// A count of 2^32-1 in a small file must fail before allocating.
func TestHugeCountsNoAllocation(t *testing.T) {
	b := make([]byte, 100)
	binary.LittleEndian.PutUint32(b, Magic)
	binary.LittleEndian.PutUint32(b[4:], 1)
	for _, off := range []int{8, 12, 16} {
		c := put32(b, off, 0xffffffff)
		if n := allocBytes(func() { _, _ = Parse(c) }); n > 4096 {
			t.Errorf("count at %d: %d bytes allocated", off, n)
		}
	}
	// Many AMs all claiming the same IR header range must not multiply work.
	f := &File{}
	for i := 0; i < 4; i++ {
		am := AbstractModule{IR: []IRModule{NewIRModule(0, "t", []byte{1})}}
		f.Modules = append(f.Modules, am)
	}
	c := Marshal(f)
	binary.LittleEndian.PutUint32(c[56+16:], 4) // AM 0 claims all 4
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), "abstract modules 0..1 claim 5 IR modules, file header has 4") {
		t.Errorf("err = %v", err)
	}
}
