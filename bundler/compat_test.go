package bundler

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
	"github.com/offcc/offcc/target"
)

func runTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, e.String())
	}
	return o.String()
}

// runMain runs Main and returns stdout, stderr and the exit status.
func runMain(args ...string) (string, string, int) {
	var o, e bytes.Buffer
	rc := Main("clang-offload-bundler", args, func(string) string { return "" }, &o, &e)
	return o.String(), e.String(), rc
}

func mustMain(t testing.TB, args ...string) string {
	t.Helper()
	o, e, rc := runMain(args...)
	if rc != 0 {
		t.Fatalf("Main %q: rc %d\n%s", args, rc, e)
	}
	return o
}

func write(t testing.TB, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseIDMatchesTool bundles many target spellings with the real tool
// (text bundle, so the stored IDs can be read) and compares with ParseID.
func TestParseIDMatchesTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "a"), []byte("x"))
	cases := []string{
		"openmp-nvptx64-nvidia-cuda-", "openmp-nvptx64-nvidia-cuda--sm_80", "openmp-nvptx64-nvidia-cuda-unknown-sm_80",
		"hip-amdgcn-amd-amdhsa-unknown-gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hipv4-amdgcn-amd-amdhsa--gfx940",
		"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "openmp-x86_64-pc-linux-gnu", "openmp-x86_64-linux-gnu-",
		"openmp-x86_64--linux-", "openmp-x86_64-foo-linux-gnu", "openmp-x86_64-unknown-foo-gnu", "openmp-amdgcn-amd-amdhsa--",
		"openmp-spirv64-amd-amdhsa--gfx90a", "openmp-spirv64-intel-unknown-", "openmp-x86_64-unknown-linux-gnux32",
		"openmp-i686-pc-windows-msvc", "openmp-aarch64-unknown-linux-android34", "openmp-amd64-unknown-linux-gnu",
		"openmp-arm64-apple-darwin-", "openmp-x86_64-unknown-linux-gnu-sm_80", "openmp-amdgcn-amd-amdhsa-gnu-gfx90a",
		"openmp-amdgcn-amd-amdpal--gfx1030", "openmp-x86_64-unknown-linux-gnu-x-y", "openmp-x86_64-unknown-linux-elf",
		"openmp-riscv64-unknown-linux-gnu", "openmp-x86_64-pc-linux-gnu-gfx90a:sramecc+:xnack-", "openmp-x86_64-gnu-linux-",
		"openmp-x86_64-pc-windows-", "openmp-x86_64-w64-mingw32-", "openmp-armv7a-unknown-linux-gnueabihf",
		"openmp-nvptx64-nvidia-cuda--sm_100f", "openmp-nvptx64-nvidia-cuda--gfx12-5-generic", "openmp-nvptx64-nvidia-cuda--gfx9-4-generic",
		"hip-spirv64-amd-amdhsa--amdgcnspirv", "openmp-spir64-unknown-unknown-", "openmp-x86_64-unknown-unknown-gnu",
		"openmp-x86_64-cuda-nvidia-", "openmp-nvptx-nvidia-cuda-unknown",
	}
	// Every OffloadArch in the table, and some that clang 22 does not know.
	for _, a := range target.OffloadArchs() {
		cases = append(cases, "openmp-nvptx64-nvidia-cuda--"+a)
	}
	for _, a := range []string{"gfx1310", "gfx1300", "gfx1154", "sm_101f", "gfx11-5-generic", "gfx941", "sm_10", "gfx1252", "gfx1260"} {
		cases = append(cases, "openmp-nvptx64-nvidia-cuda--"+a)
	}
	for _, c := range cases {
		out := filepath.Join(dir, "o.i")
		cmd := exec.Command(b, "-type=i", "-targets=host-x86_64-unknown-linux-gnu,"+c, "-input="+in, "-input="+in, "-output="+out)
		msg, err := cmd.CombinedOutput()
		id, perr := ParseID(c)
		if err != nil {
			if perr == nil {
				t.Errorf("%s: tool failed (%s) but ParseID accepted it", c, strings.TrimSpace(string(msg)))
			} else if !strings.Contains(string(msg), perr.Error()) {
				t.Errorf("%s: tool says %q, ParseID %q", c, strings.TrimSpace(string(msg)), perr)
			}
			continue
		}
		if perr != nil {
			t.Errorf("%s: ParseID: %v", c, perr)
			continue
		}
		ents, err := ParseText(read(t, out), "//")
		if err != nil || len(ents) != 2 {
			t.Fatalf("%s: %v", c, err)
		}
		if ents[1].ID != id.String() {
			t.Errorf("ParseID(%q) = %q, tool stores %q", c, id.String(), ents[1].ID)
		}
	}
	for _, c := range []string{"openmp-nvptx64-nvidia-cuda", "cuda-nvptx64-nvidia-cuda-", "openmp-foo-unknown-linux-gnu"} {
		cmd := exec.Command(b, "-type=i", "-targets=host-x86_64-unknown-linux-gnu,"+c, "-input="+in, "-input="+in, "-output="+filepath.Join(dir, "o.i"))
		msg, _ := cmd.CombinedOutput()
		_, perr := ParseID(c)
		if perr == nil || !strings.Contains(string(msg), perr.Error()) {
			t.Errorf("%s: tool %q, ParseID %v", c, msg, perr)
		}
	}
}

