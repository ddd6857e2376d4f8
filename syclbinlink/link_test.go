package syclbinlink_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/spirv"
	"github.com/offcc/offcc/syclbin"
	"github.com/offcc/offcc/syclbinlink"
)

const prelude = `
template <typename KernelName, typename KernelType>
[[clang::sycl_kernel_entry_point(KernelName)]] void kernel_single_task(KernelType kernelFunc) { kernelFunc(); }
`

// Sources of the test's two translation units: kernel KA calls helper,
// which the other unit defines beside kernel KB.
var sources = map[string]string{
	"a": prelude + `
[[clang::sycl_external]] int helper(int);
struct KA;
void run(int *p) { kernel_single_task<KA>([=]() { p[0] = helper(p[1]); }); }
`,
	"b": prelude + `
[[clang::sycl_external]] int helper(int x) { return x * 2; }
struct KB;
void run2(int *p) { kernel_single_task<KB>([=]() { p[0] = helper(p[1]); }); }
`,
}

const target = "spirv64-unknown-unknown"

var (
	compileOnce sync.Once
	compiled    map[string][]byte
	compileErr  error
)

// spv returns the SPIR-V module that clang compiles from sources[name],
// skipping the test when LLVM 22 or SPIRV-Tools is absent.
func spv(t *testing.T, name string) []byte {
	t.Helper()
	clang := llvmtest.Clang(t)
	spirvTool(t, "spirv-link")
	compileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "syclbinlink-test-")
		if err != nil {
			compileErr = err
			return
		}
		defer os.RemoveAll(dir)
		compiled = map[string][]byte{}
		for n, src := range sources {
			if compiled[n], compileErr = llvmtest.SYCLToSPIRV(clang, dir, n, target, src); compileErr != nil {
				return
			}
		}
	})
	if compileErr != nil {
		t.Fatal(compileErr)
	}
	return compiled[name]
}

func spirvTool(t *testing.T, name string) string { t.Helper(); return llvmtest.SPIRVTool(t, name) }

// objectFile wraps a SPIR-V module as an object-state SYCLBIN file with one
// abstract module, as a SYCL compile would.
func objectFile(t *testing.T, code []byte) *syclbin.File {
	t.Helper()
	m, err := spirv.Parse(code)
	if err != nil {
		t.Fatal(err)
	}
	f := &syclbin.File{Version: syclbin.Version}
	f.SetState(syclbin.StateObject)
	am := syclbin.AbstractModule{IR: []syclbin.IRModule{syclbin.NewIRModule(syclbin.IRTypeSPIRV, target, code)}}
	am.SetKernelNames(m.Kernels())
	f.Modules = []syclbin.AbstractModule{am}
	return f
}

