package syclbin

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/offcc/offcc/packager"
)

// sameFile reports how a and b differ in content (Version aside), or "".
func sameFile(a, b *File) string {
	md := func(r *PropertySetRegistry) string { return string(r.Marshal()) }
	if md(&a.GlobalMetadata) != md(&b.GlobalMetadata) {
		return fmt.Sprintf("global metadata %q vs %q", md(&a.GlobalMetadata), md(&b.GlobalMetadata))
	}
	if len(a.Modules) != len(b.Modules) {
		return fmt.Sprintf("%d vs %d modules", len(a.Modules), len(b.Modules))
	}
	for i := range a.Modules {
		x, y := &a.Modules[i], &b.Modules[i]
		if md(&x.Metadata) != md(&y.Metadata) {
			return fmt.Sprintf("module %d metadata %q vs %q", i, md(&x.Metadata), md(&y.Metadata))
		}
		if len(x.IR) != len(y.IR) || len(x.Native) != len(y.Native) {
			return fmt.Sprintf("module %d: %d/%d vs %d/%d IR/native", i, len(x.IR), len(x.Native), len(y.IR), len(y.Native))
		}
		for j := range x.IR {
			if md(&x.IR[j].Metadata) != md(&y.IR[j].Metadata) || !bytes.Equal(x.IR[j].Data, y.IR[j].Data) {
				return fmt.Sprintf("module %d IR %d differs", i, j)
			}
		}
		for j := range x.Native {
			if md(&x.Native[j].Metadata) != md(&y.Native[j].Metadata) || !bytes.Equal(x.Native[j].Data, y.Native[j].Data) {
				return fmt.Sprintf("module %d native %d differs", i, j)
			}
		}
	}
	return ""
}

// testFiles are the contents the round-trip tests use, in state state.
func testFiles(state uint32) map[string]*File {
	empty := &File{}
	empty.SetState(state)
	worked := workedExample()
	worked.SetState(state)
	big := bigFile()
	big.SetState(state)
	// A module with extra sets, an IR module without a target (mid-2025
	// compilers) and a PTX module.
	odd := &File{}
	odd.SetState(state)
	am := AbstractModule{}
	am.SetKernelNames([]string{"_ZTS1A", "_ZTS1B"})
	am.Metadata.Add("SYCL/device requirements", "aspects", BytesValue([]byte{1, 0, 0, 0}))
	am.Metadata.Add("SYCL/misc properties", "optLevel", UInt32Value(3))
	noTarget := IRModule{Data: []byte("\x03\x02\x23\x07notarget")}
	noTarget.Metadata.Add(IRModuleMetadataSet, TypeKey, UInt32Value(IRTypeSPIRV))
	am.IR = []IRModule{noTarget, NewIRModule(IRTypePTX, "nvptx64-nvidia-cuda", []byte(".version 8.0\n"))}
	odd.Modules = []AbstractModule{am, {}}
	return map[string]*File{"empty": empty, "worked": worked, "big": big, "odd": odd}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, state := range []uint32{StateInput, StateObject, StateExecutable} {
		for name, f := range testFiles(state) {
			for _, enc := range []Encoding{EncodingV1, EncodingV2} {
				t.Run(fmt.Sprintf("%s/%s/%s", StateName(state), name, enc), func(t *testing.T) {
					b, err := Encode(f, enc)
					if err != nil {
						t.Fatal(err)
					}
					if !IsFile(b) {
						t.Error("IsFile = false")
					}
					g, genc, err := Decode(b)
					if err != nil {
						t.Fatal(err)
					}
					if genc != enc || g.Version != uint32(enc) {
						t.Errorf("encoding %v, version %d; want %v", genc, g.Version, enc)
					}
					if s, ok := g.State(); !ok || s != state {
						t.Errorf("state %d, %v; want %d", s, ok, state)
					}
					if d := sameFile(f, g); d != "" {
						t.Error(d)
					}
					again, err := Encode(g, enc)
					if err != nil || !bytes.Equal(again, b) {
						t.Errorf("re-encode differs (%v)", err)
					}
				})
			}
		}
	}
}