var randomTargets = []string{
	"openmp-nvptx64-nvidia-cuda--sm_%d", "hip-amdgcn-amd-amdhsa--gfx%d", "hipv4-amdgcn-amd-amdhsa--gfx%d",
	"openmp-amdgcn-amd-amdhsa--gfx%d", "openmp-x86_64-unknown-linux-gnu-%d",
}

var smArchs = []string{"sm_20", "sm_30", "sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"}
var gfxArchs = []string{"gfx700", "gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"}

// randomTargetSet returns n distinct valid targets, the first one host.
func randomTargetSet(r *rand.Rand, n int) []string {
	set := []string{"host-x86_64-unknown-linux-gnu"}
	seen := map[string]bool{set[0]: true}
	for len(set) < n {
		var t string
		switch r.Intn(5) {
		case 0:
			t = "openmp-nvptx64-nvidia-cuda--" + smArchs[r.Intn(len(smArchs))]
		case 1:
			t = "hip-amdgcn-amd-amdhsa--" + gfxArchs[r.Intn(len(gfxArchs))]
		case 2:
			t = "hipv4-amdgcn-amd-amdhsa--" + gfxArchs[r.Intn(len(gfxArchs))] + []string{"", ":xnack+", ":xnack-"}[r.Intn(3)]
		case 3:
			t = "openmp-amdgcn-amd-amdhsa--" + gfxArchs[r.Intn(len(gfxArchs))]
		default:
			t = fmt.Sprintf("openmp-%s-unknown-linux-gnu", []string{"x86_64", "aarch64", "powerpc64le", "riscv64", "i386", "s390x"}[r.Intn(6)])
		}
		if !seen[t] {
			seen[t] = true
			set = append(set, t)
		}
	}
	// Avoid conflicting target IDs (gfxN and gfxN:xnack+ of one kind and triple).
	return set
}

// TestBinaryAndListMatchTool compares binary bundles byte for byte and
// -list output for 30 random target sets, with and without -bundle-align,
// including empty payloads.
func TestBinaryAndListMatchTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	r := rand.New(rand.NewSource(1))
	sets := 0
	for sets < 30 {
		targets := randomTargetSet(r, 2+r.Intn(30))
		if _, _, _, err := checkTargets(targets, false, false); err != nil {
			continue // conflicting target IDs
		}
		sets++
		var args []string
		for i := range targets {
			p := filepath.Join(dir, fmt.Sprintf("in%d", i))
			data := bytes.Repeat([]byte{byte(i)}, r.Intn(3)*r.Intn(50))
			write(t, p, data)
			args = append(args, "-input="+p)
		}
		align := []string{"", "-bundle-align=4096", "-bundle-align=8", "-bundle-align=3"}[r.Intn(4)]
		base := append([]string{"-type=bc", "-targets=" + strings.Join(targets, ",")}, args...)
		if align != "" {
			base = append(base, align)
		}
		want, got := filepath.Join(dir, "want.bc"), filepath.Join(dir, "got.bc")
		runTool(t, b, append(base, "-output="+want)...)
		mustMain(t, append(base, "-output="+got)...)
		if !bytes.Equal(read(t, want), read(t, got)) {
			t.Fatalf("binary bundle of %v %s differs from clang's", targets, align)
		}
		wl := runTool(t, b, "-list", "-type=bc", "-input="+want)
		gl := mustMain(t, "-list", "-type=bc", "-input="+want)
		if wl != gl {
			t.Fatalf("-list of %d targets:\n%s\nclang:\n%s", len(targets), gl, wl)
		}
		// Unbundle every target with both tools.
		var outsW, outsG []string
		for i := range targets {
			outsW = append(outsW, "-output="+filepath.Join(dir, fmt.Sprintf("w%d", i)))
			outsG = append(outsG, "-output="+filepath.Join(dir, fmt.Sprintf("g%d", i)))
		}
		ub := []string{"-unbundle", "-type=bc", "-targets=" + strings.Join(targets, ","), "-input=" + want}
		runTool(t, b, append(ub, outsW...)...)
		mustMain(t, append(ub, outsG...)...)
		for i := range targets {
			if !bytes.Equal(read(t, filepath.Join(dir, fmt.Sprintf("w%d", i))), read(t, filepath.Join(dir, fmt.Sprintf("g%d", i)))) {
				t.Fatalf("unbundled %s differs", targets[i])
			}
		}
	}
}

