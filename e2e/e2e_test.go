package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// openmpHost are the flags of OpenMP offload to the host device.
var openmpHost = []string{"-fopenmp", "-fopenmp-targets=" + offloadHost}

func args(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		default:
			panic("args: bad type")
		}
	}
	return out
}

// TestOneStepBuild compiles and links basic.c in one driver invocation.
func TestOneStepBuild(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	prog := filepath.Join(dir, "basic")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(openmpHost, srcPath(t, "basic.c"), "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
}

// TestCompileThenLink compiles the two translation units, which share
// declare-target globals and functions, with -c and links the objects.
func TestCompileThenLink(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	objs := compileTUs(t, c, dir, tmp)
	prog := filepath.Join(dir, "twotu")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, objs, "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
}

// TestStaticArchive builds libkern.a from offload objects with llvm-ar and
// links a program against it. The unused member (with its own target
// region) must not be pulled in.
func TestStaticArchive(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	var objs []string
	for _, m := range []string{"kern", "unused"} {
		obj := filepath.Join(dir, m+".o")
		cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: args(openmpHost, "-c", srcPath(t, "archive/"+m+".c"), "-o", obj)}.mustRun(t)
		objs = append(objs, obj)
	}
	cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-ar"), args: args("rcs", "libkern.a", objs)}.mustRun(t)
	prog := filepath.Join(dir, "archive")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(openmpHost, srcPath(t, "archive/main.c"), "-L"+dir, "-lkern", "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)

	nm := cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-nm"), args: []string{prog}}.mustRun(t)
	if !regexp.MustCompile(`(?m) T kern_run$`).MatchString(nm.stdout) {
		t.Errorf("kern_run not defined in the program:\n%s", nm.stdout)
	}
	if strings.Contains(nm.stdout, "unused_kernel") {
		t.Errorf("unused archive member was linked in (unused_kernel present)")
	}
}

// TestCXXTemplatesLambdas builds the C++ program with offcc++.
func TestCXXTemplatesLambdas(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	prog := filepath.Join(dir, "templates")
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cxx,
		args: args(openmpHost, srcPath(t, "cxx/templates.cpp"), "-o", prog)}.mustRun(t)
	runOffloadProgram(t, prog)
}

// hashHashHashHeader matches the lines -### prints before the jobs.
var hashHashHashHeader = regexp.MustCompile(`^([^ ].*\bversion\b.*|Target: .*|Thread model: .*|InstalledDir: .*|Configuration file: .*|Build config: .*)$`)

// TestHashHashHashRunsInShell runs the jobs that -### prints, one by one with
// sh -c, and checks that they build a working program.
func TestHashHashHashRunsInShell(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	tmpDir, tmp := tmpEnv(t)
	src := filepath.Join(dir, "basic.c")
	copyFile(t, srcPath(t, "basic.c"), src)

	r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
		args: args(openmpHost, "basic.c", "-o", "prog", "-###")}.mustRun(t)
	if _, err := os.Stat(filepath.Join(dir, "prog")); err == nil {
		t.Fatalf("-### produced the output file")
	}
	if ents, _ := os.ReadDir(tmpDir); len(ents) != 0 {
		t.Errorf("-### created files in TMPDIR: %v", ents)
	}

	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	var jobs []string
	inHeader := true
	for _, l := range lines {
		if inHeader && hashHashHashHeader.MatchString(l) {
			continue
		}
		inHeader = false
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !strings.HasPrefix(l, " ") {
			t.Fatalf("unexpected non-job line in -### output: %q\n%s", l, r)
		}
		jobs = append(jobs, l)
	}
	if len(jobs) < 2 {
		t.Fatalf("expected several jobs in -### output:\n%s", r)
	}
	sawCC1 := false
	path := "PATH=" + c.dir + string(os.PathListSeparator) + os.Getenv("PATH")
	for i, job := range jobs {
		sawCC1 = sawCC1 || strings.Contains(job, `"-cc1"`)
		jr := cmdSpec{dir: dir, env: []string{tmp, path}, name: "sh", args: []string{"-c", job}}.run(t)
		if jr.code != 0 {
			t.Fatalf("job %d of %d failed:\n%s", i+1, len(jobs), jr)
		}
	}
	if !sawCC1 {
		t.Errorf("no -cc1 job in -### output:\n%s", r.stderr)
	}
	runOffloadProgram(t, filepath.Join(dir, "prog"))
}

