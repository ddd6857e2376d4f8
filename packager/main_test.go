package packager

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var so, se bytes.Buffer
	rc := Main("offcc", args, &so, &se)
	return rc, so.String(), se.String()
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

var roundTripSpecs = []string{
	"--image=file=a.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp",
	"--image=file=b.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip",
	"--image=file=c.s,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda,feature=+ptx80",
	"--image=file=d.spv,triple=spirv64,kind=sycl",
	"--image=file=e.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
}

var roundTripFiles = map[string]string{"a.o": "object A", "b.bc": "BC\xc0\xde bitcode", "c.s": ".version 8.0", "d.spv": "\x03\x02\x23\x07spv", "e.o": "object E"}

// extractions are run both by llvm-offload-binary and by Main.
var extractSpecs = [][]string{
	{"--image=triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp,file=x1"},
	{"--image=triple=amdgcn-amd-amdhsa,arch=gfx90a,file=x2", "--image=kind=sycl,file=x3"},
	{"--image=triple=nvptx64-nvidia-cuda,arch=sm_70,file=x4"},    // two match: last wins, warning
	{"--image=triple=nvptx64-nvidia-cuda"},                       // default names
	{"--image=kind=sycl", "--image=arch=sm_80", "--image=arch="}, // empty arch; no-arch blob
	{"--image=triple=nope,file=x5"},                              // no match: nothing written
	{"--image=feature=+ptx80,file=x6"},
}

