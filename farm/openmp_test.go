package farm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/ompinfo"
)

// TestAcceptsOpenMP: OpenMP front ends go to workers only with offcc's
// stable kernel names: run in a directory of their own with
// -working-directory W (absolute) just before the final -x LANG INPUT.
func TestAcceptsOpenMP(t *testing.T) {
	_, store, clang := farmSetup(t)
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	real, _ := filepath.EvalSymlinks(clang)
	cc := filepath.Join(filepath.Dir(real), "clang")
	mk := func(kind actions.Kind, off actions.OffloadKind, dir string, tail ...string) *actions.Action {
		cmd := append([]string{cc, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-o", "/tmp/x.bc"}, tail...)
		return &actions.Action{Kind: kind, Offload: off, Command: cmd, Dir: dir}
	}
	stable := []string{"-working-directory", "/src", "-x", "c", "main.c"}
	for _, tc := range []struct {
		name string
		a    *actions.Action
		want bool
	}{
		{"stable host front end", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", stable...), true},
		{"stable device compile", mk(actions.DeviceCompile, actions.OpenMP, "/tmp/d", stable...), true},
		{"host front end with clang's names", mk(actions.HostFrontend, actions.OpenMP, "", "-x", "c", "main.c"), false},
		{"device compile with clang's names", mk(actions.DeviceCompile, actions.OpenMP, "", "-x", "c", "main.c"), false},
		{"-working-directory but no directory of its own", mk(actions.HostFrontend, actions.OpenMP, "", stable...), false},
		{"a directory of its own without -working-directory", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", "-x", "c", "main.c"), false},
		{"-working-directory elsewhere", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", "-working-directory", "/src", "-O2", "-x", "c", "main.c"), false},
		{"relative -working-directory", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", "-working-directory", "src", "-x", "c", "main.c"), false},
		{"unclean -working-directory", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", "-working-directory", "/src/../src", "-x", "c", "main.c"), false},
		{"OpenMP compile", mk(actions.Compile, actions.OpenMP, "/tmp/d", stable...), false},
		// Its kernels would be named after the source's inode.
		{"host front end of an absolute source", mk(actions.HostFrontend, actions.OpenMP, "/tmp/d", "-working-directory", "/src", "-x", "c", "/opt/main.c"), false},
		{"device compile of an absolute source", mk(actions.DeviceCompile, actions.OpenMP, "/tmp/d", "-working-directory", "/src", "-x", "c", "/opt/main.c"), true},
		{"HIP compile in a directory of its own", mk(actions.DeviceCompile, actions.HIP, "/tmp/d", "-x", "hip", "k.hip"), false},
		{"OpenMP backend", mk(actions.Backend, actions.OpenMP, "", "-x", "ir", "/tmp/x.bc"), true},
	} {
		if got := c.Accepts(tc.a); got != tc.want {
			t.Errorf("%s: Accepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// ompSources writes an OpenMP program into dir: main.c with a target
// region of its own, one in k.h (included by its relative name) and, when
// abs is not "", #include "abs.h" of a header with a target region, which
// the command finds through an absolute -I abs.
func ompSources(t *testing.T, dir, abs string) {
	t.Helper()
	main := "#include \"k.h\"\n"
	if abs != "" {
		main += "#include \"abs.h\"\n"
		if err := os.WriteFile(filepath.Join(abs, "abs.h"), []byte("static int a(void) {\n  int r = 0;\n#pragma omp target map(from: r)\n  r = 7;\n  return r;\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	main += "int main(void) {\n  int v = 0;\n#pragma omp target map(from: v)\n  v = 39;\n  return v + k()"
	if abs != "" {
		main += " + a()"
	}
	main += ";\n}\n"
	os.WriteFile(filepath.Join(dir, "k.h"), []byte("static int k(void) {\n  int r = 0;\n#pragma omp target map(from: r)\n  r = 3;\n  return r;\n}\n"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ompFrontEnd returns an OpenMP front end of dir/main.c for offload to the
// host, as offcc's driver rewrites it for stable kernel names: run in an
// empty directory with -working-directory dir. With hostIR "" it is the
// host front end (to bitcode), else the device compile of that host IR.
func ompFrontEnd(t *testing.T, clang, dir, out, hostIR string, extra ...string) *actions.Action {
	t.Helper()
	res := filepath.Join(filepath.Dir(clang), "..", "lib", "clang", "22")
	kind := actions.HostFrontend
	cmd := []string{clang, "-cc1", "-triple", "x86_64-pc-linux-gnu", "-O2", "-fopenmp", "-main-file-name", "main.c"}
	if hostIR == "" {
		cmd = append(cmd, "-emit-llvm-bc", "-disable-llvm-passes", "--offload-targets=x86_64-pc-linux-gnu")
	} else {
		kind = actions.DeviceCompile
		cmd = append(cmd, "-aux-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-fopenmp-is-target-device",
			"-fopenmp-host-ir-file-path", hostIR)
	}
	cmd = append(cmd, "-resource-dir", res, "-internal-isystem", filepath.Join(res, "include"),
		"-internal-externc-isystem", "/usr/include")
	cmd = append(cmd, extra...)
	dep := out + ".d"
	cmd = append(cmd, "-o", out, "-dependency-file", dep, "-MT", out, "-sys-header-deps",
		"-working-directory", dir, "-x", "c", "main.c")
	a := &actions.Action{Kind: kind, Offload: actions.OpenMP, Device: hostIR != "", Command: cmd,
		Inputs:  []*actions.Artifact{actions.NewArtifact(filepath.Join(dir, "main.c"))},
		Outputs: []*actions.Artifact{actions.NewArtifact(out)}, DepFile: dep,
		Dir: filepath.Join(t.TempDir(), "empty")}
	if hostIR != "" {
		a.Inputs = append(a.Inputs, actions.NewArtifact(hostIR))
	}
	return a
}

// runInDir runs a's command here, in a.Dir, as offcc's executor does.
func runInDir(t *testing.T, a *actions.Action) []byte {
	t.Helper()
	if err := os.MkdirAll(a.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(a.Command[0], a.Command[1:]...)
	cmd.Dir = a.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("local run of %s: %v\n%s", a.Label(), err, out)
	}
	data, err := os.ReadFile(a.Outputs[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOpenMPFrontEndsRemote: an OpenMP host front end and device compile
// with stable kernel names run on a worker and write what local runs
// write, byte for byte, with hashed names (device deadf17e). A host front
// end whose worker's output holds a kernel named after an inode (a target
// region in a header found through an absolute -I) is given back with
// nothing written; a device compile whose host IR holds one is never
// sent.
func TestOpenMPFrontEndsRemote(t *testing.T) {
	_, clang, c := clientWithWorker(t)
	out := t.TempDir()
	run := func(a *actions.Action) (actions.RemoteInfo, error) {
		if !c.Accepts(a) {
			t.Fatalf("the client does not accept %s", a.Label())
		}
		var stdout, stderr bytes.Buffer
		info, err := c.Run(context.Background(), a, &stdout, &stderr)
		if err == nil && stderr.Len() > 0 {
			t.Errorf("%s printed:\n%s", a.Label(), stderr.String())
		}
		return info, err
	}

	src := t.TempDir()
	ompSources(t, src, "")
	localHost := runInDir(t, ompFrontEnd(t, clang, src, filepath.Join(out, "local.bc"), ""))
	host := ompFrontEnd(t, clang, src, filepath.Join(out, "remote.bc"), "")
	info, err := run(host)
	if err != nil {
		t.Fatalf("host front end: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(out, "remote.bc"))
	if info.Worker != "w1" || !bytes.Equal(got, localHost) {
		t.Errorf("the worker's (%q) host IR (%d bytes) differs from the local one (%d bytes)", info.Worker, len(got), len(localHost))
	}
	if ompinfo.InodeNamed(got) || !bytes.Contains(got, []byte("__omp_offloading_"+ompinfo.StableDevice+"_")) {
		t.Errorf("the host IR's kernels are not named by hashes (%s)", ompinfo.StableDevice)
	}
	localDev := runInDir(t, ompFrontEnd(t, clang, src, filepath.Join(out, "local.o"), filepath.Join(out, "local.bc")))
	dev := ompFrontEnd(t, clang, src, filepath.Join(out, "remote.o"), filepath.Join(out, "remote.bc"))
	if info, err = run(dev); err != nil {
		t.Fatalf("device compile: %v", err)
	}
	got, _ = os.ReadFile(filepath.Join(out, "remote.o"))
	if info.Worker != "w1" || !bytes.Equal(got, localDev) {
		t.Errorf("the worker's (%q) device object (%d bytes) differs from the local one (%d bytes)", info.Worker, len(got), len(localDev))
	}

	// A target region in a header named by an absolute path.
	src2, inc := t.TempDir(), t.TempDir()
	ompSources(t, src2, inc)
	bad := ompFrontEnd(t, clang, src2, filepath.Join(out, "inode.bc"), "", "-I", inc)
	info, err = run(bad)
	if !errors.Is(err, actions.ErrRunLocally) || !strings.Contains(err.Error(), "inode") {
		t.Fatalf("host front end with an inode-named kernel: Run = %v, want ErrRunLocally (inode names)", err)
	}
	if info.Worker != "w1" {
		t.Errorf("the host front end was given back by %q, want the worker's run given back", info.Worker)
	}
	for _, p := range []string{"inode.bc", "inode.bc.d"} {
		if _, err := os.Stat(filepath.Join(out, p)); err == nil {
			t.Errorf("%s was left written", p)
		}
	}
	// Locally (as the executor then runs it), its IR has the inode name,
	// and the device compile of that IR stays here.
	if ir := runInDir(t, bad); !ompinfo.InodeNamed(ir) {
		t.Fatal("the local host IR has no inode-named kernel")
	}
	dev = ompFrontEnd(t, clang, src2, filepath.Join(out, "inode.o"), filepath.Join(out, "inode.bc"), "-I", inc)
	info, err = run(dev)
	if !errors.Is(err, actions.ErrRunLocally) || !strings.Contains(err.Error(), "host IR") {
		t.Fatalf("device compile of an inode-named host IR: Run = %v, want ErrRunLocally (host IR)", err)
	}
	if info.Worker != "" || info.BytesUp != 0 {
		t.Errorf("the device compile was sent: %+v", info)
	}
	if _, err := os.Stat(filepath.Join(out, "inode.o")); err == nil {
		t.Error("inode.o was written")
	}
}

// TestOpenMPComputedInclude: an OpenMP front end whose header is named by
// a macro (found by clang's own preprocessor pass, which lists it by its
// name relative to -working-directory, not to offcc's directory) runs on
// a worker and writes the local run's host IR.
func TestOpenMPComputedInclude(t *testing.T) {
	_, clang, c := clientWithWorker(t)
	src, out := t.TempDir(), t.TempDir()
	ompSources(t, src, "")
	os.WriteFile(filepath.Join(src, "main.c"), []byte("#define K \"k.h\"\n#include K\nint main(void) { return k(); }\n"), 0o644)
	local := runInDir(t, ompFrontEnd(t, clang, src, filepath.Join(out, "local.bc"), ""))
	a := ompFrontEnd(t, clang, src, filepath.Join(out, "remote.bc"), "")
	if _, ok, why := c.includes.Scan(a.Command[1:], src); ok || !strings.Contains(why, "computed") {
		t.Fatalf("the include scanner resolved a computed include (ok=%v, %q)", ok, why)
	}
	var stderr bytes.Buffer
	info, err := c.Run(context.Background(), a, new(bytes.Buffer), &stderr)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	got, _ := os.ReadFile(filepath.Join(out, "remote.bc"))
	if info.Worker != "w1" || !bytes.Equal(got, local) {
		t.Errorf("the worker's (%q) host IR differs from the local one", info.Worker)
	}
}