// TestDeviceOnlyFailure checks that an error in the device compile alone
// fails the build cleanly: exit status 1, the diagnostic on stderr, no
// output file and no temporaries left behind.
func TestDeviceOnlyFailure(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"Xopenmp-target-define", []string{"-Xopenmp-target=" + offloadHost, "-DDEVICE_ONLY_ERROR"},
			"offcc-e2e: device-only compile error"},
		{"declare-variant-nohost", []string{"-DVARIANT_ERROR"},
			"offcc-e2e: device-only static assertion"},
	} {
		for _, mode := range []string{"link", "compile"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				tmpDir, tmp := tmpEnv(t)
				out := filepath.Join(dir, "out")
				a := args(openmpHost, tc.flags, srcPath(t, "fail_device.c"), "-o", out)
				if mode == "compile" {
					a = append(a, "-c")
				}
				r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: a}.run(t)
				if r.code != 1 {
					t.Errorf("exit status %d, want 1", r.code)
				}
				if !strings.Contains(r.stderr, tc.want) {
					t.Errorf("stderr lacks %q", tc.want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("output file %s exists after a failed build", out)
				}
				if ents, err := os.ReadDir(tmpDir); err != nil || len(ents) != 0 {
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("temporaries left in TMPDIR: %v (err %v)", names, err)
				}
				if t.Failed() {
					t.Logf("%s", r)
				}
			})
		}
	}
	// Control: the same switches without offload targets build fine, so
	// the failures above come from the device compile alone.
	t.Run("host-only-control", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: args("-fopenmp", "-DVARIANT_ERROR", "-c", srcPath(t, "fail_device.c"), "-o", "x.o")}.mustRun(t)
	})
}

// TestObjdumpOffloading checks that llvm-objdump --offloading reads the
// offload images embedded by offcc -c.
func TestObjdumpOffloading(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  map[string]string
	}{
		{"host", openmpHost, map[string]string{"kind": "elf", "triple": offloadHost, "arch": "generic", "producer": "openmp"}},
		{"gfx90a", []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib"},
			map[string]string{"triple": "amdgcn-amd-amdhsa", "arch": "gfx90a", "producer": "openmp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, tmp := tmpEnv(t)
			obj := filepath.Join(dir, "basic.o")
			cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
				args: args(tc.flags, "-c", srcPath(t, "basic.c"), "-o", obj)}.mustRun(t)
			r := cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-objdump"), args: []string{"--offloading", obj}}.mustRun(t)
			images := parseOffloading(r.stdout)
			if len(images) != 1 {
				t.Fatalf("want 1 offloading image, got %d:\n%s", len(images), r)
			}
			for k, v := range tc.want {
				if images[0][k] != v {
					t.Errorf("image %s = %q, want %q", k, images[0][k], v)
				}
			}
			if t.Failed() {
				t.Logf("%s", r)
			}
		})
	}
}

// parseOffloading parses llvm-objdump --offloading output into one map of
// fields per OFFLOADING IMAGE.
func parseOffloading(s string) []map[string]string {
	var imgs []map[string]string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "OFFLOADING IMAGE") {
			imgs = append(imgs, map[string]string{})
			continue
		}
		if len(imgs) == 0 {
			continue
		}
		// "kind            llvm ir": the key is one word, the value the rest.
		k, v, ok := strings.Cut(strings.TrimSpace(l), " ")
		if ok {
			imgs[len(imgs)-1][k] = strings.TrimSpace(v)
		}
	}
	return imgs
}

// driverPrefix matches the program name that starts a driver diagnostic.
var driverPrefix = regexp.MustCompile(`(?m)^(offcc|offcc\+\+|clang|clang\+\+|clang-22)(: (error|warning|note|remark): )`)