func TestEncodeV1Bytes(t *testing.T) {
	for name, f := range testFiles(StateExecutable) {
		b, err := Encode(f, EncodingV1)
		if err != nil {
			t.Fatal(err)
		}
		body := Marshal(f)
		want := packager.Marshal([]packager.Image{{Kind: 7, Offload: packager.OffloadSYCL, Data: body}})
		if !bytes.Equal(b, want) {
			t.Errorf("%s: Encode differs from Marshal in a one-entry envelope", name)
		}
		le := binary.LittleEndian
		if le.Uint32(b[4:]) != 1 || le.Uint64(b[8:]) != uint64(len(b)) || len(b) != 80+int(align8(uint64(len(body)))) ||
			le.Uint16(b[32:]) != 7 || le.Uint16(b[34:]) != 8 || le.Uint32(b[36:]) != 0 ||
			le.Uint64(b[48:]) != 0 || le.Uint64(b[56:]) != 80 || le.Uint64(b[64:]) != uint64(len(body)) ||
			!bytes.Equal(b[80:80+len(body)], body) {
			t.Errorf("%s: envelope fields % x", name, b[:80])
		}
	}
	// The worked example: a 304-byte body in a 384-byte file.
	b, _ := Encode(workedExample(), EncodingV1)
	if len(b) != 384 {
		t.Errorf("worked example: %d bytes, want 384", len(b))
	}
}

func TestEncodeV2Layout(t *testing.T) {
	f := bigFile()
	b, err := Encode(f, EncodingV2)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := packager.ParseBlobs(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 1 || blobs[0].Version != 2 {
		t.Fatalf("blobs: %+v", blobs)
	}
	ims := blobs[0].Images
	var got []string
	for _, im := range ims {
		if im.Kind != 7 || im.Offload != packager.OffloadSYCL {
			t.Errorf("entry kinds %d/%d", im.Kind, im.Offload)
		}
		var kv []string
		for _, s := range im.Strings {
			kv = append(kv, s.Key+"="+s.Value)
		}
		role, _ := im.Get("role")
		if want := uint32(0); role == "global_metadata" || role == "am_metadata" {
			want = 1
			if im.Flags != want {
				t.Errorf("%s: flags %d, want OIF_Metadata", role, im.Flags)
			}
		} else if im.Flags != want {
			t.Errorf("%s: flags %d, want 0", role, im.Flags)
		}
		got = append(got, strings.Join(kv, ","))
	}
	const ir = "sycl_format_version=2,role=ir,am_index=%d,ir_type=0,triple=spir64-unknown-unknown"
	const nd = "sycl_format_version=2,role=native,am_index=%d,arch=%s,triple=%s"
	want := []string{
		"sycl_format_version=2,role=global_metadata",
		"sycl_format_version=2,role=am_metadata,am_index=0",
		fmt.Sprintf(nd, 0, "bmg_g21", "spir64_gen-unknown-unknown"),
		fmt.Sprintf(nd, 0, "bmg_g21", "spir64_gen-unknown-unknown"),
		"sycl_format_version=2,role=am_metadata,am_index=1",
		fmt.Sprintf(ir, 1),
		fmt.Sprintf(nd, 1, "bmg_g21", "spir64_gen-unknown-unknown"),
		fmt.Sprintf(nd, 1, "", "spir64_x86_64-unknown-unknown"),
		"sycl_format_version=2,role=am_metadata,am_index=2",
		fmt.Sprintf(ir, 2),
		fmt.Sprintf(ir, 2),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if string(ims[0].Data) != "[SYCLBIN/global metadata]\nstate=1|1\n" || string(ims[1].Data) != "[SYCL/kernel names]\nk=1|1\n" {
		t.Errorf("metadata images %q, %q", ims[0].Data, ims[1].Data)
	}
	// ir/native images: [u64 metadata size][registry text][raw bytes].
	p := ims[5].Data
	text := f.Modules[1].IR[0].Metadata.Marshal()
	if binary.LittleEndian.Uint64(p) != uint64(len(text)) || !bytes.Equal(p[8:8+len(text)], text) || !bytes.Equal(p[8+len(text):], f.Modules[1].IR[0].Data) {
		t.Errorf("ir payload % x", p)
	}
	if len(b)%8 != 0 {
		t.Errorf("size %d not aligned to 8", len(b))
	}
}

// v2 builds a v2 file from entries given as "key=value,..." and data.
func v2(entries ...any) []byte {
	var ims []packager.Image
	for i := 0; i < len(entries); i += 2 {
		im := packager.Image{Kind: 7, Offload: packager.OffloadSYCL, Data: []byte(entries[i+1].(string))}
		for _, kv := range strings.Split(entries[i].(string), ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "kind" {
				fmt.Sscan(v, &im.Kind)
				continue
			}
			im.Strings = append(im.Strings, packager.KeyValue{Key: k, Value: v})
		}
		ims = append(ims, im)
	}
	return packager.MarshalV2(ims)
}

// payload is an ir/native entry image.
func payload(md, raw string) string {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(md)))
	return string(b) + md + raw
}