func encode(t *testing.T, f *syclbin.File, enc syclbin.Encoding) []byte {
	t.Helper()
	b, err := syclbin.Encode(f, enc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o666); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs Main and returns its status, standard output and error.
func run(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	rc := syclbinlink.Main(context.Background(), "offcc", args, &stdout, &stderr)
	return rc, stdout.String(), stderr.String()
}

// spirvVal runs spirv-val on a module.
func spirvVal(t *testing.T, code []byte) {
	t.Helper()
	val := spirvTool(t, "spirv-val")
	f := writeFile(t, t.TempDir(), "linked.spv", code)
	if out, err := exec.Command(val, f).CombinedOutput(); err != nil {
		t.Errorf("spirv-val rejects the linked module: %v\n%s", err, out)
	}
}

// checkLinked checks a linked file: executable state, one abstract module
// with one SPIR-V module for target holding kernels, valid per spirv-val,
// with no imports left.
func checkLinked(t *testing.T, f *syclbin.File, kernels []string) {
	t.Helper()
	if s, ok := f.State(); !ok || s != syclbin.StateExecutable {
		t.Errorf("state %d (%v), want executable", s, ok)
	}
	if len(f.Modules) != 1 || len(f.Modules[0].IR) != 1 || len(f.Modules[0].Native) != 0 {
		t.Fatalf("linked file has %d abstract modules (want 1 with 1 IR module): %+v", len(f.Modules), f.Modules)
	}
	am := &f.Modules[0]
	if got := am.KernelNames(); !reflect.DeepEqual(got, kernels) {
		t.Errorf("kernel names %q, want %q", got, kernels)
	}
	ir := &am.IR[0]
	if typ, ok := ir.Type(); !ok || typ != syclbin.IRTypeSPIRV {
		t.Errorf("IR type %d (%v), want SPIR-V", typ, ok)
	}
	if tg, ok := ir.Target(); !ok || tg != target {
		t.Errorf("target %q (%v), want %q", tg, ok, target)
	}
	m, err := spirv.Parse(ir.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Kernels(); !reflect.DeepEqual(got, kernels) {
		t.Errorf("linked module's kernels %q, want %q", got, kernels)
	}
	if imp := m.Imports(); len(imp) != 0 {
		t.Errorf("linked module still imports %q", imp)
	}
	spirvVal(t, ir.Data)
}

// dirEntries lists a directory's names.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestMainLinks(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	for _, tc := range []struct {
		name     string
		encA     syclbin.Encoding
		flags    []string
		wantEnc  syclbin.Encoding
		outFlags func(out string) []string
	}{
		{"v1 first", syclbin.EncodingV1, nil, syclbin.EncodingV1, func(o string) []string { return []string{"-o", o} }},
		{"v2 first", syclbin.EncodingV2, nil, syclbin.EncodingV2, func(o string) []string { return []string{"-o" + o} }},
		{"override 2", syclbin.EncodingV1, []string{"--syclbin-version=2"}, syclbin.EncodingV2, func(o string) []string { return []string{"--output=" + o} }},
		{"override 1", syclbin.EncodingV2, []string{"--syclbin-version=1"}, syclbin.EncodingV1, func(o string) []string { return []string{"--output", o} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fa := writeFile(t, dir, "a.syclbin", encode(t, objectFile(t, a), tc.encA))
			fb := writeFile(t, dir, "b.syclbin", encode(t, objectFile(t, b), syclbin.EncodingV1))
			out := filepath.Join(dir, "c.syclbin")
			args := append([]string{"link", fa, fb}, tc.flags...)
			args = append(args, tc.outFlags(out)...)
			rc, stdout, stderr := run(args...)
			if rc != 0 || stdout != "" || stderr != "" {
				t.Fatalf("rc %d, stdout %q, stderr %q", rc, stdout, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, enc, err := syclbin.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if enc != tc.wantEnc {
				t.Errorf("output encoding %d, want %d", enc, tc.wantEnc)
			}
			checkLinked(t, f, []string{"_ZTS2KA", "_ZTS2KB"})
			if got := dirEntries(t, dir); !reflect.DeepEqual(got, []string{"a.syclbin", "b.syclbin", "c.syclbin"}) {
				t.Errorf("directory holds %q", got)
			}
		})
	}
}

func TestMainInputState(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	dir := t.TempDir()
	fa := objectFile(t, a)
	fa.SetState(syclbin.StateInput)
	pa := writeFile(t, dir, "a.syclbin", encode(t, fa, syclbin.EncodingV1))
	pb := writeFile(t, dir, "b.syclbin", encode(t, objectFile(t, b), syclbin.EncodingV1))
	out := filepath.Join(dir, "out.syclbin")
	// The order of the inputs orders the kernels.
	if rc, _, stderr := run("link", "-o", out, pb, pa); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr)
	}
	f, _, err := syclbin.Decode(mustRead(t, out))
	if err != nil {
		t.Fatal(err)
	}
	checkLinked(t, f, []string{"_ZTS2KB", "_ZTS2KA"})
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMainVerbose(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	dir := t.TempDir()
	pa := writeFile(t, dir, "a.syclbin", encode(t, objectFile(t, a), syclbin.EncodingV1))
	pb := writeFile(t, dir, "b.syclbin", encode(t, objectFile(t, b), syclbin.EncodingV1))
	rc, _, stderr := run("link", "-v", pa, pb, "-o", filepath.Join(dir, "c.syclbin"))
	if rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	// The command as clang's -v (and offcc's) lists commands.
	if len(lines) != 1 || !strings.HasPrefix(lines[0], ` "`) || !strings.Contains(lines[0], `spirv-link" `) || !strings.Contains(lines[0], ".spv -o ") {
		t.Errorf("-v printed %q, want one spirv-link command", stderr)
	}
}

// failure runs Main, which must fail with exactly the stderr lines want,
// print nothing on stdout and leave dir holding only keep.
func failure(t *testing.T, dir string, keep []string, want []string, args ...string) {
	t.Helper()
	rc, stdout, stderr := run(args...)
	if rc != 1 || stdout != "" {
		t.Errorf("rc %d, stdout %q; want 1 and nothing", rc, stdout)
	}
	var wantErr string
	for _, w := range want {
		wantErr += "offcc: error: " + w + "\n"
	}
	if stderr != wantErr {
		t.Errorf("stderr\n%s\nwant\n%s", stderr, wantErr)
	}
	if dir != "" {
		if got := dirEntries(t, dir); !reflect.DeepEqual(got, keep) {
			t.Errorf("directory holds %q, want %q", got, keep)
		}
	}
}

func TestMainLinkErrors(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	dir := t.TempDir()
	pa := writeFile(t, dir, "a.syclbin", encode(t, objectFile(t, a), syclbin.EncodingV1))
	pb := writeFile(t, dir, "b.syclbin", encode(t, objectFile(t, b), syclbin.EncodingV2))
	pc := writeFile(t, dir, "c.syclbin", encode(t, objectFile(t, a), syclbin.EncodingV2))
	pd := writeFile(t, dir, "d.syclbin", encode(t, objectFile(t, b), syclbin.EncodingV1))
	exe := objectFile(t, a)
	exe.SetState(syclbin.StateExecutable)
	pe := writeFile(t, dir, "e.syclbin", encode(t, exe, syclbin.EncodingV1))
	native := objectFile(t, b)
	native.Modules[0].Native = []syclbin.NativeImage{syclbin.NewNativeImage("gfx90a", "amdgcn-amd-amdhsa", []byte("\x7fELF"))}
	pn := writeFile(t, dir, "n.syclbin", encode(t, native, syclbin.EncodingV1))
	ptx := objectFile(t, b)
	ptx.Modules[0].IR = append(ptx.Modules[0].IR, syclbin.NewIRModule(syclbin.IRTypePTX, "nvptx64-nvidia-cuda", []byte(".version 8.0")))
	pp := writeFile(t, dir, "p.syclbin", encode(t, ptx, syclbin.EncodingV1))
	aaa := objectFile(t, a)
	aaa.Modules[0].IR[0].Data = []byte("not SPIR-V")
	pbad := writeFile(t, dir, "bad-spirv.syclbin", encode(t, aaa, syclbin.EncodingV1))
	pt := writeFile(t, dir, "t.syclbin", mustRead(t, pa)[:100])
	px := writeFile(t, dir, "x.syclbin", []byte("this is not a SYCLBIN file\n"))
	files := dirEntries(t, dir)
	out := filepath.Join(dir, "out.syclbin")

	for _, tc := range []struct {
		name   string
		inputs []string
		want   []string
	}{
		{"undefined", []string{pa}, []string{"undefined symbol _Z6helperi, referenced by " + pa}},
		{"undefined twice", []string{pa, pc}, []string{
			"kernel _ZTS2KA is defined in both " + pa + " and " + pc,
			"undefined symbol _Z6helperi, referenced by " + pa + ", " + pc}},
		{"duplicate kernel", []string{pa, pb, pc}, []string{"kernel _ZTS2KA is defined in both " + pa + " and " + pc}},
		{"duplicate symbol", []string{pa, pb, pd}, []string{
			"kernel _ZTS2KB is defined in both " + pb + " and " + pd,
			"symbol _Z6helperi is defined in both " + pb + " and " + pd}},
		{"same file twice", []string{pb, pb}, []string{
			"kernel _ZTS2KB is defined twice in " + pb,
			"symbol _Z6helperi is defined twice in " + pb}},
		{"executable", []string{pa, pe}, []string{pe + " is already in executable state; only input- and object-state files can be linked"}},
		{"native", []string{pa, pn}, []string{"cannot link native device images (arch gfx90a) in " + pn}},
		{"ptx", []string{pa, pp}, []string{"cannot link PTX IR modules (PTX nvptx64-nvidia-cuda) in " + pp + ": only SPIR-V can be linked"}},
		{"bad spirv", []string{pb, pbad}, []string{pbad + ": IR module 0 of abstract module 0: spirv: input is 10 bytes, not a whole number of 4-byte words"}},
		{"missing", []string{pa, filepath.Join(dir, "nope.syclbin")}, []string{"cannot read " + filepath.Join(dir, "nope.syclbin") + ": no such file or directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failure(t, dir, files, tc.want, append([]string{"link", "-o", out}, tc.inputs...)...)
		})
	}
	for _, tc := range []struct{ name, path string }{{"truncated", pt}, {"not syclbin", px}} {
		t.Run(tc.name, func(t *testing.T) {
			rc, stdout, stderr := run("link", pb, tc.path, "-o", out)
			if rc != 1 || stdout != "" {
				t.Errorf("rc %d, stdout %q; want 1 and nothing", rc, stdout)
			}
			if !strings.HasPrefix(stderr, "offcc: error: "+tc.path+": ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr %q, want one line about %s", stderr, tc.path)
			}
			if got := dirEntries(t, dir); !reflect.DeepEqual(got, files) {
				t.Errorf("directory holds %q, want %q", got, files)
			}
		})
	}
	// A failed link leaves an existing output file as it was.
	if err := os.WriteFile(out, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	if rc, _, _ := run("link", pa, "-o", out); rc != 1 {
		t.Errorf("rc %d, want 1", rc)
	}
	if got := string(mustRead(t, out)); got != "old" {
		t.Errorf("output file now holds %q", got)
	}
}

func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", nil, "missing syclbin subcommand; the only one is 'link' (see --help)"},
		{"unknown subcommand", []string{"merge", "a.syclbin"}, "unknown syclbin subcommand 'merge'; the only one is 'link'"},
		{"no inputs", []string{"link", "-o", "x.syclbin"}, "no input files"},
		{"no output", []string{"link", "a.syclbin"}, "no output file; use -o FILE"},
		{"-o last", []string{"link", "a.syclbin", "-o"}, "argument to '-o' is missing (expected 1 value)"},
		{"two outputs", []string{"link", "a.syclbin", "-o", "x", "--output=y"}, "more than one output file: 'x' and 'y'"},
		{"bad version", []string{"link", "a.syclbin", "-o", "x", "--syclbin-version=3"}, "invalid value '3' in '--syclbin-version': want 1 or 2"},
		{"unknown option", []string{"link", "a.syclbin", "-o", "x", "--frob"}, "unknown argument: '--frob'"},
		{"stdin", []string{"link", "-", "-o", "x"}, "reading an input from standard input ('-') is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failure(t, "", nil, []string{tc.want}, tc.args...)
		})
	}
	for _, args := range [][]string{{"--help"}, {"link", "--help"}, {"link", "a", "-o", "x", "-h"}} {
		rc, stdout, stderr := run(args...)
		if rc != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: offcc syclbin link ") {
			t.Errorf("%q: rc %d, stdout %q, stderr %q", args, rc, stdout, stderr)
		}
	}
}