// normalizeDriverName replaces the program name in driver diagnostics
// ("offcc: warning: ...") with "DRIVER", so offcc's and clang's output can be
// compared.
func normalizeDriverName(s string) string {
	return driverPrefix.ReplaceAllString(s, "DRIVER$2")
}

var phaseCases = []struct {
	name string
	args []string
}{
	{"host-offload-link", args(openmpHost, "x.c")},
	{"amdgcn-multiarch-compile", []string{"-fopenmp", "--offload-arch=gfx906,gfx90a", "-nogpulib", "-c", "x.c"}},
}

// TestPrintPhases compares -ccc-print-phases output with clang-22's.
func TestPrintPhases(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	for _, tc := range phaseCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "x.c"))
			_, tmp := tmpEnv(t)
			a := append(append([]string{}, tc.args...), "-ccc-print-phases")
			got := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: a}.mustRun(t)
			want := cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: a}.mustRun(t)
			if g, w := normalizeDriverName(got.stderr), normalizeDriverName(want.stderr); g != w {
				t.Errorf("-ccc-print-phases differs from clang's\n--- offcc:\n%s--- clang:\n%s", g, w)
			}
			if got.stdout != want.stdout {
				t.Errorf("stdout differs: offcc %q, clang %q", got.stdout, want.stdout)
			}
		})
	}
}

// tempName matches a quoted temporary file name in -ccc-print-bindings
// output: "<dir>/<stem>-<random>.<ext>".
var tempName = regexp.MustCompile(`"(?:[^"]*/)?([^"/]+)-[0-9A-Za-z]{4,}\.([0-9A-Za-z]+)"`)

// bindingLine matches one -ccc-print-bindings line:
// # "<triple>" - "<tool>", inputs: [<quoted names>], output: "<name>"
var bindingLine = regexp.MustCompile(`^# "([^"]*)" - "([^"]*)", inputs: \[(.*)\], output: "(.*)"$`)

type binding struct {
	triple, tool string
	inputs       []string // quoted, as printed
	output       string   // quoted, as printed
}

func (b binding) String() string {
	return fmt.Sprintf("# %q - %q, inputs: [%s], output: %s", b.triple, b.tool, strings.Join(b.inputs, ", "), b.output)
}

// parseBindings parses -ccc-print-bindings output, skipping diagnostics.
func parseBindings(t testing.TB, s string) []binding {
	t.Helper()
	var bs []binding
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "# ") {
			continue
		}
		m := bindingLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("cannot parse binding line %q", l)
		}
		b := binding{triple: m[1], tool: m[2], output: `"` + m[4] + `"`}
		if m[3] != "" {
			b.inputs = strings.Split(m[3], ", ")
		}
		bs = append(bs, b)
	}
	return bs
}

// foldEmbed undoes offcc's separate embed step: a host "clang" binding
// whose output only feeds the next binding, an "Offload::Embedder" (or
// other embed tool) taking it plus the packaged images, is printed by clang
// as one "clang" binding with the images as extra inputs (clang embeds with
// -fembed-offload-object in the host backend job).
func foldEmbed(bs []binding) []binding {
	var out []binding
	for i := 0; i < len(bs); i++ {
		b := bs[i]
		if i+1 < len(bs) {
			e := bs[i+1]
			if b.tool == "clang" && strings.Contains(strings.ToLower(e.tool), "embed") &&
				len(e.inputs) >= 2 && e.inputs[0] == b.output && e.triple == b.triple {
				b.inputs = append(append([]string{}, b.inputs...), e.inputs[1:]...)
				b.output = e.output
				i++
			}
		}
		out = append(out, b)
	}
	return out
}

