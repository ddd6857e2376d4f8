package bundler

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

func TestParseBinaryErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBinary(&buf, []string{"host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a", "openmp-nvptx64-nvidia-cuda-unknown-sm_80"},
		[][]byte{bytes.Repeat([]byte("h"), 18), bytes.Repeat([]byte("d"), 8), bytes.Repeat([]byte("e"), 9)}, 1); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	// FORMATS.md's worked example.
	ents, err := ParseBinary(good)
	if err != nil || len(ents) != 3 || ents[0].Offset != 0xcd || ents[1].Offset != 0xdf || ents[2].Offset != 0xe7 {
		t.Fatalf("ParseBinary = %+v, %v", ents, err)
	}
	for _, e := range ents {
		if &e.Data[0] != &good[e.Offset] {
			t.Error("payload does not alias the input")
		}
	}
	bad := func(mut func(b []byte) []byte, want string) {
		t.Helper()
		b := mut(bytes.Clone(good))
		_, err := ParseBinary(b)
		var fe *FormatError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want error containing %q", err, want)
		}
	}
	bad(func(b []byte) []byte { return b[:30] }, "binary bundle header at offset 0x18: bundle count runs past end")
	bad(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[24:], 1<<62); return b }, "bundle count 4611686018427387904")
	bad(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[0x56+8:], 1<<63); return b }, "binary bundle entry 1 at offset 0x56: payload (offset 0xdf, size 0x8000000000000000) runs past end of input (0xf0 bytes)")
	bad(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[0x56:], ^uint64(0)); return b }, "runs past end")
	bad(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[0x56+16:], ^uint64(0)-5); return b }, "ID length")
	bad(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[0x20:], 0); return b }, "payload offset is 0")
	bad(func(b []byte) []byte { return b[:0x80] }, "binary bundle entry 0 at offset 0x20: payload (offset 0xcd, size 0x12) runs past end of input (0x80 bytes)")
}