// TestTextMatchesTool compares text bundles for every comment type.
func TestTextMatchesTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	targets := "host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80,hip-amdgcn-amd-amdhsa--gfx90a"
	in := []string{
		write(t, filepath.Join(dir, "h"), []byte("int host;\n")),
		write(t, filepath.Join(dir, "d1"), []byte("no newline")),
		write(t, filepath.Join(dir, "d2"), nil),
	}
	for _, typ := range []string{"i", "ii", "cui", "hipi", "ll", "s", "d"} {
		args := []string{"-type=" + typ, "-targets=" + targets, "-input=" + in[0], "-input=" + in[1], "-input=" + in[2]}
		want, got := filepath.Join(dir, "want."+typ), filepath.Join(dir, "got."+typ)
		runTool(t, b, append(args, "-output="+want)...)
		mustMain(t, append(args, "-output="+got)...)
		if !bytes.Equal(read(t, want), read(t, got)) {
			t.Fatalf("-type=%s differs:\n%q\n%q", typ, read(t, got), read(t, want))
		}
		if c, ok := IsTextBundle(read(t, want)); !ok || c != map[string]string{"ll": ";", "s": "#", "d": "#"}[typ] && !(c == "//" && typ != "ll" && typ != "s" && typ != "d") {
			t.Errorf("IsTextBundle(-type=%s) = %q %v", typ, c, ok)
		}
		if w, g := runTool(t, b, "-list", "-type="+typ, "-input="+want), mustMain(t, "-list", "-type="+typ, "-input="+want); w != g {
			t.Errorf("-list -type=%s: %q, clang %q", typ, g, w)
		}
		ub := []string{"-unbundle", "-type=" + typ, "-targets=" + targets, "-input=" + want}
		mustMain(t, append(ub, "-output="+filepath.Join(dir, "o0"), "-output="+filepath.Join(dir, "o1"), "-output="+filepath.Join(dir, "o2"))...)
		for i := range in {
			if !bytes.Equal(read(t, in[i]), read(t, filepath.Join(dir, fmt.Sprintf("o%d", i)))) {
				t.Errorf("-type=%s: unbundled %d differs", typ, i)
			}
		}
	}
}