// TestPrintBindings checks that every binding clang-22 prints (with
// temporary names normalized) appears in offcc's -ccc-print-bindings output,
// in the same order. offcc may add bindings of its own: its embed step,
// which is folded back into the host backend binding it follows (see
// foldEmbed), and others, which are allowed but logged.
func TestPrintBindings(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	for _, tc := range phaseCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "x.c"))
			tmpDir, tmp := tmpEnv(t)
			a := append(append([]string{}, tc.args...), "-ccc-print-bindings")
			got := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: a}.mustRun(t)
			want := cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: a}.mustRun(t)
			norm := func(bs []binding) []string {
				var out []string
				for _, b := range bs {
					l := b.String()
					// Only names under our TMPDIR are temporaries.
					l = strings.ReplaceAll(l, `"`+tmpDir+"/", `"TMP/`)
					l = tempName.ReplaceAllStringFunc(l, func(m string) string {
						if !strings.HasPrefix(m, `"TMP/`) {
							return m
						}
						sm := tempName.FindStringSubmatch(m)
						return `"TMP/` + sm[1] + "-XXXXXX." + sm[2] + `"`
					})
					out = append(out, l)
				}
				return out
			}
			rawGot := parseBindings(t, got.stderr)
			g, w := norm(foldEmbed(rawGot)), norm(parseBindings(t, want.stderr))
			if len(w) == 0 {
				t.Fatalf("clang printed no bindings:\n%s", want)
			}
			i := 0
			for _, l := range g {
				if i < len(w) && l == w[i] {
					i++
				}
			}
			if i < len(w) {
				t.Errorf("binding %s (clang's #%d) missing from offcc's output, in order\n--- offcc (embed folded, normalized):\n%s\n--- clang (normalized):\n%s\n--- offcc (raw):\n%s",
					w[i], i+1, strings.Join(g, "\n"), strings.Join(w, "\n"), got.stderr)
			}
			if extra := len(g) - len(w); extra > 0 {
				t.Logf("offcc prints %d binding(s) more than clang (after folding its embed step):\n%s", extra, strings.Join(g, "\n"))
			}
		})
	}
}

// TestPlainCompileSymbols checks that a non-offload -c gives an object with
// the same symbols as clang's.
func TestPlainCompileSymbols(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	dir := t.TempDir()
	copyFile(t, srcPath(t, "plain.c"), filepath.Join(dir, "x.c"))
	_, tmp := tmpEnv(t)
	cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: []string{"-c", "x.c", "-o", "offcc.o"}}.mustRun(t)
	cmdSpec{dir: dir, env: []string{tmp}, name: refClang, args: []string{"-c", "x.c", "-o", "clang.o"}}.mustRun(t)
	nm := func(obj string) string {
		return cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-nm"), args: []string{obj}}.mustRun(t).stdout
	}
	if g, w := nm("offcc.o"), nm("clang.o"); g != w {
		t.Errorf("symbols differ\n--- offcc:\n%s--- clang:\n%s", g, w)
	}
	r := cmdSpec{dir: dir, name: filepath.Join(llvmBin, "llvm-objdump"), args: []string{"--offloading", "offcc.o"}}.mustRun(t)
	if strings.Contains(r.stdout, "OFFLOADING IMAGE") {
		t.Errorf("plain compile embedded an offloading image:\n%s", r.stdout)
	}
}

// TestErrors checks driver errors and exit statuses.
func TestErrors(t *testing.T) {
	t.Parallel()
	c := getCompiler(t)
	t.Run("missing-input", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc, args: args(openmpHost, "-c", "nope.c")}.run(t)
		if r.code != 1 {
			t.Errorf("exit status %d, want 1\n%s", r.code, r)
		}
		first, _, _ := strings.Cut(r.stderr, "\n")
		if want := "offcc: error: no such file or directory: 'nope.c'"; !strings.HasPrefix(first, want) {
			t.Errorf("first stderr line %q, want prefix %q", first, want)
		}
	})
	t.Run("unknown-offload-arch", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, tmp := tmpEnv(t)
		copyFile(t, srcPath(t, "basic.c"), filepath.Join(dir, "x.c"))
		r := cmdSpec{dir: dir, env: []string{tmp}, name: c.cc,
			args: []string{"-fopenmp", "--offload-arch=gfx9999", "-nogpulib", "-c", "x.c", "-o", "x.o"}}.run(t)
		if r.code == 0 {
			t.Errorf("exit status 0, want failure")
		}
		if !regexp.MustCompile(`(?m)^offcc: error: `).MatchString(r.stderr) {
			t.Errorf("no 'offcc: error:' line in stderr:\n%s", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.o")); err == nil {
			t.Errorf("x.o exists after a failed compile")
		}
	})
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
