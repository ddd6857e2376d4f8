package farm

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/internal/llvmtest"
)

// cudaJob returns a job of the CUDA tool with args, shipping the files
// (by path; an argument that differs goes as "PATH=ARG") and writing
// outputs.
func cudaJob(tool string, files, outputs []string, args ...string) *Job {
	j := &Job{Version: JobVersion, Tool: tool, Dir: "/src", Args: args, Outputs: outputs}
	for _, f := range files {
		p, arg, _ := strings.Cut(f, "=")
		j.Files = append(j.Files, File{Path: p, Arg: arg})
	}
	return j
}

// TestCheckCUDA: the ptxas, fatbinary and nvlink command lines clang 22
// gives (clang -### of CUDA and OpenMP sm_80 compiles, clang-linker-
// wrapper's and clang-nvlink-wrapper's --dry-run) run on workers; what an
// attacker holding a client key could send is refused, each with a
// reason.
func TestCheckCUDA(t *testing.T) {
	ptxas := func(args ...string) *Job {
		return cudaJob("ptxas", []string{"/tmp/k-sm_80.s"}, []string{"/tmp/k-sm_80.o"},
			append([]string{"-m64", "-O3", "--gpu-name", "sm_80", "--output-file", "/tmp/k-sm_80.o", "/tmp/k-sm_80.s"}, args...)...)
	}
	fatbin := func(args ...string) *Job {
		return cudaJob("fatbinary", []string{"/tmp/a.o", "/tmp/b.o"}, []string{"/tmp/k.fatbin"},
			append([]string{"-64", "--create", "/tmp/k.fatbin", "--image3=kind=elf,sm=52,file=/tmp/a.o"}, args...)...)
	}
	nvlink := func(args ...string) *Job {
		return cudaJob("nvlink", []string{"/tmp/r.cubin"}, []string{"out.cubin"},
			append([]string{"-o", "out.cubin", "-arch", "sm_80"}, args...)...)
	}
	for _, tc := range []struct {
		name string
		job  *Job
		want string // "" runs; else a substring of the refusal
	}{
		// What clang 22 runs.
		{"ptxas of a CUDA compile", ptxas(), ""},
		{"ptxas -O0 (no -O given)", cudaJob("ptxas", []string{"/tmp/k.s"}, []string{"/tmp/k.o"},
			"-m64", "-O0", "--gpu-name", "sm_52", "--output-file", "/tmp/k.o", "/tmp/k.s"), ""},
		{"ptxas of OpenMP (-c last)", ptxas("-c"), ""},
		{"ptxas with debug info", cudaJob("ptxas", []string{"/tmp/k.s"}, []string{"/tmp/k.o"},
			"-m64", "-g", "--dont-merge-basicblocks", "--return-at-end", "-v", "--gpu-name", "sm_90a", "--output-file", "/tmp/k.o", "/tmp/k.s"), ""},
		{"ptxas -lineinfo, -Xcuda-ptxas --maxrregcount", ptxas("-lineinfo", "--maxrregcount", "32", "--warn-on-spills", "-fmad", "false"), ""},
		{"ptxas with relative names (-save-temps)", cudaJob("ptxas", []string{"/src/k-sm_80.s=k-sm_80.s"}, []string{"k-sm_80.o"},
			"-m64", "-O3", "--gpu-name", "sm_80", "--output-file", "k-sm_80.o", "k-sm_80.s"), ""},
		{"fatbinary of a CUDA compile", fatbin("--image3=kind=elf,sm=80,file=/tmp/b.o"), ""},
		{"fatbinary with PTX and -g", fatbin("-g", "--image3=kind=ptx,sm=80,file=/tmp/b.o"), ""},
		{"fatbinary --image (older spelling)", fatbin("--image=profile=sm_80,file=/tmp/b.o", "--image=profile=compute_80,file=/tmp/b.o"), ""},
		{"nvlink of clang-nvlink-wrapper", nvlink("-g", "-L", "/usr/lib/llvm-22/lib", "/tmp/r.cubin"), ""},

		// An attacker's.
		{"a tool not in the allow set", cudaJob("cuobjdump", []string{"/tmp/k.o"}, nil, "/tmp/k.o"), "not one a worker runs"},
		{"nvcc", cudaJob("nvcc", nil, []string{"/tmp/x"}, "-o", "/tmp/x"), "not one a worker runs"},
		{"ptxas --options-file", ptxas("--options-file", "/etc/passwd"), "reads options from a file"},
		{"ptxas -optf", ptxas("-optf", "/tmp/k-sm_80.s"), "reads options from a file"},
		{"ptxas -optf joined", ptxas("-optf=/etc/passwd"), "reads options from a file"},
		{"ptxas --input-as-string", ptxas("--input-as-string", ".version 7.8"), "not a file the job ships"},
		{"ptxas reads /etc/passwd", ptxas("/etc/passwd"), "not a file the job ships"},
		{"ptxas climbs", cudaJob("ptxas", []string{"/src/x.s=../../etc/x.s"}, []string{"/tmp/k.o"},
			"-m64", "--gpu-name", "sm_80", "--output-file", "/tmp/k.o", "../../etc/x.s"), "leaves the job's directory"},
		{"ptxas -o /tmp/x", ptxas("-o", "/tmp/x"), "outputs go as --output-file OUT"},
		{"ptxas a second output", ptxas("--output-file", "/tmp/x"), "given twice"},
		{"ptxas output elsewhere", cudaJob("ptxas", []string{"/tmp/k.s"}, []string{"/tmp/k.o"},
			"--gpu-name", "sm_80", "--output-file", "/etc/cron.d/x", "/tmp/k.s"), "names no output of the job"},
		{"ptxas no output (writes elf.o)", cudaJob("ptxas", []string{"/tmp/k.s"}, []string{"/tmp/k.o"},
			"--gpu-name", "sm_80", "/tmp/k.s"), "without --output-file"},
		{"ptxas joined output", ptxas("--output-file=/tmp/x"), "outputs go as --output-file OUT"},
		{"ptxas an option clang never passes", ptxas("--compile-as-tools-patch"), "not one clang passes"},
		{"ptxas joined value", ptxas("--gpu-name=sm_80"), "only as --gpu-name VALUE"},
		{"ptxas a path for a GPU name", ptxas("--gpu-name", "/etc/passwd"), "not a GPU name"},
		{"ptxas a value missing at the end", ptxas("--maxrregcount"), "lacks its value"},
		{"ptxas response file", ptxas("@/etc/passwd"), "response file"},
		{"fatbinary image of /etc/passwd", fatbin("--image=profile=sm_80,file=/etc/passwd"), "not a file the job ships"},
		{"fatbinary image3 of /etc/shadow", fatbin("--image3=kind=elf,sm=80,file=/etc/shadow"), "not a file the job ships"},
		{"fatbinary image climbs", fatbin("--image3=kind=elf,sm=80,file=../../etc/passwd"), "leaves the job's directory"},
		{"fatbinary image with two files", fatbin("--image3=kind=elf,sm=80,file=/tmp/a.o,file=/etc/passwd"), "not one key"},
		{"fatbinary image with another key", fatbin("--image3=kind=elf,sm=80,file=/tmp/a.o,extra=/etc/passwd"), "not one key"},
		{"fatbinary image without a file", fatbin("--image3=kind=elf,sm=80"), "no file="},
		{"fatbinary image of another kind", fatbin("--image3=kind=/etc/passwd,sm=80,file=/tmp/a.o"), "kind= is elf or ptx"},
		{"fatbinary bad sm", fatbin("--image3=kind=elf,sm=/x,file=/tmp/a.o"), "sm= is a number"},
		{"fatbinary bad profile", fatbin("--image=profile=../x,file=/tmp/a.o"), "profile= is a GPU name"},
		{"fatbinary --embedded-fatbin", fatbin("--embedded-fatbin", "/etc/passwd"), "reads a file"},
		{"fatbinary -optf", fatbin("-optf", "/etc/passwd"), "reads options from a file"},
		{"fatbinary --create elsewhere", fatbin("--create", "/tmp/x"), "given twice"},
		{"fatbinary -o", fatbin("-o", "/tmp/x"), "outputs go as --create OUT"},
		{"fatbinary a bare input", fatbin("/tmp/a.o"), "inputs go in --image3= specs"},
		{"fatbinary --ident", fatbin("--ident", "x"), "names the fat binary otherwise"},
		{"nvlink -l", nvlink("-l", "cudadevrt", "/tmp/r.cubin"), "reads a library"},
		{"nvlink --emit-ptx", nvlink("--emit-ptx", "/tmp/x.ptx", "/tmp/r.cubin"), "writes a file"},
		{"nvlink --time", nvlink("--time", "/tmp/t.csv", "/tmp/r.cubin"), "writes a file"},
		{"nvlink --register-link-binaries", nvlink("--register-link-binaries", "/tmp/r.h", "/tmp/r.cubin"), "writes a file"},
		{"nvlink -Xptxas", nvlink("-Xptxas", "-optf=/etc/passwd", "/tmp/r.cubin"), "options for another tool"},
		{"nvlink -L relative", nvlink("-L", "../lib", "/tmp/r.cubin"), "not an absolute clean directory"},
		{"nvlink unshipped input", nvlink("/lib/x.cubin"), "not a file the job ships"},
		{"nvlink --output-file", nvlink("--output-file", "/tmp/x", "/tmp/r.cubin"), "outputs go as -o OUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, why := check22(tc.job)
			switch {
			case tc.want == "" && why != "":
				t.Errorf("refused: %s", why)
			case tc.want != "" && why == "":
				t.Errorf("allowed, want a refusal saying %q", tc.want)
			case tc.want != "" && !strings.Contains(why, tc.want):
				t.Errorf("refused with %q, want %q", why, tc.want)
			case tc.want == "" && p == nil:
				t.Errorf("no plan")
			}
		})
	}
}

