package poclbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// Reference values computed with pocl's C loop (char is signed on x86).
func TestDeviceID(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63bd4c8601b7be},
		{"cpu-x86_64-pc-linux-gnu-skylake", 0x08421dcd70fcd65e},
		{"CUDA-sm_80", 0x8a2236943086a4c0},
		{"caf\xc3\xa9-\xff", 0x9fb28cccb2ef2f55},
	} {
		if got := DeviceID(c.s); got != c.want {
			t.Errorf("DeviceID(%q) = %#016x, want %#016x", c.s, got, c.want)
		}
	}
}

func sampleProgram() *Program {
	return &Program{
		DeviceID:             DeviceID("cpu-x86_64-pc-linux-gnu-skylake"),
		Version:              ProgramVersion,
		Flags:                FlagProgramScopeVars | FlagFlushDenorms | uint64(BinaryTypeExecutable)<<32,
		BuildHash:            "KKILOIDNDGMMLILKELBBFGLPCBNNGOPGKKBPB",
		ProgramScopeVarBytes: 128,
		RootEntries: []RootEntry{
			{Files: []FileRecord{{Path: "/program.bc", Size: 4, Data: []byte("BC\xc0\xde")}}},
			{Files: []FileRecord{{Path: "/pocl.gvar.init/a", Size: 0, Data: []byte{}}, {Path: "/pocl.gvar.init/b", Size: 1, Data: []byte{7}}}},
		},
		Kernels: []Kernel{
			{
				Name: "vector_add", NumArgs: 2, NumLocals: 1,
				ReqdWGSize:     [3]uint64{64, 1, 1},
				LocalSizes:     []uint64{256},
				Attributes:     "reqd_work_group_size(64,1,1)",
				HasArgMetadata: 0x1f,
				KernelFlags:    KernelHasSubGroupMeta | KernelHasWorkGroupMeta | KernelHasReqdSubGroupSize,
				MaxSubgroups:   8, CompileSubgroups: 0,
				MaxWGSize: 4096, PreferredWGMultiple: 8, LocalMemSize: 256, PrivateMemSize: 16, SpillMemSize: 0,
				ReqdSubGroupSize: 16,
				Args: []KernelArg{
					{AccessQualifier: 0x11A3, AddressQualifier: 0x119B, TypeQualifier: 1 << 40, Type: 1, TypeSize: 8, Name: "a", TypeName: "float*"},
					{AccessQualifier: 0x11A3, AddressQualifier: 0x119E, Type: 0, TypeSize: 4, Name: "n", TypeName: ""},
				},
				Files: []FileRecord{{Path: "/vector_add/64-1-1/vector_add.so", Size: 3, Data: []byte("ELF")}},
			},
			{Name: "empty", Files: nil},
		},
	}
}

// handBuilt writes sampleProgram's bytes following pocl_binary.c's writer
// step by step, independently of MarshalProgram.
func handBuilt() []byte {
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	str := func(s string) { u32(uint32(len(s))); b = append(b, s...) }
	b = append(b, "poclbin\x00"...)
	u64(DeviceID("cpu-x86_64-pc-linux-gnu-skylake"))
	u32(12)
	u32(2)
	u64(3 | 4<<32)
	u32(2)
	hash := make([]byte, 41)
	copy(hash, "KKILOIDNDGMMLILKELBBFGLPCBNNGOPGKKBPB")
	b = append(b, hash...)
	u64(128)
	// root entry 1: 8 size + files
	u64(4 + 11 + 4 + 4)
	str("/program.bc")
	str("BC\xc0\xde")
	u64(4 + 17 + 4 + 4 + 17 + 4 + 1)
	str("/pocl.gvar.init/a")
	str("")
	str("/pocl.gvar.init/b")
	str("\x07")
	// kernel 0
	k0 := len(b)
	u64(0)
	u64(0)
	u32(0)
	str("vector_add")
	u32(2)
	u32(1)
	u64(64)
	u64(1)
	u64(1)
	u64(256)
	str("reqd_work_group_size(64,1,1)")
	u32(0x1f)
	u32(2 | 4 | 8)
	u32(8) // subgroups (flag 4) come first
	u32(0)
	u32(4096) // workgroup (flag 2)
	u32(8)
	u32(256)
	u32(16)
	u32(0)
	u32(16) // reqd subgroup size (flag 8)
	args := len(b)
	u32(0x11A3)
	u32(0x119B)
	u64(1 << 40)
	u32(1)
	u32(8)
	str("a")
	str("float*")
	u32(0x11A3)
	u32(0x119E)
	u64(0)
	u32(0)
	u32(4)
	str("n")
	u32(0)
	files := len(b)
	str("/vector_add/64-1-1/vector_add.so")
	str("ELF")
	binary.LittleEndian.PutUint64(b[k0:], uint64(len(b)-k0))
	binary.LittleEndian.PutUint64(b[k0+8:], uint64(len(b)-files))
	binary.LittleEndian.PutUint32(b[k0+16:], uint32(files-args))
	// kernel 1: no args, no locals, no files, no flags
	k1 := len(b)
	u64(0)
	u64(0)
	u32(0)
	str("empty")
	u32(0)
	u32(0)
	u64(0)
	u64(0)
	u64(0)
	str("")
	u32(0)
	u32(0)
	binary.LittleEndian.PutUint64(b[k1:], uint64(len(b)-k1))
	return b
}

