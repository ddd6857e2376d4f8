package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/spirv"
	"github.com/offcc/offcc/syclbin"
)

// The -fsyclbin tests build testdata/sycl's device code into .syclbin
// files: kernels.cpp calls offset_of, which device.cpp defines. clang 22
// has no -fsyclbin, so these tests run offcc only. No test adds LLVM's
// directory to PATH: offcc finds clang-sycl-linker itself.

// kernelsOf are the kernels each translation unit defines.
var kernelsOf = map[string][]string{
	"kernels": {"_ZTS9AddKernel", "_ZTS11ScaleKernelIiE", "_ZTS11ScaleKernelIfE", "_ZTSN2ns5TwiceE"},
	"device":  {"_ZTS10FillKernel", "_ZTS7Functor"},
}

// readSYCLBIN decodes a .syclbin file, writes the SPIR-V of its IR modules
// beside it and checks them with spirv-val; it returns the file, the
// encoding it was read from and the kernel names of each abstract module.
func readSYCLBIN(t *testing.T, path string) (*syclbin.File, syclbin.Encoding, [][]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, enc, err := syclbin.Decode(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// Each encoding writes back what it read.
	again, err := syclbin.Encode(f, enc)
	if err != nil || !slices.Equal(again, data) {
		t.Errorf("%s: encoding again (%v) does not give the file back", path, err)
	}
	var kernels [][]string
	for i, am := range f.Modules {
		names := am.KernelNames()
		kernels = append(kernels, names)
		for j, ir := range am.IR {
			spv := filepath.Join(filepath.Dir(path), filepath.Base(path)+"."+string(rune('0'+i))+"."+string(rune('0'+j))+".spv")
			if err := os.WriteFile(spv, ir.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			validateSPIRV(t, spv)
			m, err := spirv.Parse(ir.Data)
			if err != nil {
				t.Fatalf("%s module %d: %v", path, i, err)
			}
			// The property set names exactly the module's kernels.
			got, want := slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(m.Kernels()))
			if !slices.Equal(got, want) {
				t.Errorf("%s module %d: kernel names %q, SPIR-V entry points %q", path, i, got, want)
			}
		}
	}
	return f, enc, kernels
}

func wantState(t *testing.T, path string, f *syclbin.File, want uint32) {
	t.Helper()
	if st, ok := f.State(); !ok || st != want {
		t.Errorf("%s: state %d (%v), want %d", path, st, ok, want)
	}
}

// TestSYCLBINStates: -fsyclbin in each state, in both encodings. input
// and object keep one abstract module per source with its own kernels and
// imports; executable links both sources into one module with every
// kernel. Every IR module is valid SPIR-V whose entry points are the
// kernels its property set names.
func TestSYCLBINStates(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang 22 has no -fsyclbin")
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	srcs := []string{syclSrc(t, "kernels.cpp"), syclSrc(t, "device.cpp")}
	for _, tc := range []struct {
		flag    string
		out     string
		state   uint32
		version string
		enc     syclbin.Encoding
	}{
		{"-fsyclbin=input", "in.syclbin", syclbin.StateInput, "", syclbin.EncodingV1},
		{"-fsyclbin=object", "obj.syclbin", syclbin.StateObject, "", syclbin.EncodingV1},
		{"-fsyclbin=object", "obj2.syclbin", syclbin.StateObject, "--syclbin-version=2", syclbin.EncodingV2},
		{"-fsyclbin", "exe.syclbin", syclbin.StateExecutable, "", syclbin.EncodingV1},
		{"-fsyclbin=executable", "exe2.syclbin", syclbin.StateExecutable, "--syclbin-version=2", syclbin.EncodingV2},
	} {
		a := args(tc.flag, "-O2", srcs, "-o", tc.out)
		if tc.version != "" {
			a = append(a, tc.version)
		}
		cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: a}.mustRun(t)
		path := filepath.Join(dir, tc.out)
		f, enc, kernels := readSYCLBIN(t, path)
		wantState(t, path, f, tc.state)
		if enc != tc.enc {
			t.Errorf("%s: encoding %v, want %v", tc.out, enc, tc.enc)
		}
		if tc.state == syclbin.StateExecutable {
			want := append(slices.Clone(kernelsOf["kernels"]), kernelsOf["device"]...)
			if len(kernels) != 1 || !slices.Equal(slices.Sorted(slices.Values(kernels[0])), slices.Sorted(slices.Values(want))) {
				t.Errorf("%s: kernels %q, want one module with %q", tc.out, kernels, want)
			}
			continue
		}
		if len(kernels) != 2 || !slices.Equal(kernels[0], kernelsOf["kernels"]) || !slices.Equal(kernels[1], kernelsOf["device"]) {
			t.Errorf("%s: kernels %q, want %q then %q", tc.out, kernels, kernelsOf["kernels"], kernelsOf["device"])
		}
		// Object state keeps the call to offset_of unresolved.
		m, err := spirv.Parse(f.Modules[0].IR[0].Data)
		if err != nil || !slices.Contains(m.Imports(), "_Z9offset_ofi") {
			t.Errorf("%s: module 0 does not import _Z9offset_ofi (%v)", tc.out, err)
		}
	}
	// Bare -fsyclbin without -o writes a.syclbin.
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: args("-fsyclbin", srcs)}.mustRun(t)
	if _, err := os.Stat(filepath.Join(dir, "a.syclbin")); err != nil {
		t.Errorf("bare -fsyclbin: %v", err)
	}
	if left, _ := os.ReadDir(tmpDir); len(left) > 0 {
		t.Errorf("temporaries left in TMPDIR: %v", left)
	}
	for _, f := range []string{"kernels-sycl-spirv64-unknown-unknown.bc", "device-sycl-spirv64-unknown-unknown.bc"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("-fsyclbin left the device compile's %s in the working directory", f)
		}
	}
}