func TestDecodeAccepts(t *testing.T) {
	f := workedExample()
	body := Marshal(f)

	// Bare body.
	g, enc, err := Decode(body)
	if err != nil || enc != EncodingV1 || sameFile(f, g) != "" {
		t.Errorf("bare: %v %v", enc, err)
	}
	// Old image kind 6 and other offload kinds.
	for _, k := range []struct {
		kind    packager.ImageKind
		offload packager.OffloadKind
	}{{6, 8}, {7, 4}, {7, 5}, {6, 0}} {
		b := packager.Marshal([]packager.Image{{Kind: k.kind, Offload: k.offload, Data: body}})
		if !IsFile(b) {
			t.Errorf("kind %d/%d: IsFile false", k.kind, k.offload)
		}
		g, enc, err := Decode(b)
		if err != nil || enc != EncodingV1 || sameFile(f, g) != "" {
			t.Errorf("kind %d/%d: %v %v", k.kind, k.offload, enc, err)
		}
	}
	// The runtime writer's degenerate v2 envelope: one entry, no strings,
	// ImageOffset 72, Size 72+len, unaligned.
	odd := append(body, 1, 2, 3) // trailing bytes after the body are allowed
	rt := make([]byte, 72, 72+len(odd))
	le := binary.LittleEndian
	copy(rt, []byte{0x10, 0xff, 0x10, 0xad})
	le.PutUint32(rt[4:], 2)
	le.PutUint64(rt[8:], uint64(72+len(odd)))
	le.PutUint64(rt[16:], 32)
	le.PutUint64(rt[24:], 1)
	le.PutUint16(rt[32:], 7)
	le.PutUint16(rt[34:], 5)
	le.PutUint64(rt[40:], 72)
	le.PutUint64(rt[56:], 72)
	le.PutUint64(rt[64:], uint64(len(odd)))
	rt = append(rt, odd...)
	g, enc, err = Decode(rt)
	if err != nil || enc != EncodingV1 || sameFile(f, g) != "" {
		t.Errorf("runtime envelope: %v %v", enc, err)
	}
	// v2 written in another order, with unknown keys, kind 6, no
	// sycl_format_version, and a triple string that disagrees with the
	// metadata (the metadata wins).
	irMod := NewIRModule(IRTypeSPIRV, "spir64-unknown-unknown", nil)
	irMD := string(irMod.Metadata.Marshal())
	b := v2(
		"role=ir,am_index=1,triple=bogus,extra=1", payload(irMD, "IR1"),
		"role=am_metadata,am_index=1,kind=6", "[SYCL/kernel names]\nb=1|1\n",
		"sycl_format_version=2,role=global_metadata", "[SYCLBIN/global metadata]\nstate=1|0\n",
		"role=am_metadata,am_index=0", "",
		"role=native,am_index=0", payload("", "N0"),
		"role=ir,am_index=1", payload("", ""),
	)
	g, enc, err = Decode(b)
	if err != nil || enc != EncodingV2 {
		t.Fatalf("v2 reordered: %v %v", enc, err)
	}
	if len(g.Modules) != 2 || len(g.Modules[0].Native) != 1 || string(g.Modules[0].Native[0].Data) != "N0" ||
		len(g.Modules[1].IR) != 2 || string(g.Modules[1].IR[0].Data) != "IR1" || len(g.Modules[1].IR[1].Data) != 0 {
		t.Fatalf("v2 reordered: %+v", g)
	}
	if tg, _ := g.Modules[1].IR[0].Target(); tg != "spir64-unknown-unknown" {
		t.Errorf("target %q", tg)
	}
	if k := g.Modules[1].KernelNames(); !reflect.DeepEqual(k, []string{"b"}) {
		t.Errorf("kernels %q", k)
	}
	if s, _ := g.State(); s != StateInput {
		t.Errorf("state %d", s)
	}
	// IR data aliases the input.
	if ir := g.Modules[1].IR[0].Data; &ir[0] != &b[bytes.Index(b, []byte("IR1"))] {
		t.Error("IR data does not alias the input")
	}
}