func TestHugeCountAllocatesLittle(t *testing.T) {
	b := append([]byte(Magic), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
	b = append(b, make([]byte, 48)...)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	for range 100 {
		ParseBinary(b)
	}
	runtime.ReadMemStats(&ms)
	if d := ms.TotalAlloc - before; d > 100*4096 {
		t.Errorf("allocated %d bytes", d)
	}
}

// TestCompatible checks clang's isCodeObjectCompatible on bundle IDs.
func TestCompatible(t *testing.T) {
	id := func(s string) ID {
		x, err := ParseID(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, c := range []struct {
		code, target string
		hipOMP, want bool
	}{
		{"hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", false, true},
		{"hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a", false, false},
		{"hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", false, true},
		{"hip-amdgcn-amd-amdhsa--gfx90a:xnack-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", false, false},
		{"hip-amdgcn-amd-amdhsa--gfx90a", "openmp-amdgcn-amd-amdhsa--gfx90a", false, false},
		{"hip-amdgcn-amd-amdhsa--gfx90a", "openmp-amdgcn-amd-amdhsa--gfx90a", true, true},
		{"openmp-amdgcn-amd-amdhsa--gfx90a", "hipv4-amdgcn-amd-amdhsa--gfx90a", true, true},
		{"hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx908", false, false},
		{"host-x86_64-unknown-linux-gnu", "host-x86_64-unknown-linux-gnu-", false, true},
		{"host-x86_64-pc-linux-gnu", "host-x86_64-unknown-linux-gnu", false, false},
	} {
		if got := Compatible(id(c.code), id(c.target), c.hipOMP); got != c.want {
			t.Errorf("Compatible(%s, %s, %v) = %v", c.code, c.target, c.hipOMP, got)
		}
	}
}

// TestAtomicOutputs checks that a failing command leaves no output and no
// temporary files, and that -allow-missing-bundles copies a non-bundled
// input to the host output.
func TestAtomicOutputs(t *testing.T) {
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "plain"), []byte("not a bundle"))
	_, e, rc := runMain("-type=bc", "-unbundle", "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80",
		"-input="+in, "-output="+filepath.Join(dir, "h"), "-output="+filepath.Join(dir, "d"))
	if rc != 1 || !strings.Contains(e, "Can't find bundles for host-x86_64-unknown-linux-gnu- and openmp-nvptx64-nvidia-cuda-unknown-sm_80") {
		t.Errorf("rc %d: %s", rc, e)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left after error: %v", ents)
	}
	mustMain(t, "-type=bc", "-unbundle", "-allow-missing-bundles", "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80",
		"-input="+in, "-output="+filepath.Join(dir, "h"), "-output="+filepath.Join(dir, "d"))
	if string(read(t, filepath.Join(dir, "h"))) != "not a bundle" || len(read(t, filepath.Join(dir, "d"))) != 0 {
		t.Error("allow-missing-bundles outputs wrong")
	}
	// A corrupt bundle names the file, the structure and the offset.
	bad := write(t, filepath.Join(dir, "bad.bc"), append([]byte(Magic), 1, 0, 0, 0, 0, 0, 0, 0))
	_, e, rc = runMain("-type=bc", "-unbundle", "-targets=host-x86_64-unknown-linux-gnu", "-input="+bad, "-output="+filepath.Join(dir, "x"))
	if rc != 1 || !strings.Contains(e, "bad.bc: binary bundle header at offset 0x18") {
		t.Errorf("rc %d: %s", rc, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("output written on error")
	}
}

// TestCompressedRoundTrip bundles with -compress (and the environment
// variable) and reads the result with Main and, when present, clang.
func TestCompressedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	h := write(t, filepath.Join(dir, "h"), bytes.Repeat([]byte("host code "), 100))
	d := write(t, filepath.Join(dir, "d"), bytes.Repeat([]byte("device "), 100))
	out := filepath.Join(dir, "z.bc")
	var o, e bytes.Buffer
	env := map[string]string{"OFFLOAD_BUNDLER_COMPRESS": "1", "COMPRESSED_BUNDLE_FORMAT_VERSION": "2"}
	rc := Main("clang-offload-bundler", []string{"-type=bc", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a", "-input=" + h, "-input=" + d, "-output=" + out},
		func(k string) string { return env[k] }, &o, &e)
	if rc != 0 {
		t.Fatal(e.String())
	}
	z := read(t, out)
	if !bytes.HasPrefix(z, []byte("CCOB\x02\x00\x01\x00")) {
		t.Fatalf("not a v2 zstd envelope: %q", z[:8])
	}
	if l := mustMain(t, "-list", "-type=bc", "-input="+out); l != "hip-amdgcn-amd-amdhsa--gfx90a\nhost-x86_64-unknown-linux-gnu-\n" && l != "host-x86_64-unknown-linux-gnu-\nhip-amdgcn-amd-amdhsa--gfx90a\n" {
		t.Errorf("-list: %q", l)
	}
	// Cross-check with clang-offload-bundler where it is installed; CI
	// (OFFCC_REQUIRE_LLVM=1) requires it.
	if _, err := os.Stat(filepath.Join(llvmtest.Bin, "clang-offload-bundler")); err == nil || llvmtest.Required() {
		b := llvmtest.Tool(t, "clang-offload-bundler")
		runTool(t, b, "-unbundle", "-type=bc", "-targets=hip-amdgcn-amd-amdhsa--gfx90a", "-input="+out, "-output="+filepath.Join(dir, "dd"))
		if !bytes.Equal(read(t, filepath.Join(dir, "dd")), read(t, d)) {
			t.Error("clang unbundled a different payload")
		}
		// And Main reads clang's compressed output.
		runTool(t, b, "-compress", "-type=bc", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a", "-input="+h, "-input="+d, "-output="+filepath.Join(dir, "c.bc"))
		mustMain(t, "-unbundle", "-type=bc", "-targets=hip-amdgcn-amd-amdhsa--gfx90a", "-input="+filepath.Join(dir, "c.bc"), "-output="+filepath.Join(dir, "d2"))
		if !bytes.Equal(read(t, filepath.Join(dir, "d2")), read(t, d)) {
			t.Error("Main unbundled a different payload from clang's compressed bundle")
		}
	}
}

func TestHelpVersionAndArgs(t *testing.T) {
	if o := mustMain(t, "--help"); !strings.Contains(o, "--bundle-align=<uint>") {
		t.Error("help")
	}
	if o := mustMain(t, "--version"); !strings.Contains(o, "22") {
		t.Error("version")
	}
	if _, e, rc := runMain("-targets=x"); rc != 1 || !strings.Contains(e, "for the --type option: must be specified at least once!") {
		t.Errorf("missing -type: %d %s", rc, e)
	}
	if _, e, rc := runMain("-type", "bc", "--bogus"); rc != 1 || !strings.Contains(e, "Unknown command line argument '--bogus'") {
		t.Errorf("unknown option: %d %s", rc, e)
	}
	// Legacy -inputs/-outputs and separate values.
	dir := t.TempDir()
	a := write(t, filepath.Join(dir, "a"), []byte("A"))
	bb := write(t, filepath.Join(dir, "b"), []byte("B"))
	var o, e bytes.Buffer
	rc := Main("cob", []string{"--type", "bc", "--targets", "host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80", "-inputs=" + a + "," + bb, "--output", filepath.Join(dir, "o")}, nil, &o, &e)
	if rc != 0 || !strings.Contains(e.String(), "cob: warning: -inputs is deprecated, use -input instead") {
		t.Errorf("rc %d: %s", rc, e.String())
	}
}