// TestSYCLBINLink: object-state files link into an executable-state file,
// with offcc syclbin link and with -fsyclbin given .syclbin inputs (also
// mixed with a source); a link that leaves a symbol undefined fails with
// one line naming it and writes nothing.
func TestSYCLBINLink(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang 22 has no -fsyclbin")
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	run := func(name string, a ...any) result {
		return cmdSpec{dir: dir, env: []string{tmp}, name: name, args: args(a...)}.run(t)
	}
	for _, tu := range []string{"kernels", "device"} {
		if r := run(c.cxx, "-fsyclbin=object", "-O2", syclSrc(t, tu+".cpp"), "-o", tu+".syclbin"); r.code != 0 {
			t.Fatalf("%s", r)
		}
	}
	// Objects and an archive with SYCL images are inputs too.
	for _, tu := range []string{"kernels", "device"} {
		if r := run(c.cxx, "-fsycl", "-O2", "-c", syclSrc(t, tu+".cpp"), "-o", tu+".o"); r.code != 0 {
			t.Fatalf("%s", r)
		}
	}
	if r := run(llvmBin+"/llvm-ar", "rc", "libdev.a", "device.o"); r.code != 0 {
		t.Fatalf("%s", r)
	}
	all := append(slices.Clone(kernelsOf["kernels"]), kernelsOf["device"]...)
	slices.Sort(all)
	for _, tc := range []struct {
		name string
		cmd  []any
	}{
		{"offcc syclbin link", []any{c.cc, "syclbin", "link", "kernels.syclbin", "device.syclbin", "-o", "linked.syclbin"}},
		{"-fsyclbin with .syclbin inputs", []any{c.cxx, "-fsyclbin", "kernels.syclbin", "device.syclbin", "-o", "linked2.syclbin"}},
		{"-fsyclbin with a source and a .syclbin", []any{c.cxx, "-fsyclbin", "-O2", syclSrc(t, "kernels.cpp"), "device.syclbin", "-o", "linked3.syclbin"}},
		{"-fsyclbin with an object and an archive", []any{c.cxx, "-fsyclbin", "kernels.o", "libdev.a", "-o", "linked4.syclbin"}},
	} {
		r := run(tc.cmd[0].(string), tc.cmd[1:]...)
		if r.code != 0 {
			t.Errorf("%s:\n%s", tc.name, r)
			continue
		}
		out := tc.cmd[len(tc.cmd)-1].(string)
		f, _, kernels := readSYCLBIN(t, filepath.Join(dir, out))
		wantState(t, out, f, syclbin.StateExecutable)
		var got []string
		for _, k := range kernels {
			got = append(got, k...)
		}
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Errorf("%s: kernels %q, want %q", tc.name, got, all)
		}
	}
	for _, tc := range []struct {
		name string
		cmd  []any
		out  string
	}{
		{"offcc syclbin link", []any{c.cc, "syclbin", "link", "kernels.syclbin", "-o", "broken.syclbin"}, "broken.syclbin"},
		{"-fsyclbin", []any{c.cxx, "-fsyclbin", "-O2", syclSrc(t, "kernels.cpp"), "-o", "broken2.syclbin"}, "broken2.syclbin"},
	} {
		r := run(tc.cmd[0].(string), tc.cmd[1:]...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "error: undefined symbol") || !strings.Contains(lines[0], "_Z9offset_ofi") {
			t.Errorf("%s with offset_of undefined: want exit 1 and one error line naming _Z9offset_ofi:\n%s", tc.name, r)
		}
		if _, err := os.Stat(filepath.Join(dir, tc.out)); err == nil {
			t.Errorf("%s: the failed link wrote %s", tc.name, tc.out)
		}
	}
	// A damaged .syclbin: one line naming it, for both tools.
	whole, _ := os.ReadFile(filepath.Join(dir, "device.syclbin"))
	os.WriteFile(filepath.Join(dir, "cut.syclbin"), whole[:200], 0o644)
	for _, cmd := range [][]any{
		{c.cc, "syclbin", "link", "kernels.syclbin", "cut.syclbin", "-o", "cut-out.syclbin"},
		{c.cxx, "-fsyclbin", "kernels.syclbin", "cut.syclbin", "-o", "cut-out.syclbin"},
	} {
		r := run(cmd[0].(string), cmd[1:]...)
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "error: ") || !strings.Contains(r.stderr, "cut.syclbin") {
			t.Errorf("damaged input: want exit 1 and one line naming cut.syclbin:\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(dir, "cut-out.syclbin")); err == nil {
			t.Errorf("%v wrote an output from a damaged input", cmd[1:3])
		}
	}
	if left, _ := os.ReadDir(tmpDir); len(left) > 0 {
		t.Errorf("temporaries left in TMPDIR: %v", left)
	}
}