// TestObjectMatchesTool checks object bundles both ways.
func TestObjectMatchesTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	src := write(t, filepath.Join(dir, "h.c"), []byte("int f(void){return 1;}\nint main(void){return f()-1;}\n"))
	host := filepath.Join(dir, "h.o")
	runTool(t, llvmtest.Clang(t), "-c", src, "-o", host)
	d1 := write(t, filepath.Join(dir, "d1"), []byte("DEVICE1"))
	d2 := write(t, filepath.Join(dir, "d2"), []byte("dev2\n"))
	targets := "host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80,hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
	args := []string{"-type=o", "-targets=" + targets, "-input=" + host, "-input=" + d1, "-input=" + d2}
	want, got := filepath.Join(dir, "want.o"), filepath.Join(dir, "got.o")
	runTool(t, b, append(args, "-output="+want)...)
	mustMain(t, append(args, "-output="+got)...)
	for _, f := range []string{want, got} {
		if w, g := runTool(t, b, "-list", "-type=o", "-input="+f), mustMain(t, "-list", "-type=o", "-input="+f); w != g {
			t.Errorf("-list %s: %q, clang %q", filepath.Base(f), g, w)
		}
		// Section headers of the bundle sections as llvm-readelf shows them.
		var lines []string
		for _, l := range strings.Split(runTool(t, llvmtest.Tool(t, "llvm-readelf"), "-S", "-W", f), "\n") {
			if i := strings.Index(l, Magic); i >= 0 {
				fs := strings.Fields(l[i:])
				lines = append(lines, fs[0]+" "+fs[1]+" "+strings.Join(fs[4:], " "))
			}
		}
		if len(lines) != 3 {
			t.Fatalf("%s: bundle sections %v", f, lines)
		}
		t.Logf("%s: %v", filepath.Base(f), lines)
	}
	if a, c := readelfBundleFlags(t, want), readelfBundleFlags(t, got); a != c {
		t.Errorf("bundle section type/flags/alignment differ:\nclang %s\noffcc %s", a, c)
	}
	// Each tool unbundles both objects; device payloads are identical and the
	// host objects have the same sections, symbols and relocations.
	for _, f := range []string{want, got} {
		for _, tool := range []string{"clang", "offcc"} {
			outs := []string{filepath.Join(dir, tool+"h.o"), filepath.Join(dir, tool+"d1"), filepath.Join(dir, tool+"d2")}
			ub := []string{"-unbundle", "-type=o", "-targets=" + targets, "-input=" + f, "-output=" + outs[0], "-output=" + outs[1], "-output=" + outs[2]}
			if tool == "clang" {
				runTool(t, b, ub...)
			} else {
				mustMain(t, ub...)
			}
			if !bytes.Equal(read(t, outs[1]), read(t, d1)) || !bytes.Equal(read(t, outs[2]), read(t, d2)) {
				t.Errorf("%s unbundling %s: device payloads differ", tool, filepath.Base(f))
			}
		}
		rd := func(p string) string {
			s := runTool(t, llvmtest.Tool(t, "llvm-readelf"), "-s", "-r", "-W", p)
			return strings.ReplaceAll(s, p, "F")
		}
		if a, c := rd(filepath.Join(dir, "clangh.o")), rd(filepath.Join(dir, "offcch.o")); a != c {
			t.Errorf("host object from %s: offcc's differs from clang's:\n%s\n---\n%s", filepath.Base(f), c, a)
		}
		prog := filepath.Join(dir, "prog")
		runTool(t, llvmtest.Clang(t), filepath.Join(dir, "offcch.o"), "-o", prog)
		runTool(t, prog)
	}
}

func readelfBundleFlags(t *testing.T, f string) string {
	var out []string
	for _, l := range strings.Split(runTool(t, llvmtest.Tool(t, "llvm-readelf"), "-S", "-W", f), "\n") {
		if i := strings.Index(l, Magic); i >= 0 {
			fs := strings.Fields(l[i:])
			// name type address offset size es flags lk inf al
			out = append(out, fs[0]+" "+fs[1]+" "+strings.Join(fs[5:], " "))
		}
	}
	return strings.Join(out, "; ")
}

