package bundler

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// bundler19 is LLVM 19's clang-offload-bundler (Debian's clang-tools-19).
const bundler19 = "/usr/lib/llvm-19/bin/clang-offload-bundler"

// TestParseID19 checks ParseID19 against the IDs clang-offload-bundler
// 19.1.7 stored (-list) and the errors it gave for the same -targets.
func TestParseID19(t *testing.T) {
	for _, c := range []struct{ in, stored, err string }{
		{"host-x86_64-unknown-linux", "host-x86_64-unknown-linux--", ""},
		{"host-x86_64", "host-x86_64----", ""},
		{"host-x86_64-unknown-linux-gnu-extra", "host-x86_64-unknown-linux-gnu-extra-", ""},
		{"hipv4-amdgcn-amd-amdhsa--gfx906", "hipv4-amdgcn-amd-amdhsa--gfx906", ""},
		{"hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--gfx906", ""},
		{"hip-amdgcn-amd-amdhsa--gfx906:xnack+", "hip-amdgcn-amd-amdhsa--gfx906:xnack+", ""},
		{"hip-amdgcn-amd-amdhsa-foo", "hip-amdgcn-amd-amdhsa-foo-", ""},
		{"cuda-nvptx64-nvidia-cuda", "", "invalid target 'cuda-nvptx64-nvidia-cuda', unknown offloading kind 'cuda'"},
		{"foo-bar-x", "", "invalid target 'foo-bar-x', unknown offloading kind 'foo', unknown target triple 'bar-x--'"},
	} {
		id, err := ParseID19(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("ParseID19(%q) = %v, want error %q", c.in, err, c.err)
		case c.err == "" && (err != nil || id.String() != c.stored):
			t.Errorf("ParseID19(%q) = %q, %v; want %q", c.in, id.String(), err, c.stored)
		}
	}
	// 22 rejects 19's host ID: its mode is unchanged.
	if _, err := ParseID("host-x86_64-unknown-linux"); err == nil {
		t.Error("ParseID accepts a host ID of four fields")
	}
}

// TestRelease19Conflict: 19 keys conflicting target IDs on its own
// triple, and says so as clang-offload-bundler 19.1.7 does.
func TestRelease19Conflict(t *testing.T) {
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "a"), []byte("a"))
	var o, e bytes.Buffer
	rc := MainRelease(19, "clang-offload-bundler", []string{"-type=o",
		"-targets=host-x86_64-unknown-linux,hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx906:xnack+",
		"-input=" + in, "-input=" + in, "-input=" + in, "-output=" + filepath.Join(dir, "x")}, nil, &o, &e)
	want := "clang-offload-bundler: error: Cannot bundle inputs with conflicting targets: 'hip-amdgcn-amd-amdhsa--gfx906' and 'hip-amdgcn-amd-amdhsa--gfx906:xnack+'\n"
	if rc != 1 || e.String() != want {
		t.Errorf("rc %d, stderr %q; want %q", rc, e.String(), want)
	}
}

// TestRelease19Bytes bundles the HIP fat binary of a clang 19 compile
// (the bundler job clang 19 prints for --offload-arch=gfx906,gfx90a -c)
// with MainRelease(19) and with clang-offload-bundler 19, and wants the
// same bytes; MainRelease(22) refuses 19's host ID as clang 22 does.
func TestRelease19Bytes(t *testing.T) {
	if _, err := os.Stat(bundler19); err != nil {
		llvmtest.Missing(t, "LLVM 19's clang-offload-bundler is not installed: %v", err)
	}
	dir := t.TempDir()
	a := write(t, filepath.Join(dir, "a.out"), bytes.Repeat([]byte("gfx906 "), 500))
	b := write(t, filepath.Join(dir, "b.out"), bytes.Repeat([]byte("gfx90a\n"), 777))
	args := func(out string) []string {
		return []string{"-type=o", "-bundle-align=4096",
			"-targets=host-x86_64-unknown-linux,hipv4-amdgcn-amd-amdhsa--gfx906,hipv4-amdgcn-amd-amdhsa--gfx90a",
			"-input=/dev/null", "-input=" + a, "-input=" + b, "-output=" + out}
	}
	ref := filepath.Join(dir, "ref.hipfb")
	if out, err := exec.Command(bundler19, args(ref)...).CombinedOutput(); err != nil {
		t.Fatalf("clang-offload-bundler 19: %v\n%s", err, out)
	}
	got := filepath.Join(dir, "got.hipfb")
	var o, e bytes.Buffer
	if rc := MainRelease(19, "clang-offload-bundler", args(got), nil, &o, &e); rc != 0 {
		t.Fatalf("MainRelease(19): rc %d\n%s", rc, e.String())
	}
	if !bytes.Equal(read(t, got), read(t, ref)) {
		t.Errorf("MainRelease(19) wrote %d bytes, clang-offload-bundler 19 %d, not the same", len(read(t, got)), len(read(t, ref)))
	}
	e.Reset()
	if rc := MainRelease(22, "clang-offload-bundler", args(filepath.Join(dir, "x")), nil, &o, &e); rc != 1 || !strings.Contains(e.String(), "Targets need to follow the format") {
		t.Errorf("MainRelease(22) with 19's IDs: rc %d, %q", rc, e.String())
	}
}
