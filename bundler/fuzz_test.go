package bundler

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/objfile"
)

// toolSeeds returns bundles written by the real clang-offload-bundler
// (binary, text, object and an archive), or nil when it is absent; under
// OFFCC_REQUIRE_LLVM=1 (CI) its absence fails the fuzz target.
func toolSeeds(f *testing.F) [][]byte {
	if _, err := os.Stat(filepath.Join(llvmtest.Bin, "clang-offload-bundler")); err != nil && !llvmtest.Required() {
		return nil
	}
	b := llvmtest.Tool(f, "clang-offload-bundler")
	dir := f.TempDir()
	h := write(f, filepath.Join(dir, "h"), []byte("int host;\n"))
	d := write(f, filepath.Join(dir, "d"), []byte("device"))
	targets := "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80,hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
	var out [][]byte
	for _, typ := range []string{"bc", "i", "ll", "s"} {
		o := filepath.Join(dir, "o."+typ)
		runTool(f, b, "-type="+typ, targets, "-input="+h, "-input="+d, "-input="+d, "-output="+o, "-bundle-align=16")
		out = append(out, read(f, o))
	}
	src := write(f, filepath.Join(dir, "x.c"), []byte("int x(void){return 0;}\n"))
	obj := filepath.Join(dir, "x.o")
	runTool(f, llvmtest.Clang(f), "-c", src, "-o", obj)
	fat := filepath.Join(dir, "fat.o")
	runTool(f, b, "-type=o", targets, "-input="+obj, "-input="+d, "-input="+d, "-output="+fat)
	out = append(out, read(f, fat))
	var ar bytes.Buffer
	objfile.WriteArchive(&ar, []objfile.Member{{Name: "fat.o", Data: read(f, fat)}, {Name: "o.bc", Data: out[0]}})
	out = append(out, ar.Bytes())
	return out
}

func seeds(f *testing.F) [][]byte {
	var buf bytes.Buffer
	WriteBinary(&buf, []string{"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a"}, [][]byte{[]byte("h"), nil}, 8)
	s := [][]byte{buf.Bytes(), []byte(Magic), nil, []byte("\n// " + Magic + "__START__ x\n")}
	return append(s, toolSeeds(f)...)
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{"host-x86_64-unknown-linux-gnu", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "openmp-x86_64-linux-gnu-", "a-b-c-d-e-f-g", "openmp-x86_64-w64-mingw32-", "openmp-i686-pc-windows-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			return
		}
		// The stored form parses again to itself.
		id2, err := ParseID(id.String())
		if err != nil {
			t.Fatalf("ParseID(%q) = %q, which does not parse: %v", s, id.String(), err)
		}
		_ = id2
		Compatible(id, id2, true)
	})
}

func FuzzParseBinary(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := ParseBinary(b)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.Offset+e.Size > uint64(len(b)) || uint64(len(e.Data)) != e.Size {
				t.Fatal("entry out of range")
			}
		}
		ListOrder(ents)
	})
}

func FuzzParseText(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s, "//")
		f.Add(s, "#")
	}
	f.Fuzz(func(t *testing.T, b []byte, c string) {
		ents, err := ParseText(b, c)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !bytes.Equal(e.Data, b[e.Offset:e.Offset+e.Size]) {
				t.Fatal("entry data mismatch")
			}
		}
		IsTextBundle(b)
	})
}

func FuzzObjectAndArchive(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if ents, err := ObjectEntries(b); err == nil {
			for _, e := range ents {
				if _, err := entryPayload(b, e); err != nil {
					break
				}
			}
		}
		UnbundleArchive(b, ArchiveOptions{Targets: []string{"openmp-nvptx64-nvidia-cuda-unknown-sm_80", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "host-x86_64-unknown-linux-gnu-"}, CheckInput: true, AllowMissing: true})
		readEntries(b, "o")
	})
}