// TestArchiveMatchesTool unbundles an archive of object bundles with both
// tools and compares the output archives byte for byte.
func TestArchiveMatchesTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	src := write(t, filepath.Join(dir, "h.c"), []byte("int f(void){return 1;}\n"))
	host := filepath.Join(dir, "h.o")
	runTool(t, llvmtest.Clang(t), "-c", src, "-o", host)
	d1 := write(t, filepath.Join(dir, "d1"), []byte("DEVICE1"))
	d2 := write(t, filepath.Join(dir, "d2"), []byte("dev2\n"))
	lib1, lib2 := filepath.Join(dir, "lib1.o"), filepath.Join(dir, "lib2.o")
	runTool(t, b, "-type=o", "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80,hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "-input="+host, "-input="+d1, "-input="+d2, "-output="+lib1)
	mustMain(t, "-type=o", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a", "-input="+host, "-input="+d1, "-output="+lib2)
	lib3 := filepath.Join(dir, "lib3.bc")
	runTool(t, b, "-type=bc", "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80", "-input="+d1, "-input="+d2, "-output="+lib3)
	ar := filepath.Join(dir, "lib.a")
	runTool(t, llvmtest.Tool(t, "llvm-ar"), "rc", ar, lib1, lib2, lib3)
	for _, extra := range [][]string{nil, {"-check-input-archive"}, {"-allow-missing-bundles"}} {
		targets := "hip-amdgcn-amd-amdhsa--gfx90a:xnack+,openmp-nvptx64-nvidia-cuda--sm_80"
		if len(extra) > 0 && extra[0] == "-allow-missing-bundles" {
			targets += ",openmp-amdgcn-amd-amdhsa--gfx1030"
		}
		n := len(strings.Split(targets, ","))
		var ow, og []string
		for i := 0; i < n; i++ {
			ow = append(ow, "-output="+filepath.Join(dir, fmt.Sprintf("w%d.a", i)))
			og = append(og, "-output="+filepath.Join(dir, fmt.Sprintf("g%d.a", i)))
		}
		args := append([]string{"-unbundle", "-type=a", "-targets=" + targets, "-input=" + ar}, extra...)
		runTool(t, b, append(args, ow...)...)
		mustMain(t, append(args, og...)...)
		for i := 0; i < n; i++ {
			w, g := read(t, filepath.Join(dir, fmt.Sprintf("w%d.a", i))), read(t, filepath.Join(dir, fmt.Sprintf("g%d.a", i)))
			if !bytes.Equal(w, g) {
				t.Errorf("%v: archive %d differs:\n%q\n%q", extra, i, g, w)
			}
		}
	}
}

// TestErrorsMatchTool compares error messages for bad command lines.
func TestErrorsMatchTool(t *testing.T) {
	b := llvmtest.Tool(t, "clang-offload-bundler")
	dir := t.TempDir()
	in := write(t, filepath.Join(dir, "a"), []byte("x"))
	bundle := filepath.Join(dir, "b.bc")
	runTool(t, b, "-type=bc", "-targets=host-x86_64-unknown-linux-gnu,openmp-nvptx64-nvidia-cuda--sm_80", "-input="+in, "-input="+in, "-output="+bundle)
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"-type=bc", "-targets=host-x86_64-unknown-linux-gnu,host-x86_64-unknown-linux-gnu", "-input=" + in, "-input=" + in, "-output=" + out},
		{"-type=bc", "-targets=openmp-nvptx64-nvidia-cuda-", "-input=" + in, "-output=" + out},
		{"-type=bc", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + in, "-input=" + in, "-output=" + out},
		{"-type=bc", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + in},
		{"-type=bc", "-input=" + in, "-output=" + out},
		{"-type=a", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + in, "-output=" + out},
		{"-type=bc", "-unbundle", "-targets=openmp-amdgcn-amd-amdhsa--gfx90a,openmp-amdgcn-amd-amdhsa--gfx1030", "-input=" + bundle, "-output=" + out, "-output=" + out + "2"},
		{"-type=bc", "-unbundle", "-targets=host-x86_64-unknown-linux-gnu,openmp-amdgcn-amd-amdhsa--gfx90a,openmp-amdgcn-amd-amdhsa--gfx1030,openmp-amdgcn-amd-amdhsa--gfx1100", "-input=" + bundle, "-output=" + out, "-output=" + out + "2", "-output=" + out + "3", "-output=" + out + "4"},
		{"-type=bc", "-unbundle", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + bundle, "-output=" + out, "-output=" + out + "2"},
		{"-type=bc", "-list", "-unbundle", "-input=" + bundle},
		{"-type=bc", "-list", "-input=" + bundle, "-output=" + out},
		{"-type=bc", "-check-input-archive", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + in, "-output=" + out},
		{"-type=zz", "-targets=host-x86_64-unknown-linux-gnu", "-input=" + in, "-output=" + out},
		{"-type=bc", "-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a:xnack+,hip-amdgcn-amd-amdhsa--gfx90a:sramecc+", "-input=" + in, "-input=" + in, "-input=" + in, "-output=" + out},
		{"-type=bc", "-targets=hip-amdgcn-amd-amdhsa--gfx90a", "-input=" + in, "-output=" + out},
		{"-type=bc", "-input=" + in, "-inputs=" + in, "-targets=host-x86_64-unknown-linux-gnu", "-output=" + out},
	} {
		cmd := exec.Command(b, args...)
		msg, err := cmd.CombinedOutput()
		_, e, rc := runMain(args...)
		wantRC := 0
		if err != nil {
			wantRC = 1
		}
		if rc != wantRC || (rc != 0 && strings.TrimSpace(string(msg)) != strings.TrimSpace(strings.ReplaceAll(e, "clang-offload-bundler:", b+":"))) {
			t.Errorf("%q:\nclang (%v): %s\noffcc (%d): %s", args, err, msg, rc, e)
		}
		os.Remove(out)
	}
}