// TestLinkGroups links files whose abstract modules hold modules for two
// targets: each target becomes one abstract module of the output.
func TestLinkGroups(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	const other = "spirv64-intel"
	mk := func(code []byte) *syclbin.File {
		f := objectFile(t, code)
		am := syclbin.AbstractModule{IR: []syclbin.IRModule{syclbin.NewIRModule(syclbin.IRTypeSPIRV, other, code)}}
		am.SetKernelNames(f.Modules[0].KernelNames())
		f.Modules = append(f.Modules, am)
		return f
	}
	tmp := t.TempDir()
	var verbose bytes.Buffer
	out, err := syclbinlink.Link(context.Background(), syclbinlink.Config{TempDir: tmp, Stderr: &verbose, Verbose: true},
		[]*syclbin.File{mk(a), mk(b)}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Modules) != 2 {
		t.Fatalf("%d abstract modules, want 2", len(out.Modules))
	}
	for i, tg := range []string{target, other} {
		am := out.Modules[i]
		if got, _ := am.IR[0].Target(); got != tg {
			t.Errorf("module %d: target %q, want %q", i, got, tg)
		}
		if got := am.KernelNames(); !reflect.DeepEqual(got, []string{"_ZTS2KA", "_ZTS2KB"}) {
			t.Errorf("module %d: kernels %q", i, got)
		}
		spirvVal(t, am.IR[0].Data)
	}
	if n := strings.Count(verbose.String(), `spirv-link" `); n != 2 {
		t.Errorf("verbose output has %d spirv-link commands, want 2:\n%s", n, verbose.String())
	}
	if ents := dirEntries(t, tmp); len(ents) != 0 {
		t.Errorf("temporary directory holds %q after Link", ents)
	}

	// The same inputs with one target's helper missing: the error names
	// the group.
	noHelper := mk(b)
	noHelper.Modules = noHelper.Modules[:1]
	_, err = syclbinlink.Link(context.Background(), syclbinlink.Config{TempDir: tmp}, []*syclbin.File{mk(a), noHelper}, []string{"a", "b"})
	if want := "undefined symbol _Z6helperi, referenced by a (SPIR-V spirv64-intel)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

func TestLinkTool(t *testing.T) {
	a, b := spv(t, "a"), spv(t, "b")
	inputs := []*syclbin.File{objectFile(t, a), objectFile(t, b)}
	tmp := t.TempDir()

	_, err := syclbinlink.Link(context.Background(), syclbinlink.Config{SPIRVLink: filepath.Join(tmp, "no-such-tool"), TempDir: tmp}, inputs, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "cannot run spirv-link: ") {
		t.Errorf("missing tool: error %v", err)
	}

	// A spirv-link that fails: its diagnostics reach Stderr.
	fake := writeFile(t, t.TempDir(), "spirv-link", []byte("#!/bin/sh\nprintf 'error: it went wrong' >&2\nexit 3\n"))
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	_, err = syclbinlink.Link(context.Background(), syclbinlink.Config{SPIRVLink: fake, TempDir: tmp, Stderr: &stderr}, inputs, nil)
	want := "spirv-link failed linking SPIR-V spirv64-unknown-unknown modules of input 1, input 2 (exit status 3; use -v to see the command)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if stderr.String() != "error: it went wrong\n" {
		t.Errorf("stderr %q", stderr.String())
	}

	// A spirv-link that drops a kernel.
	onlyFirst := writeFile(t, t.TempDir(), "spirv-link", []byte("#!/bin/sh\ncp \"$1\" \"$4\"\n"))
	if err := os.Chmod(onlyFirst, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = syclbinlink.Link(context.Background(), syclbinlink.Config{SPIRVLink: onlyFirst, TempDir: tmp}, inputs, []string{"a", "b"})
	want = "kernel _ZTS2KB of SPIR-V spirv64-unknown-unknown modules of a, b is not an entry point of the linked module"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}

	// A cancelled context stops the link.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := syclbinlink.Link(ctx, syclbinlink.Config{TempDir: tmp}, inputs, nil); err == nil {
		t.Error("Link with a cancelled context succeeded")
	}
	if ents := dirEntries(t, tmp); len(ents) != 0 {
		t.Errorf("temporary directory holds %q", ents)
	}

	if _, err := syclbinlink.Link(context.Background(), syclbinlink.Config{}, nil, nil); err == nil || err.Error() != "no input files" {
		t.Errorf("no inputs: error %v", err)
	}
}