// TestCUDACommand: the worker runs the client's command line with its
// own copies of the inputs and its own outputs, word for word otherwise,
// whatever the order of an image spec's keys.
func TestCUDACommand(t *testing.T) {
	j := cudaJob("fatbinary", []string{"/tmp/a.o", "/src/b.o=b.o"}, []string{"/tmp/k.fatbin"},
		"-64", "--create", "/tmp/k.fatbin", "--image3=kind=elf,sm=52,file=/tmp/a.o", "--image=file=b.o,profile=sm_80")
	p, why := check22(j)
	if why != "" {
		t.Fatal(why)
	}
	got := p.command(map[string]string{"/tmp/k.fatbin": "/w/o0-k.fatbin"}, map[string]string{"/tmp/a.o": "/in/f0-a.o", "b.o": "/in/f1-b.o"})
	want := []string{"-64", "--create", "/w/o0-k.fatbin", "--image3=kind=elf,sm=52,file=/in/f0-a.o", "--image=file=/in/f1-b.o,profile=sm_80"}
	if !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
	j = cudaJob("ptxas", []string{"/tmp/k.s"}, []string{"/tmp/k.o"}, "-m64", "--gpu-name", "sm_80", "--output-file", "/tmp/k.o", "/tmp/k.s", "-c")
	if p, why = check22(j); why != "" {
		t.Fatal(why)
	}
	got = p.command(map[string]string{"/tmp/k.o": "/w/o0-k.o"}, map[string]string{"/tmp/k.s": "/in/f0-k.s"})
	want = []string{"-m64", "--gpu-name", "sm_80", "--output-file", "/w/o0-k.o", "/in/f0-k.s", "-c"}
	if !slices.Equal(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
}

// fakeCUDAKit makes a directory with a ptxas, fatbinary and nvlink that
// are copies of prog (other bytes than NVIDIA's: another toolkit).
func fakeCUDAKit(t *testing.T, prog string) string {
	t.Helper()
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tool := range cudaTools {
		if err := os.WriteFile(filepath.Join(dir, tool), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCUDAToolchainIdentity: a CUDA toolkit's identity is that of its
// three tools' bytes, not of its directory, never an LLVM toolchain's.
func TestCUDAToolchainIdentity(t *testing.T) {
	a, b := fakeCUDAKit(t, "/bin/true"), fakeCUDAKit(t, "/bin/true")
	c := fakeCUDAKit(t, "/bin/false")
	ida, tca := cudaToolchainOf(a)
	_, tcb := cudaToolchainOf(b)
	_, tcc := cudaToolchainOf(c)
	if tca != tcb || tca == tcc || !strings.HasPrefix(tca, cudaPrefix) || len(ida) != 3 {
		t.Errorf("identities %s, %s (the same tools) and %s (others)", tca, tcb, tcc)
	}
	os.Remove(filepath.Join(b, "nvlink"))
	if _, tcb := cudaToolchainOf(b); tcb == tca {
		t.Errorf("a toolkit without nvlink has the identity of one with it")
	}
}

// TestAcceptsCUDA: the client sends a ptxas, fatbinary or nvlink job only
// once it knows its toolkit's identity and a live worker has that
// toolkit, and only as the action its tool runs.
func TestAcceptsCUDA(t *testing.T) {
	c := &Client{kitsLive: map[string]bool{}, kitsUsed: map[string]bool{}, pathKit: func() string { return "" }}
	kit := fakeCUDAKit(t, "/bin/true")
	ptxas := &actions.Action{Kind: actions.DeviceAssemble, Offload: actions.CUDA,
		Command: []string{filepath.Join(kit, "ptxas"), "-m64", "--gpu-name", "sm_80", "--output-file", "/tmp/k.o", "/tmp/k.s"},
		Inputs:  []*actions.Artifact{actions.NewArtifact("/tmp/k.s")}, Outputs: []*actions.Artifact{actions.NewArtifact("/tmp/k.o")}}
	k := c.cudaKit(kit)
	<-k.done
	if c.Accepts(ptxas) {
		t.Errorf("accepted with no worker of its toolkit")
	}
	c.kitsLive[k.toolchain] = true
	if !c.Accepts(ptxas) {
		t.Errorf("not accepted with a worker of its toolkit")
	}
	if !c.kitsUsed[k.toolchain] {
		t.Errorf("the toolkit is not counted as used")
	}
	other := *ptxas
	other.Command = slices.Clone(ptxas.Command)
	other.Command[0] = filepath.Join(fakeCUDAKit(t, "/bin/false"), "ptxas")
	c.cudaKit(filepath.Dir(other.Command[0]))
	if c.Accepts(&other) {
		t.Errorf("accepted a ptxas of another toolkit")
	}
	wrong := *ptxas
	wrong.Kind = actions.FatBinary
	if c.Accepts(&wrong) {
		t.Errorf("accepted ptxas as a fat binary action")
	}
	relative := *ptxas
	relative.Command = append([]string{"ptxas"}, ptxas.Command[1:]...)
	if c.Accepts(&relative) {
		t.Errorf("accepted a ptxas found on PATH")
	}
}

// clangJobs returns the commands clang -### prints for args, run in dir.
func clangJobs(t *testing.T, clang, dir string, args ...string) [][]string {
	t.Helper()
	cmd := exec.Command(clang, append([]string{"-###"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang -###: %v\n%s", err, out)
	}
	var jobs [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, ` "`) {
			continue
		}
		var argv []string
		var cur strings.Builder
		in, esc := false, false
		for _, r := range strings.TrimSpace(line) {
			switch {
			case esc:
				cur.WriteRune(r)
				esc = false
			case in && r == '\\':
				esc = true
			case r == '"':
				if in {
					argv = append(argv, cur.String())
					cur.Reset()
				}
				in = !in
			case in:
				cur.WriteRune(r)
			}
		}
		jobs = append(jobs, argv)
	}
	return jobs
}

// cudaSandbox returns the real sandbox (bubblewrap and Landlock, as
// offcc worker runs it) for clang, lld and the CUDA toolkit kit, or
// unconfined where bubblewrap is not installed or cannot run here.
func cudaSandbox(t *testing.T, kit llvmtest.CUDAToolkit) JobSandbox {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Logf("bubblewrap is not installed: jobs run unconfined")
		return unconfined{}
	}
	e := newSandboxEnv(t)
	opt := e.options()
	opt.Tools = append(opt.Tools, kit.Ptxas, kit.Fatbinary, kit.Nvlink)
	sb, err := NewSandbox(opt)
	if err != nil {
		t.Logf("no sandbox here (%v): jobs run unconfined", err)
		return unconfined{}
	}
	t.Logf("jobs run confined by %s", strings.Join(sb.Layers(), " and "))
	return sb
}

// ompSource is an OpenMP TU with a target region, for sm_80.
const ompSource = `#include <math.h>
void saxpy(float *x, float *y, float a, int n) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
  for (int i = 0; i < n; i++)
    y[i] = a * sinf(x[i]) + y[i];
}
`

// TestCUDAFarm: a CUDA compile for sm_52 and sm_80
// (testdata/cuda/toolkit/kernels.cu, with the toolkit's headers) and an
// OpenMP one for sm_80 whose ptxas and fatbinary jobs, as clang 22 gives
// them, all run on the one worker with this CUDA toolkit, in the sandbox
// where it works: their outputs and the objects are a local build's, byte
// for byte. A worker with
// another toolkit, and one without, get none of them. It fails rather
// than skips without redis-server or the toolkit under
// OFFCC_REQUIRE_REDIS=1 and OFFCC_REQUIRE_CUDA=1.
func TestCUDAFarm(t *testing.T) {
	kit := llvmtest.CUDA(t)
	srv, store, clang := farmSetup(t)
	startWorkerWith(t, srv, WorkerOptions{Name: "other-kit", Clang: clang, Slots: 1, CUDA: fakeCUDAKit(t, "/bin/true")})
	startWorkerWith(t, srv, WorkerOptions{Name: "no-kit", Clang: clang, Slots: 1, NoCUDA: true})
	w := startWorkerWith(t, srv, WorkerOptions{Name: "w1", Clang: clang, Slots: 1, Sandbox: cudaSandbox(t, kit), Dir: sandboxTempDir(t)})
	if w.cuda == "" || w.tools["ptxas"] != kit.Ptxas {
		t.Fatalf("worker w1 runs no CUDA toolkit (%q, ptxas %q)", w.cuda, w.tools["ptxas"])
	}
	c := newTestClient(t, store, ClientOptions{Clang: clang, TempDir: t.TempDir()})
	waitSlots(t, c, 3)

	ctx := context.Background()
	cudaSrc, err := os.ReadFile("../testdata/cuda/toolkit/kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	var dir string // the last build's
	for _, b := range []struct {
		name, file, src string
		args            []string
		want            map[string]int // jobs on the worker, by tool
	}{
		{"cuda", "kernels.cu", string(cudaSrc),
			[]string{"-x", "cuda", "--cuda-gpu-arch=sm_52", "--cuda-gpu-arch=sm_80", "-O2"},
			map[string]int{"ptxas": 2, "fatbinary": 1}},
		{"openmp", "omp.c", ompSource,
			[]string{"-fopenmp", "--offload-arch=sm_80", "-nogpulib", "-O2"},
			map[string]int{"ptxas": 1}},
	} {
		dir = t.TempDir()
		os.WriteFile(filepath.Join(dir, b.file), []byte(b.src), 0o644)
		args := append(b.args, "-c", b.file)
		ref := exec.Command(clang, append(args, "-o", "ref.o")...)
		ref.Dir = dir
		if out, err := ref.CombinedOutput(); err != nil {
			t.Fatalf("%s: local build: %v\n%s", b.name, err, out)
		}
		// The build through the farm: clang's jobs, the CUDA tools'
		// sent, the rest run here. Each output of a remote job is also
		// made locally, to compare.
		remote := map[string]int{}
		for _, argv := range clangJobs(t, clang, dir, append(args, "-o", "k.o")...) {
			tool := filepath.Base(argv[0])
			if !isCUDATool(tool) {
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %s: %v\n%s", b.name, tool, err, out)
				}
				continue
			}
			a := cudaAction(t, argv)
			for deadline := time.Now().Add(5 * time.Second); !c.Accepts(a); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the client does not send %s jobs", b.name, tool)
				}
			}
			var stdout, stderr bytes.Buffer
			info, err := c.Run(ctx, a, &stdout, &stderr)
			if err != nil {
				t.Fatalf("%s: %s: %v\n%s", b.name, tool, err, stderr.Bytes())
			}
			if info.Worker != "w1" {
				t.Errorf("%s: %s ran on %q, want w1", b.name, tool, info.Worker)
			}
			t.Logf("%s: %s on %s: run %v, queue %v, transfer %v", b.name, tool, info.Worker, info.Run, info.Queue, info.Transfer)
			remote[tool]++
			out := a.Outputs[0].Path
			got, _ := os.ReadFile(out)
			os.Rename(out, out+".farm")
			runLocally(t, a)
			want, _ := os.ReadFile(out)
			if len(got) == 0 || !bytes.Equal(got, want) {
				t.Errorf("%s: %s: the output from the worker (%d bytes) is not the local run's (%d bytes)", b.name, tool, len(got), len(want))
			}
		}
		if !maps.Equal(remote, b.want) {
			t.Errorf("%s: jobs on the worker: %v, want %v", b.name, remote, b.want)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "k.o"))
		want, _ := os.ReadFile(filepath.Join(dir, "ref.o"))
		if len(got) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: the object built through the farm (%d bytes) is not the local build's (%d bytes)", b.name, len(got), len(want))
		}
	}
	// The registry says what each worker did within a second.
	var st *Status
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st, err = GetStatus(ctx, store); err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(st.Workers, func(wi WorkerInfo) bool { return wi.Name == "w1" }); i >= 0 && st.Workers[i].Done == 4 || time.Now().After(deadline) {
			break
		}
	}
	for _, wi := range st.Workers {
		switch {
		case wi.Name == "w1" && (wi.Done != 4 || wi.CUDA != w.cuda):
			t.Errorf("worker w1: %d jobs done, CUDA %q; want 4, %q", wi.Done, wi.CUDA, w.cuda)
		case wi.Name != "w1" && wi.Done+wi.Refused+wi.Failed != 0:
			t.Errorf("worker %s (CUDA %q) got jobs", wi.Name, wi.CUDA)
		}
	}

	// An attacker's jobs, signed by a trusted client, sent past the
	// client's own check: the worker refuses each and says why.
	ptx := filepath.Join(dir, "k-sm_80.s")
	os.WriteFile(ptx, []byte(".version 7.0\n.target sm_80\n.address_size 64\n"), 0o644)
	cubin := filepath.Join(dir, "k-sm_80.cubin")
	ptxasOf := &actions.Action{Kind: actions.DeviceAssemble, Offload: actions.CUDA,
		Command: []string{kit.Ptxas, "-m64", "-O3", "--gpu-name", "sm_80", "--output-file", cubin, ptx},
		Inputs:  []*actions.Artifact{actions.NewArtifact(ptx)}, Outputs: []*actions.Artifact{actions.NewArtifact(cubin)}}
	for _, tc := range []struct {
		name  string
		craft func(j *Job)
		want  string // "" runs; else substrings of the refusal, one of which it has ('|' between them)
	}{
		{"an honest job", func(j *Job) {}, ""},
		{"-o /tmp/x", func(j *Job) { j.Args = append(j.Args, "-o", "/tmp/x") }, "outputs go as --output-file OUT"},
		{"--options-file", func(j *Job) { j.Args = append(j.Args, "--options-file", "/etc/passwd") }, "reads options from a file"},
		{"-optf", func(j *Job) { j.Args = append(j.Args, "-optf", ptx) }, "reads options from a file"},
		{"an input not shipped", func(j *Job) { j.Args[len(j.Args)-1] = "/etc/passwd" }, "not a file the job ships"},
		{"fatbinary of /etc/passwd", func(j *Job) {
			j.Tool, j.ToolID = "fatbinary", w.toolIDs["fatbinary"]
			j.Args = []string{"-64", "--create", cubin, "--image=profile=sm_80,file=/etc/passwd"}
		}, "not a file the job ships"},
		{"a tool not in the allow set", func(j *Job) { j.Tool = "cuobjdump" }, "not one a worker runs"},
		// Any worker of the LLVM toolchain may take it: one with
		// another CUDA toolkit, or none.
		{"ptxas on the LLVM stream", func(j *Job) { j.Toolchain = w.toolchain }, "from the stream of " + w.toolchain + "; this worker runs ptxas with cuda-|this worker has no CUDA toolkit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, blobs, err := c.job(ctx, ptxasOf)
			if err != nil {
				t.Fatal(err)
			}
			j.Args = slices.Clone(j.Args) // not the action's
			tc.craft(j)
			res := putJob(t, store, j, blobs)
			switch {
			case tc.want == "" && (res.Refused != "" || res.Code != 0):
				t.Errorf("refused %q, code %d: %s", res.Refused, res.Code, res.Stderr)
			case tc.want != "" && !slices.ContainsFunc(strings.Split(tc.want, "|"), func(w string) bool { return strings.Contains(res.Refused, w) }):
				t.Errorf("refused %q (code %d), want a refusal saying %q", res.Refused, res.Code, tc.want)
			}
		})
	}
}

// cudaAction returns the action of a ptxas or fatbinary command of clang
// -###, as offcc's driver plans it.
func cudaAction(t *testing.T, argv []string) *actions.Action {
	t.Helper()
	a := &actions.Action{Offload: actions.CUDA, Command: argv}
	for i := 1; i < len(argv); i++ {
		switch v := argv[i]; {
		case v == "--output-file" || v == "--create":
			a.Outputs = append(a.Outputs, actions.NewArtifact(argv[i+1]))
			i++
		case v == "--gpu-name":
			i++
		case strings.HasPrefix(v, "--image3="):
			_, file, _ := strings.Cut(v, ",file=")
			a.Inputs = append(a.Inputs, actions.NewArtifact(file))
		case !strings.HasPrefix(v, "-"):
			a.Inputs = append(a.Inputs, actions.NewArtifact(v))
		}
	}
	a.Kind = cudaKinds[filepath.Base(argv[0])]
	if len(a.Inputs) == 0 || len(a.Outputs) != 1 {
		t.Fatalf("cannot read the job %q", argv)
	}
	return a
}