func TestProgramLayout(t *testing.T) {
	want := handBuilt()
	got := MarshalProgram(sampleProgram())
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalProgram differs from the hand-built v12 layout:\n got % x\nwant % x", got, want)
	}
	if !IsProgramBinary(got) || IsArchive(got) {
		t.Errorf("detection wrong")
	}
	p, err := ParseProgram(want)
	if err != nil {
		t.Fatal(err)
	}
	exp := sampleProgram()
	exp.Kernels[1].Files = nil
	exp.Kernels[0].ArgInfoSize = uint32(2*24 + 4 + 1 + 4 + 6 + 4 + 1 + 4)
	// The records' places: kernel 0 follows the 85-byte header and the two
	// root entries (31 and 59 bytes), kernel 1 follows it and ends the file.
	k0 := uint64(85 + 31 + 59)
	k0Size := binary.LittleEndian.Uint64(want[k0:])
	exp.Kernels[0].Offset, exp.Kernels[0].StructSize = k0, k0Size
	exp.Kernels[1].Offset, exp.Kernels[1].StructSize = k0+k0Size, uint64(len(want))-k0-k0Size
	if !reflect.DeepEqual(p, exp) {
		t.Errorf("ParseProgram:\n got %+v\nwant %+v", p, exp)
	}
	if p.BinaryType() != BinaryTypeExecutable || p.BinaryType().String() != "executable" {
		t.Errorf("BinaryType = %v", p.BinaryType())
	}
	if &p.Kernels[0].Files[0].Data[0] == nil || &p.RootEntries[0].Files[0].Data[0] != &want[8+8+4+4+8+4+41+8+8+4+11+4] {
		t.Errorf("file data does not alias the input")
	}
}

func TestBinaryTypeNames(t *testing.T) {
	for typ, name := range map[BinaryType]string{0: "none", 1: "compiled object", 2: "library", 4: "executable"} {
		if typ.String() != name {
			t.Errorf("%d: %q", typ, typ.String())
		}
	}
	if !strings.Contains(BinaryType(3).String(), "unknown") {
		t.Errorf("3: %q", BinaryType(3).String())
	}
}