// TestMainRoundTrip packs with Main and with llvm-offload-binary, then
// extracts each result with both tools and compares every written file.
func TestMainRoundTrip(t *testing.T) {
	tool := llvmtest.Tool(t, "llvm-offload-binary")
	base := t.TempDir()
	writeFiles(t, base, roundTripFiles)
	chdir(t, base)
	if rc, _, se := runMain(t, append([]string{"-o", "ours.bin"}, roundTripSpecs...)...); rc != 0 {
		t.Fatalf("pack: %s", se)
	}
	runIn(t, base, tool, append([]string{"-o", "ref.bin"}, roundTripSpecs...)...)
	if readFile(t, "ours.bin") != readFile(t, "ref.bin") {
		t.Fatal("packed outputs differ")
	}
	for _, packed := range []string{"ours.bin", "ref.bin"} {
		for i, spec := range extractSpecs {
			dirL := filepath.Join(base, "llvm", packed, string(rune('a'+i)))
			dirO := filepath.Join(base, "offcc", packed, string(rune('a'+i)))
			os.MkdirAll(dirL, 0o755)
			os.MkdirAll(dirO, 0o755)
			in := filepath.Join(base, packed)
			outL := runIn(t, dirL, tool, append([]string{in}, spec...)...)
			chdir(t, dirO)
			rc, so, se := runMain(t, append([]string{in}, spec...)...)
			if rc != 0 {
				t.Fatalf("extract %q: %s", spec, se)
			}
			wantWarn := strings.ReplaceAll(outL, tool, "offcc")
			if so+se != wantWarn {
				t.Errorf("extract %q: output %q, llvm %q", spec, so+se, outL)
			}
			namesL, namesO := listDir(t, dirL), listDir(t, dirO)
			if strings.Join(namesL, " ") != strings.Join(namesO, " ") {
				t.Fatalf("extract %q: files %v, llvm %v", spec, namesO, namesL)
			}
			for _, n := range namesL {
				if readFile(t, filepath.Join(dirL, n)) != readFile(t, filepath.Join(dirO, n)) {
					t.Errorf("extract %q: %s differs", spec, n)
				}
			}
		}
	}
	// Spot checks of what was extracted.
	for name, want := range map[string]string{"offcc/ours.bin/a/x1": "object A", "offcc/ours.bin/c/x4": "object E",
		"offcc/ours.bin/b/x3": "\x03\x02\x23\x07spv", "offcc/ours.bin/d/ours-nvptx64-nvidia-cuda-sm_80.1.s": ".version 8.0",
		"offcc/ours.bin/e/ours-spirv64-.0.": "\x03\x02\x23\x07spv"} {
		if got := readFile(t, filepath.Join(base, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestMainContainers extracts from an ELF object made by clang
// -fembed-offload-object and from an ar archive holding it.
func TestMainContainers(t *testing.T) {
	clang := llvmtest.Clang(t)
	ar := llvmtest.Tool(t, "llvm-ar")
	dir := t.TempDir()
	writeFiles(t, dir, roundTripFiles)
	writeFiles(t, dir, map[string]string{"h.c": "int host;\n"})
	chdir(t, dir)
	if rc, _, se := runMain(t, append([]string{"-o", "dev.bin"}, roundTripSpecs...)...); rc != 0 {
		t.Fatal(se)
	}
	runIn(t, dir, clang, "-c", "h.c", "-Xclang", "-fembed-offload-object=dev.bin", "-o", "host.o")
	runIn(t, dir, ar, "rc", "libh.a", "h.c", "host.o")
	for _, in := range []string{"host.o", "libh.a"} {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		ims, err := ExtractImages(data)
		if err != nil || len(ims) != 5 || string(ims[2].Data) != ".version 8.0" {
			t.Fatalf("ExtractImages(%s): %d images, %v", in, len(ims), err)
		}
		out := in + ".x"
		if rc, _, se := runMain(t, in, "--image=kind=hip,file="+out); rc != 0 {
			t.Fatalf("extract from %s: %s", in, se)
		}
		if got := readFile(t, out); got != "BC\xc0\xde bitcode" {
			t.Errorf("extracted from %s: %q", in, got)
		}
	}
	if rc, _, _ := runMain(t, "h.c", "--image=kind=hip,file=none"); rc != 0 || fileExists("none") {
		t.Error("plain text input should hold nothing")
	}
}

func TestMainErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.o": "A", "bad.bin": "\x10\xff\x10\xad\x03\x00\x00\x00" + strings.Repeat("\x00", 80)})
	chdir(t, dir)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-o", "out.bin", "--image=triple=t"}, "offcc: error: 'file' is a required image arguments\n"},
		{[]string{"-o", "out.bin", "--image=file=a.o", "--image=file=missing.o"}, "offcc: error: open missing.o: no such file or directory\n"},
		{[]string{"-o", "out.bin", "in.bin"}, "offcc: error: Packaging to an output file and extracting from an input file are mutually exclusive.\n"},
		{[]string{"--bogus"}, "offcc: error: unknown command line argument '--bogus'; try 'offcc offload-binary --help'\n"},
		{[]string{"a", "b"}, "offcc: error: too many positional arguments specified: 'b'\n"},
		{[]string{"-o"}, "offcc: error: option '-o' requires a value\n"},
		{[]string{"bad.bin", "--image=file=x"}, "offcc: error: bad.bin: offload binary at offset 0x0: unsupported version 3 (versions 1 and 2 are supported)\n"},
		{[]string{"missing.bin"}, "offcc: error: open missing.bin: no such file or directory\n"},
	} {
		rc, so, se := runMain(t, tc.args...)
		if rc != 1 || so != "" || se != tc.msg {
			t.Errorf("%q: rc %d stdout %q stderr %q, want %q", tc.args, rc, so, se, tc.msg)
		}
	}
	if fileExists("out.bin") {
		t.Error("out.bin written despite the error")
	}
	if names := listDir(t, "."); len(names) != 2 {
		t.Errorf("leftover files: %v", names)
	}
	for _, args := range [][]string{{}, {"--help"}, {"-h"}, {"-o", "x", "--help"}} {
		rc, so, se := runMain(t, args...)
		if rc != 0 || !strings.Contains(so, "USAGE: offcc offload-binary") || se != "" {
			t.Errorf("%q: rc %d %q %q", args, rc, so, se)
		}
	}
	if rc, so, _ := runMain(t, "--version"); rc != 0 || so != Version+"\n" {
		t.Errorf("--version: %d %q", rc, so)
	}
	// -o=, --image value as separate argument, and "-" for standard output.
	if rc, so, se := runMain(t, "-o=-", "--image", "file=a.o,triple=t"); rc != 0 || !IsOffloadBinary([]byte(so)) {
		t.Errorf("-o=-: %d %q", rc, se)
	}
	if rc, _, se := runMain(t, "--o", "out.bin", "-image=file=a.o,file=a.o"); rc != 0 {
		t.Error(se)
	} else if ims, err := Parse([]byte(readFile(t, "out.bin"))); err != nil || len(ims) != 2 {
		t.Errorf("two files in one --image: %d %v", len(ims), err)
	}
	if fi, err := os.Stat("out.bin"); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("out.bin mode: %v %v", fi, err)
	}
}

// TestMainArchive compares --archive output with llvm-offload-binary:
// ELF members with and without global symbols (x86-64 and amdgcn), raw
// members, odd sizes, long and path member names.
func TestMainArchive(t *testing.T) {
	tool := llvmtest.Tool(t, "llvm-offload-binary")
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"d.c": "int foo(void){return 1;} int bar; static int s; int ab; extern int u; int use(void){return u;}\n",
		"e.c": "static int s;\n", "odd.o": "odd", "img.o": "ABCDEFGHIJ"})
	chdir(t, dir)
	runIn(t, dir, clang, "-c", "d.c", "-o", "d.o")
	runIn(t, dir, clang, "-c", "e.c", "-o", "e.o")
	runIn(t, dir, clang, "--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-c", "d.c", "-o", "g.o")
	cases := map[string][]string{
		"elf":     {"d.o", "e.o", "g.o", "odd.o"},
		"noglob":  {"e.o"},
		"raw":     {"odd.o", "img.o"},
		"oddsyms": {"odd.o", "g.o"},
	}
	for name, files := range cases {
		args := []string{"-o", name + "_a_long_input_name.bin"}
		for _, f := range files {
			args = append(args, "--image=file="+f+",triple=x")
		}
		if rc, _, se := runMain(t, args...); rc != 0 {
			t.Fatal(se)
		}
		for _, in := range []string{args[1], filepath.Join(dir, args[1])} {
			runIn(t, dir, tool, in, "--image=triple=x,file=ref.a", "--archive")
			if rc, _, se := runMain(t, in, "--image=triple=x,file=ours.a", "--archive"); rc != 0 {
				t.Fatal(se)
			}
			if readFile(t, "ours.a") != readFile(t, "ref.a") {
				t.Errorf("%s (%s): archive differs from llvm-offload-binary", name, in)
			}
		}
	}
	if rc, _, se := runMain(t, "raw_a_long_input_name.bin", "--image=triple=x", "--archive"); rc != 1 ||
		se != "offcc: error: Image must have a 'file' argument.\n" {
		t.Errorf("--archive without file: %d %q", rc, se)
	}
}
