package objfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// TestCodeDigests compiles one kernel-like function into objects that
// differ around it (other functions, string literals numbered differently,
// a local helper) and into objects where it differs itself (a constant, a
// local callee's code, a global callee): the digests are equal exactly
// when the function's code is.
func TestCodeDigests(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	const kernel = `
static __attribute__((noinline)) int helper(int x) { return x * HELPER; }
extern int ext_A(int);
int kern_f(int *x, int n) {
  for (int i = 0; i < n; i++) x[i] += SCALE + helper(i);
  puts("in kern_f");
  return CALLEE(n);
}
`
	compile := func(name, defs, before string) map[string][32]byte {
		t.Helper()
		src := filepath.Join(dir, name+".c")
		text := "int puts(const char *);\nextern int ext_A(int), ext_B(int);\n" + before + "\n" + kernel
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".o")
		run(t, dir, clang, append([]string{"-O2", "-c", src, "-o", out}, strings.Fields(defs)...)...)
		d, err := CodeDigests(readFile(t, out), "kern_")
		if err != nil {
			t.Fatal(err)
		}
		if len(d) != 1 {
			t.Fatalf("%s: digests of %d functions, want kern_f's", name, len(d))
		}
		return d
	}
	base := "-DSCALE=1 -DHELPER=3 -DCALLEE=ext_A"
	a := compile("a", base, "")
	same := compile("b", base, `int other(void) { puts("x"); puts("y"); return 1; }
static int other_helper(int x) { return x + 1; }
int other2(int x) { return other_helper(x) * 5; }`)
	if a["kern_f"] != same["kern_f"] {
		t.Error("one function's code in two objects with other contents: digests differ")
	}
	for name, defs := range map[string]string{
		"constant":     "-DSCALE=100 -DHELPER=3 -DCALLEE=ext_A",
		"local callee": "-DSCALE=1 -DHELPER=4 -DCALLEE=ext_A",
		"global":       "-DSCALE=1 -DHELPER=3 -DCALLEE=ext_B",
	} {
		if d := compile("c", defs, ""); d["kern_f"] == a["kern_f"] {
			t.Errorf("a different %s: same digest", name)
		}
	}
}

// TestCodeDigestsCubin: a cubin (SHT_REL and SHT_RELA relocations, a
// __shared__ section without file space) has its kernel's digest.
func TestCodeDigestsCubin(t *testing.T) {
	d, err := CodeDigests(readFile(t, filepath.Join("testdata", "shared.cubin")), "_Z")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d["_Z1kPf"]; !ok || len(d) != 1 {
		t.Errorf("digests of %d functions, want the kernel _Z1kPf's", len(d))
	}
}