func TestProgramVersions(t *testing.T) {
	// v10: u64 has_arg_metadata, no kernel flags.
	p := sampleProgram()
	p.Version = 10
	k := &p.Kernels[0]
	k.KernelFlags, k.MaxSubgroups, k.MaxWGSize, k.PreferredWGMultiple, k.LocalMemSize, k.PrivateMemSize, k.ReqdSubGroupSize = 0, 0, 0, 0, 0, 0, 0
	k.HasArgMetadata = 1 << 35
	b := MarshalProgram(p)
	q, err := ParseProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	if q.Kernels[0].HasArgMetadata != 1<<35 || q.Kernels[0].Args[1].Name != "n" {
		t.Errorf("v10: %+v", q.Kernels[0])
	}
	if !bytes.Equal(MarshalProgram(q), b) {
		t.Errorf("v10 round trip differs")
	}
	// v9 without program-scope variables: 77-byte header.
	p.Version = 9
	p.Flags = uint64(BinaryTypeCompiledObject) << 32
	p.RootEntries = nil
	p.Kernels = nil
	b = MarshalProgram(p)
	if len(b) != 77 {
		t.Errorf("v9 empty program is %d bytes, want 77", len(b))
	}
	if q, err := ParseProgram(b); err != nil || q.BinaryType() != BinaryTypeCompiledObject {
		t.Errorf("v9: %+v, %v", q, err)
	}
	// v13: kernel metadata is opaque, but names and files are read.
	p = sampleProgram()
	b = MarshalProgram(p)
	binary.LittleEndian.PutUint32(b[16:], 13)
	q, err = ParseProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	if k := q.Kernels[0]; k.Name != "vector_add" || k.NumArgs != 2 || len(k.Opaque) == 0 || k.Args != nil || len(k.Files) != 1 {
		t.Errorf("v13 kernel: %+v", k)
	}
	if !bytes.Equal(MarshalProgram(q), b) {
		t.Errorf("v13 round trip differs")
	}
}

// TestDefaultVersionPocl31 checks that a program without a version is
// written in the format pocl 3.1 (Debian 12) reads: version 9, only the
// header flags version 9 knows, no program-scope variable size and the v9
// kernel layout; and that a newer version is written when asked for.
func TestDefaultVersionPocl31(t *testing.T) {
	le := binary.LittleEndian
	p := sampleProgram()
	p.Version = 0
	p.Flags |= 1 << 5 // unknown to every version
	b := MarshalProgram(p)
	if v := le.Uint32(b[16:]); v != 9 {
		t.Errorf("default version = %d, want 9", v)
	}
	flags := le.Uint64(b[24:])
	if want := FlagFlushDenorms | uint64(BinaryTypeExecutable)<<32; flags != want {
		t.Errorf("default flags = %#x, want %#x (flush denorms, executable; nothing pocl 3.1 does not know)", flags, want)
	}
	// pocl 3.1's header is 77 bytes: the first root entry's size follows.
	if n := le.Uint64(b[77:]); n != 4+11+4+4 {
		t.Errorf("first root entry size at 77 = %#x, want 0x17: header is not pocl 3.1's", n)
	}
	q, err := ParseProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	k := q.Kernels[0]
	if q.Version != 9 || q.ProgramScopeVarBytes != 0 || k.KernelFlags != 0 || k.HasArgMetadata != 0x1f || len(k.Args) != 2 || k.Args[1].Name != "n" || string(k.Files[0].Data) != "ELF" {
		t.Errorf("default output parses as %+v, kernel %+v", q, k)
	}

	p.Version = ProgramVersion
	b = MarshalProgram(p)
	if v := le.Uint32(b[16:]); v != 12 {
		t.Errorf("explicit version 12 written as %d", v)
	}
	if q, err := ParseProgram(b); err != nil || q.ProgramScopeVarBytes != 128 || q.Kernels[0].ReqdSubGroupSize != 16 {
		t.Errorf("explicit version 12: %+v, %v", q, err)
	}
	if KnownFlags(9)&FlagProgramScopeVars != 0 || KnownFlags(10)&FlagProgramScopeVars == 0 {
		t.Errorf("KnownFlags: v9 %#x, v10 %#x", KnownFlags(9), KnownFlags(10))
	}
}