// TestSYCLBINOptions: clang-style diagnostics for -fsyclbin's option
// rules, and -fsycl-device-only taking precedence with clang's
// unused-argument warning.
func TestSYCLBINOptions(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "clang 22 has no -fsyclbin")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	src := syclSrc(t, "device.cpp")
	os.WriteFile(filepath.Join(dir, "notes.syclbin"), []byte("not a syclbin\n"), 0o644)
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"-fsyclbin", "-c", src}, "error: invalid argument '-fsyclbin' not allowed with '-c'"},
		{[]any{"-fsyclbin=object", "-fsycl-host-only", src}, "error: invalid argument '-fsyclbin=object' not allowed with '-fsycl-host-only'"},
		{[]any{"-fsyclbin=library", src}, "error: invalid value 'library' in '-fsyclbin=library'"},
		{[]any{"-fsyclbin", "--syclbin-version=9", src}, "error: invalid value '9' in '--syclbin-version=9'"},
		{[]any{"-fsyclbin", "missing.cpp"}, "error: no such file or directory: 'missing.cpp'"},
		{[]any{"-fsyclbin", "notes.syclbin"}, "error: notes.syclbin: not an object file, archive, offload binary or .syclbin file"},
	} {
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: args(tc.args...)}.run(t)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("want a failure saying %q:\n%s", tc.want, r)
		}
	}
	r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: args("-fsycl", "-fsycl-device-only", "-fsyclbin", src, "-o", "d.bc")}.mustRun(t)
	if !strings.Contains(r.stderr, "warning: argument unused during compilation: '-fsyclbin'") {
		t.Errorf("no unused-argument warning for -fsyclbin under -fsycl-device-only:\n%s", r)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d.bc")); err != nil || !strings.HasPrefix(string(b), "BC\xc0\xde") {
		t.Errorf("-fsycl-device-only did not write bitcode to d.bc (%v)", err)
	}
	// -### shows the plan and runs nothing.
	r = cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx, args: args("-###", "-fsyclbin=object", src, "-o", "p.syclbin")}.mustRun(t)
	for _, want := range []string{"-fsycl-is-device", "offload-binary", "linker-wrapper\" \"--syclbin=object\""} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("-### does not show %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "p.syclbin")); err == nil {
		t.Error("-### wrote the output")
	}
}
