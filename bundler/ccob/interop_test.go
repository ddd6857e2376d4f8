package ccob

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

const interopTargets = "host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a"

// runBundler runs LLVM 22's clang-offload-bundler, the ground truth, with a
// clean OFFLOAD_BUNDLER_* environment plus extra variables, and returns its
// stdout and stderr. Without the tool the test is skipped (failed under
// OFFCC_REQUIRE_LLVM=1).
func runBundler(t *testing.T, extraEnv []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(llvmtest.Tool(t, "clang-offload-bundler"), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OFFLOAD_BUNDLER_") && !strings.HasPrefix(kv, "COMPRESSED_BUNDLE_FORMAT_VERSION=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("clang-offload-bundler %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// interopInputs writes a host and a device input (the device one several
// zstd blocks long) and the tool's uncompressed bundle of them.
func interopInputs(t *testing.T) (dir string, host, dev, plain []byte) {
	dir = t.TempDir()
	host = append([]byte("BC\xc0\xde"), testData(20000, 100)...)
	dev = append([]byte("BC\xc0\xde"), testData(3<<20, 101)...)
	for name, b := range map[string][]byte{"host.bc": host, "dev.bc": dev} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runBundler(t, nil, "-type=bc", "-targets="+interopTargets,
		"-input="+filepath.Join(dir, "host.bc"), "-input="+filepath.Join(dir, "dev.bc"),
		"-output="+filepath.Join(dir, "plain.bundle"))
	plain, err := os.ReadFile(filepath.Join(dir, "plain.bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(plain, []byte("__CLANG_OFFLOAD_BUNDLE__")) {
		t.Fatalf("tool's bundle starts % x", plain[:24])
	}
	return dir, host, dev, plain
}

// labels maps each "label: value" line to its value.
func labels(report string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(report), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// compareReports checks that ours has the tool's lines, in the same order,
// and the same values except for timings.
func compareReports(t *testing.T, what, tool, ours string) {
	t.Helper()
	key := func(r string) []string {
		var ks []string
		for _, line := range strings.Split(strings.TrimSpace(r), "\n") {
			k, _, _ := strings.Cut(line, ": ")
			ks = append(ks, k)
		}
		return ks
	}
	if !slices.Equal(key(tool), key(ours)) {
		t.Errorf("%s: report lines differ\ntool:\n%s\nours:\n%s", what, tool, ours)
		return
	}
	tl, ol := labels(tool), labels(ours)
	for k, v := range tl {
		if strings.Contains(k, "speed") {
			continue
		}
		if ol[k] != v {
			t.Errorf("%s: %q: tool %q, ours %q", what, k, v, ol[k])
		}
	}
}

// TestInteropToolCompressed decompresses the tool's v3 and v2 output and
// compares the result and the -verbose report with the tool's.
func TestInteropToolCompressed(t *testing.T) {
	dir, _, _, plain := interopInputs(t)
	var envs [][]byte
	for _, c := range []struct {
		name    string
		env     []string
		args    []string
		version uint16
	}{
		{"default", nil, nil, 3},
		{"v2", []string{"COMPRESSED_BUNDLE_FORMAT_VERSION=2"}, nil, 2},
		{"v3 level 19", []string{"COMPRESSED_BUNDLE_FORMAT_VERSION=3"}, []string{"-compression-level=19"}, 3},
	} {
		out := filepath.Join(dir, c.name+".ccob")
		args := append([]string{"-type=bc", "-targets=" + interopTargets,
			"-input=" + filepath.Join(dir, "host.bc"), "-input=" + filepath.Join(dir, "dev.bc"),
			"-output=" + out, "-compress", "-verbose"}, c.args...)
		_, toolCompress := runBundler(t, c.env, args...)
		env, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var report strings.Builder
		data, h, err := DecompressWith(env, DecompressOptions{Verbose: &report})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if h.Version != c.version || h.Method != Zstd || h.TotalSize != uint64(len(env)) {
			t.Errorf("%s: header %+v", c.name, h)
		}
		if !bytes.Equal(data, plain) {
			t.Errorf("%s: decompressed bundle differs from the tool's uncompressed bundle", c.name)
		}
		if got, err := Split(env); err != nil || len(got) != 1 || len(got[0]) != len(env) {
			t.Errorf("%s: Split: %d envelopes, %v", c.name, len(got), err)
		}
		envs = append(envs, env)

		// The tool's decompression report, from -list -verbose.
		_, toolDecompress := runBundler(t, nil, "-list", "-type=bc", "-input="+out, "-verbose")
		compareReports(t, c.name+" decompress", toolDecompress, report.String())

		// Our compression report for the same bundle, version and level.
		level := 0
		if len(c.args) > 0 {
			level = 19
		}
		var creport strings.Builder
		if _, err := Compress(plain, Options{Version: c.version, Method: Zstd, Level: level, Verbose: &creport}); err != nil {
			t.Fatal(err)
		}
		tl, ol := labels(toolCompress), labels(creport.String())
		compareReportsKeys(t, c.name+" compress", toolCompress, creport.String())
		for _, k := range []string{"Compressed bundle format version", "Compression method used", "Compression level", "Binary size before compression", "Truncated MD5 hash"} {
			if tl[k] != ol[k] {
				t.Errorf("%s compress: %q: tool %q, ours %q", c.name, k, tl[k], ol[k])
			}
		}
	}

	// The tool's envelopes laid out like a .hip_fatbin section.
	sec, offs := fatbin(append(envs, envs...))
	got, err := Split(sec)
	if err != nil || len(got) != 2*len(envs) {
		t.Fatalf("Split of the tool's envelopes: %d, %v", len(got), err)
	}
	for i, g := range got {
		if &g[0] != &sec[offs[i]] || len(g) != len(envs[i%len(envs)]) {
			t.Errorf("envelope %d: %d bytes at the wrong place", i, len(g))
		}
	}
}

// compareReportsKeys checks that both reports have the same labels in order.
func compareReportsKeys(t *testing.T, what, tool, ours string) {
	t.Helper()
	var tk, ok []string
	for _, line := range strings.Split(strings.TrimSpace(tool), "\n") {
		k, _, _ := strings.Cut(line, ": ")
		tk = append(tk, k)
	}
	for _, line := range strings.Split(strings.TrimSpace(ours), "\n") {
		k, _, _ := strings.Cut(line, ": ")
		ok = append(ok, k)
	}
	if !slices.Equal(tk, ok) {
		t.Errorf("%s: report lines differ\ntool:\n%s\nours:\n%s", what, tool, ours)
	}
}

// TestInteropOurCompressed has the tool list and unbundle envelopes we wrote
// (v2 and v3, zstd and zlib, and hand-built v1).
func TestInteropOurCompressed(t *testing.T) {
	dir, host, dev, plain := interopInputs(t)
	type variant struct {
		name string
		env  []byte
	}
	var vs []variant
	for _, v := range []uint16{2, 3} {
		for _, m := range []Method{Zstd, Zlib} {
			env, err := Compress(plain, Options{Version: v, Method: m})
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, variant{"v" + string(rune('0'+v)) + "-" + m.String(), env})
		}
	}
	zl, err := zlibCompress(plain, 6)
	if err != nil {
		t.Fatal(err)
	}
	vs = append(vs, variant{"v1-zlib", v1Envelope(Zlib, plain, zl)})
	vs = append(vs, variant{"v1-zstd", v1Envelope(Zstd, plain, zstdPayload(t, plain))})

	// The tool lists normalised IDs ("host-x86_64-unknown-linux-gnu-");
	// what it lists for the uncompressed bundle is the reference.
	plainList, _ := runBundler(t, nil, "-list", "-type=bc", "-input="+filepath.Join(dir, "plain.bundle"))
	want := strings.Fields(plainList)
	slices.Sort(want)
	if len(want) != 2 {
		t.Fatalf("tool lists %q for the uncompressed bundle", want)
	}

	for _, v := range vs {
		in := filepath.Join(dir, v.name+".ccob")
		if err := os.WriteFile(in, v.env, 0o644); err != nil {
			t.Fatal(err)
		}
		list, stderr := runBundler(t, nil, "-list", "-type=bc", "-input="+in, "-verbose")
		got := strings.Fields(list)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: -list = %q, want %q", v.name, got, want)
		}
		if !strings.Contains(stderr, "Hashes match: Yes") {
			t.Errorf("%s: tool's verbose report:\n%s", v.name, stderr)
		}
		var ours strings.Builder
		if _, _, err := DecompressWith(v.env, DecompressOptions{Verbose: &ours}); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if !strings.HasPrefix(v.name, "v1") {
			// For v1 the tool counts every byte after the header as
			// payload; compare the other versions line by line.
			compareReports(t, v.name+" decompress", stderr, ours.String())
		}

		hostOut, devOut := filepath.Join(dir, v.name+".host"), filepath.Join(dir, v.name+".dev")
		runBundler(t, nil, "-unbundle", "-type=bc", "-targets="+interopTargets,
			"-input="+in, "-output="+hostOut, "-output="+devOut)
		for out, want := range map[string][]byte{hostOut: host, devOut: dev} {
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: unbundled %s differs (%d bytes, want %d)", v.name, filepath.Base(out), len(got), len(want))
			}
		}
	}
}