func TestProgramErrors(t *testing.T) {
	good := handBuilt()
	// Every truncation fails cleanly.
	for n := 0; n < len(good); n++ {
		if _, err := ParseProgram(good[:n]); err == nil {
			t.Fatalf("truncated to %d: no error", n)
		} else if _, ok := err.(*FormatError); !ok {
			t.Fatalf("truncated to %d: %T %v", n, err, err)
		}
	}
	mod := func(f func(b []byte)) []byte { c := bytes.Clone(good); f(c); return c }
	le := binary.LittleEndian
	const roots = 85
	k0 := roots + 31 + 59
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"magic", mod(func(b []byte) { b[7] = 1 }), "header at offset 0x0: missing magic"},
		{"version", mod(func(b []byte) { le.PutUint32(b[16:], 8) }), "unsupported version 8"},
		{"trailing", append(bytes.Clone(good), 0), "end at offset"},
		{"kernel count", mod(func(b []byte) { le.PutUint32(b[20:], 0xffffffff) }), "4294967295 kernels need"},
		{"root count", mod(func(b []byte) { le.PutUint32(b[32:], 0xffffffff) }), "4294967295 root entries need"},
		{"root size", mod(func(b []byte) { le.PutUint64(b[roots:], 1<<63) }), "root entry 0 at offset 0x55: size 0x8000000000000000 runs past end"},
		{"root size short", mod(func(b []byte) { le.PutUint64(b[roots:], 22) }), "root entry 0 file 0 content"},
		{"path len", mod(func(b []byte) { le.PutUint32(b[roots+8:], 0xffffffff) }), "root entry 0 file 0 path at offset 0x5d: length 0xffffffff runs past"},
		{"empty path", mod(func(b []byte) { le.PutUint32(b[roots+8:], 0) }), "empty path"},
		{"struct_size", mod(func(b []byte) { le.PutUint64(b[k0:], 1<<62) }), "kernel 0 at offset 0xaf: struct_size 0x4000000000000000 outside"},
		{"struct_size small", mod(func(b []byte) { le.PutUint64(b[k0:], 5) }), "struct_size 0x5 outside"},
		{"binaries_size", mod(func(b []byte) { le.PutUint64(b[k0+8:], 1<<63) }), "binaries_size 0x8000000000000000 does not fit"},
		{"binaries_size off", mod(func(b []byte) { le.PutUint64(b[k0+8:], le.Uint64(b[k0+8:])+4) }), "kernel 0 (\"vector_add\") argument 1 type name"},
		{"arginfo_size", mod(func(b []byte) { le.PutUint32(b[k0+16:], 1) }), "arguments take 0x48 bytes, arginfo_size says 0x1"},
		{"num_args", mod(func(b []byte) { le.PutUint32(b[k0+34:], 0xffffffff) }), "4294967295 arguments need"},
		{"num_locals", mod(func(b []byte) { le.PutUint32(b[k0+38:], 0x10000000) }), "268435456 local sizes need"},
		{"name len", mod(func(b []byte) { le.PutUint32(b[k0+20:], 0xfffffff0) }), "kernel 0 name at offset 0xc3: length 0xfffffff0 runs past"},
	}
	for _, c := range cases {
		_, err := ParseProgram(c.in)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err = %v", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %q", c.name, err, c.want)
		}
	}
}

// TestRealPocl31Binary reads a binary pocl 3.1 wrote (testdata/README.md):
// each kernel record's place in the file, and that writing it back with the
// default version gives pocl 3.1's bytes exactly.
func TestRealPocl31Binary(t *testing.T) {
	b, err := os.ReadFile("testdata/pocl31.poclbin")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProgram(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 9 || p.BinaryType() != BinaryTypeExecutable || len(p.RootEntries) != 1 || p.RootEntries[0].Files[0].Path != "/program.bc" {
		t.Errorf("header: version %d, %v, roots %+v", p.Version, p.BinaryType(), p.RootEntries)
	}
	want := []struct {
		name         string
		offset, size uint64
		file         string
	}{
		{"vadd", 0x8944, 0x35b0, "/vadd/0-0-0/vadd.so"},
		{"scale", 0xbef4, 0x3593, "/scale/0-0-0/scale.so"},
	}
	if len(p.Kernels) != len(want) {
		t.Fatalf("%d kernels, want %d", len(p.Kernels), len(want))
	}
	for i, w := range want {
		k := p.Kernels[i]
		if k.Name != w.name || k.Offset != w.offset || k.StructSize != w.size || len(k.Files) != 1 || k.Files[0].Path != w.file {
			t.Errorf("kernel %d: %s at %#x, %#x bytes, files %d; want %s at %#x, %#x bytes, %s", i, k.Name, k.Offset, k.StructSize, len(k.Files), w.name, w.offset, w.size, w.file)
		}
		if got := binary.LittleEndian.Uint64(b[w.offset:]); got != w.size {
			t.Errorf("struct_size at %#x is %#x", w.offset, got)
		}
	}
	p.Version = 0
	if out := MarshalProgram(p); !bytes.Equal(out, b) {
		t.Errorf("MarshalProgram with the default version differs from pocl 3.1's bytes (%d vs %d bytes)", len(out), len(b))
	}
}