func TestDecodeErrors(t *testing.T) {
	good := Marshal(workedExample())
	env, _ := Encode(workedExample(), EncodingV1)
	v2good, _ := Encode(bigFile(), EncodingV2)
	glob := "[SYCLBIN/global metadata]\nstate=1|2\n"
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "not a SYCLBIN file: 0 bytes"},
		{"wrong magic", []byte("\x7fELF\x02\x01\x01\x00"), "not a SYCLBIN file: magic 7f 45 4c 46 is neither"},
		{"bare truncated", good[:40], "SYCLBIN file header at offset 0x0: input has 40 bytes"},
		{"bare tables truncated", good[:300], "exceed input size 0x12c"},
		{"envelope truncated", env[:len(env)-8], "SYCLBIN envelope: offload binary at offset 0x0: size 0x180 runs past end of input"},
		{"envelope short", env[:50], "SYCLBIN envelope: offload binary at offset 0x0: truncated"},
		{"body truncated in envelope", packager.Marshal([]packager.Image{{Kind: 7, Data: good[:200]}}), "offload binary image at offset 0x50: SYCLBIN file header at offset 0x0: headers"},
		{"body bad magic", packager.Marshal([]packager.Image{{Kind: 7, Data: []byte("IBYX....")}}), "offload binary v1 entry 0 at offset 0x50 holds no SYCLBIN body"},
		{"not syclbin kind", packager.Marshal([]packager.Image{{Kind: 1, Data: good}}), "not a SYCLBIN file: offload binary entry 0 has image kind 1, not IMG_SYCLBIN (7)"},
		{"two entries v1", packager.Marshal([]packager.Image{{Kind: 7, Data: good}, {Kind: 7, Data: good}}), "offload binary holds 2 entries; a v1 SYCLBIN file holds one"},
		{"v2 truncated", v2good[:len(v2good)-16], "SYCLBIN envelope: offload binary at offset 0x0: size"},
		{"v2 no entries", put64(append(packager.MarshalV2(nil), make([]byte, 32)...), 8, 72), "offload binary v2 has no entries"},
		{"v2 trailing blob", append(v2(
			"role=global_metadata", glob), env...), "bytes after the SYCLBIN v2 offload binary"},
		{"am index out of range", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=ir,am_index=1", payload("", "x")), "SYCLBIN v2 entry 2 (ir) at offset 0x70: am_index 1 out of range: the file has 1 am_metadata entries"},
		{"am index huge", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=18446744073709551615", ""), "am_index 18446744073709551615 out of range"},
		{"am index overflow", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=18446744073709551616", ""), `v2 entry 1 (am_metadata) at offset 0x48: invalid am_index "18446744073709551616"`},
		{"am index sign", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=+0", ""), `invalid am_index "+0"`},
		{"am index missing", v2(
			"role=global_metadata", glob,
			"role=native", payload("", "x")), `v2 entry 1 (native) at offset 0x48: no "am_index" key`},
		{"unknown role", v2(
			"role=global_metadata", glob,
			"role=gizmo,am_index=0", ""), `SYCLBIN v2 entry 1 at offset 0x48: unknown role "gizmo"`},
		{"no role", v2(
			"role=global_metadata", glob,
			"sycl_format_version=2", ""), `v2 entry 1 at offset 0x48: no "role" key`},
		{"duplicate global", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=global_metadata", glob), "v2 entry 2 (global_metadata) at offset 0x70: duplicate global metadata: entry 0 is global_metadata too"},
		{"missing global", v2(
			"role=am_metadata,am_index=0", ""), "SYCLBIN v2 offload binary at offset 0x0: no global_metadata entry"},
		{"duplicate am", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=am_metadata,am_index=0", ""), "v2 entry 2 (am_metadata) at offset 0x70: duplicate am_metadata for am_index 0 (entry 1 has it too)"},
		{"am index gap", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=1", "",
			"role=am_metadata,am_index=2", ""), "v2 entry 2 (am_metadata) at offset 0x70: am_index 2 out of range: the file has 2 am_metadata entries"},
		{"format version", v2(
			"role=global_metadata,sycl_format_version=3", glob), `v2 entry 0 at offset 0x20: unsupported sycl_format_version "3" (want "2")`},
		{"entry kind", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0,kind=2", ""), "v2 entry 1 at offset 0x48: image kind 2 is not IMG_SYCLBIN (7)"},
		{"payload short", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=ir,am_index=0", "1234567"), "v2 entry 2 (ir) at offset 0x70: image has 7 bytes, too short for its 8-byte metadata size"},
		{"payload md size", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=native,am_index=0", "\xff\xff\xff\xff\xff\xff\xff\xffabc"), "metadata size 0xffffffffffffffff runs past the end of the image (0x3 bytes after the size)"},
		{"bad global metadata", v2(
			"role=global_metadata", "[a]\nnot a property\n"), "v2 entry 0 (global_metadata) at offset 0x20: metadata at offset 0x"},
		{"bad ir metadata", v2(
			"role=global_metadata", glob,
			"role=am_metadata,am_index=0", "",
			"role=ir,am_index=0", payload("junk", "")), "v2 entry 2 (ir) at offset 0x70: metadata at offset 0x"},
	}
	for _, c := range cases {
		f, _, err := Decode(c.in)
		if err == nil {
			t.Errorf("%s: accepted: %+v", c.name, f)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v\nwant it to contain %q", c.name, err, c.want)
		}
		if IsFile(c.in) && strings.HasPrefix(err.Error(), "not a SYCLBIN file") {
			t.Errorf("%s: IsFile true but Decode says not a SYCLBIN file", c.name)
		}
	}
}

// Hostile sizes in a small file must fail before allocating much.
func TestDecodeHostileSizesNoAllocation(t *testing.T) {
	le := binary.LittleEndian
	glob := "[SYCLBIN/global metadata]\nstate=1|2\n"
	base := v2("role=global_metadata", glob, "role=am_metadata,am_index=0", "", "role=ir,am_index=0", payload("", "xyz"))
	entries := le.Uint64(base[16:])
	ir := bytes.Index(base, []byte("xyz")) - 8
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"entries count", put64(base, 24, 1<<60)},
		{"blob size", put64(base, 8, 1<<62)},
		{"image size", put64(base, int(entries)+40*2+32, 1<<61)},
		{"string count", put64(base, int(entries)+40*2+16, 1<<59)},
		{"metadata size", put64(base, ir, 1<<63)},
		{"am index", v2("role=global_metadata", glob, "role=am_metadata,am_index=1152921504606846976", "")},
		{"bare counts", put32(Marshal(&File{}), 8, 0xffffffff)},
	} {
		if _, _, err := Decode(c.in); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if n := allocBytes(func() { _, _, _ = Decode(c.in) }); n > 8192 {
			t.Errorf("%s: %d bytes allocated", c.name, n)
		}
	}
}

func TestIsFile(t *testing.T) {
	good := Marshal(workedExample())
	v1, _ := Encode(workedExample(), EncodingV1)
	v2b, _ := Encode(workedExample(), EncodingV2)
	// A v2 file whose entries have the old kind 6: IsFile finds "role".
	old := packager.MarshalV2([]packager.Image{{Kind: 6, Strings: []packager.KeyValue{{Key: "sycl_format_version", Value: "2"}, {Key: "role", Value: "global_metadata"}}}})
	for name, c := range map[string]struct {
		in   []byte
		want bool
	}{
		"bare":          {good, true},
		"bare magic":    {good[:4], true},
		"v1":            {v1, true},
		"v2":            {v2b, true},
		"v2 kind 6":     {old, true},
		"kind 6 body":   {packager.Marshal([]packager.Image{{Kind: 6, Data: good}}), true},
		"kind 6 spirv":  {packager.Marshal([]packager.Image{{Kind: 6, Strings: []packager.KeyValue{{Key: "triple", Value: "spirv64"}}, Data: []byte("\x03\x02\x23\x07")}}), false},
		"kind 1":        {packager.Marshal([]packager.Image{{Kind: 1, Data: good}}), false},
		"header only":   {v1[:8], false},
		"empty":         {nil, false},
		"elf":           {[]byte("\x7fELF\x02\x01\x01\x00"), false},
		"bad entry off": {put64(v1, 16, 1<<40), false},
	} {
		if got := IsFile(c.in); got != c.want {
			t.Errorf("%s: IsFile = %v, want %v", name, got, c.want)
		}
	}
	if _, _, err := Decode(old); err != nil {
		t.Errorf("v2 kind 6: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	f := workedExample()
	if _, err := Encode(f, 3); err == nil || !strings.Contains(err.Error(), "unknown encoding 3") {
		t.Errorf("encoding 3: %v", err)
	}
	bad := workedExample()
	bad.Modules[0].Metadata.Add("SYCL/kernel names", "a=b", UInt32Value(1))
	for _, enc := range []Encoding{EncodingV1, EncodingV2} {
		if _, err := Encode(bad, enc); err == nil || !strings.Contains(err.Error(), "abstract module 0 metadata: property set \"SYCL/kernel names\" key \"a=b\"") {
			t.Errorf("bad key, %v: %v", enc, err)
		}
	}
	nul := &File{Modules: []AbstractModule{{Native: []NativeImage{NewNativeImage("a\x00b", "t", nil)}}}}
	if _, err := Encode(nul, EncodingV1); err != nil {
		t.Errorf("NUL in arch, v1: %v", err)
	}
	if _, err := Encode(nul, EncodingV2); err == nil || !strings.Contains(err.Error(), "abstract module 0 arch of native image 0: \"a\\x00b\" holds a NUL byte") {
		t.Errorf("NUL in arch, v2: %v", err)
	}
}

func TestKernelNames(t *testing.T) {
	var am AbstractModule
	if am.KernelNames() != nil {
		t.Error("no set: want nil")
	}
	am.Metadata.Add("SYCL/misc properties", "optLevel", UInt32Value(2))
	am.SetKernelNames([]string{"_ZTS2KB", "_ZTS2KA", "_ZTS2KB"})
	am.Metadata.Add("SYCL/device requirements", "aspects", BytesValue(nil))
	want := "[SYCL/misc properties]\noptLevel=1|2\n[SYCL/kernel names]\n_ZTS2KB=1|1\n_ZTS2KA=1|1\n[SYCL/device requirements]\naspects=2|AAAAAAAAAAA\n"
	if got := string(am.Metadata.Marshal()); got != want {
		t.Errorf("metadata\n%q\nwant\n%q", got, want)
	}
	if got := am.KernelNames(); !reflect.DeepEqual(got, []string{"_ZTS2KB", "_ZTS2KA"}) {
		t.Errorf("KernelNames = %q", got)
	}
	// Replacing keeps the set's position.
	am.SetKernelNames([]string{"k"})
	if got := string(am.Metadata.Marshal()); !strings.Contains(got, "optLevel=1|2\n[SYCL/kernel names]\nk=1|1\n[SYCL/device") {
		t.Errorf("after replace: %q", got)
	}
	// Names written by others are read in stored order, whatever the value.
	r, err := ParsePropertySets([]byte("[SYCL/kernel names]\nz=1|1\na=1|0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := (&AbstractModule{Metadata: r}).KernelNames(); !reflect.DeepEqual(got, []string{"z", "a"}) {
		t.Errorf("parsed names %q", got)
	}
	am.SetKernelNames(nil)
	if am.KernelNames() != nil || am.Metadata.Set(KernelNamesSet) != nil || len(am.Metadata.Sets) != 2 {
		t.Errorf("after removal: %+v", am.Metadata)
	}
	am.SetKernelNames(nil) // no set: nothing to do
	empty := AbstractModule{Metadata: PropertySetRegistry{Sets: []PropertySet{{Name: KernelNamesSet}}}}
	if empty.KernelNames() != nil {
		t.Error("empty set: want nil")
	}
}

func TestStates(t *testing.T) {
	for s, name := range []string{"input", "object", "executable"} {
		if got := StateName(uint32(s)); got != name {
			t.Errorf("StateName(%d) = %q", s, got)
		}
		if got, err := ParseState(name); err != nil || got != uint32(s) {
			t.Errorf("ParseState(%q) = %d, %v", name, got, err)
		}
	}
	if got := StateName(7); got != "7" {
		t.Errorf("StateName(7) = %q", got)
	}
	for _, s := range []string{"", "Input", "2", "exe"} {
		if _, err := ParseState(s); err == nil || !strings.Contains(err.Error(), "want input, object or executable") {
			t.Errorf("ParseState(%q): %v", s, err)
		}
	}
	if EncodingV1.String() != "v1" || EncodingV2.String() != "v2" || Encoding(0).String() != "encoding 0" {
		t.Error("Encoding.String")
	}
}
