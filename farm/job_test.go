package farm

import (
	"strings"
	"testing"
)

// TestCheck: what a worker runs and what it refuses, by command line.
func TestCheck(t *testing.T) {
	cc1 := func(args ...string) *Job {
		return &Job{Version: 1, Tool: "clang", Dir: "/src",
			Args:    append([]string{"-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-obj", "-o", "/tmp/x.o"}, args...),
			Files:   []File{{Path: "/src/k.hip"}, {Path: "/usr/include/stdio.h"}},
			Outputs: []string{"/tmp/x.o", "/tmp/x.d"}}
	}
	lld := func(args ...string) *Job {
		return &Job{Version: 1, Tool: "lld", Dir: "/src",
			Args:    append([]string{"-flavor", "gnu", "-m", "elf64_amdgpu", "-shared", "-o", "/tmp/x.out"}, args...),
			Files:   []File{{Path: "/tmp/a.o"}},
			Outputs: []string{"/tmp/x.out"}}
	}
	for _, tc := range []struct {
		name string
		job  *Job
		want string // "" runs; else a substring of the refusal
	}{
		{"device compile", cc1("-main-file-name", "k.hip", "-internal-isystem", "/usr/lib/llvm-22/lib/clang/22/include",
			"-fdebug-compilation-dir=/src", "-dependency-file", "/tmp/x.d", "-MT", "/tmp/x.o", "-x", "hip", "k.hip"), ""},
		{"absolute input", cc1("-x", "hip", "/src/k.hip"), ""},
		{"backend with an -I dir", cc1("-I/opt/inc", "-x", "ir", "/src/k.hip"), ""},
		{"device link", lld("/tmp/a.o", "-plugin-opt=mcpu=gfx90a", "-plugin-opt=-amdgpu-internalize-symbols"), ""},
		{"another tool", &Job{Tool: "sh", Dir: "/", Args: []string{"-c", "true"}}, "not one a worker runs"},
		{"clang as a driver", &Job{Tool: "clang", Dir: "/", Args: []string{"-c", "x.c"}}, "only as clang -cc1"},
		{"an unshipped file", cc1("-x", "c", "/etc/passwd"), "does not ship"},
		{"an unshipped joined file", cc1("-fprofile-instrument-use-path=/etc/x.profdata"), "does not ship"},
		{"-load", cc1("-load", "/tmp/p.so"), "not run on workers"},
		{"-fpass-plugin", cc1("-fpass-plugin=/tmp/p.so"), "not run on workers"},
		{"-mllvm -load", cc1("-mllvm", "-load=/tmp/p.so"), "/tmp/p.so"},
		{"-mllvm -x-load", cc1("-mllvm", "-some-load-passes=/tmp/p.so"), "may load code"},
		{"-plugin", cc1("-plugin", "x"), "not run on workers"},
		{"an overlay of its own", cc1("-ivfsoverlay", "/src/o.yaml"), "not run on workers"},
		{"a time trace beside the output", cc1("-ftime-trace=/tmp/t.json"), "not run on workers"},
		{"-o elsewhere", cc1("-o", "/etc/cron.d/x"), "names no output"},
		{"lld plugin", lld("/tmp/a.o", "--load-pass-plugin=/tmp/p.so"), "not run on workers"},
		{"lld plugin-opt load", lld("/tmp/a.o", "-plugin-opt=-load=/tmp/p.so"), "may load code"},
		{"lld library path", lld("/tmp/a.o", "-L/usr/lib"), "not run on workers"},
		{"lld linker script", lld("/tmp/a.o", "-T", "/tmp/s.ld"), "not run on workers"},
		{"lld leaves its directory", lld("/tmp/a.o", "../../etc/x.o"), "leaves the job's directory"},
		{"lld unshipped input", lld("/tmp/a.o", "/lib/x.o"), "does not ship"},
		{"response file", cc1("@/etc/passwd"), "response file"},
		{"lld response file", lld("/tmp/a.o", "@/etc/passwd"), "response file"},
		{"joined output", cc1("-o/etc/cron.d/x"), "outputs go as -o PATH"},
		{"joined relative output", cc1("-o.bashrc"), "outputs go as -o PATH"},
		{"lld joined output", lld("/tmp/a.o", "-o/tmp/evil"), "outputs go as -o PATH"},
		{"lld --output", lld("/tmp/a.o", "--output=/tmp/evil"), "not run on workers"},
		{"serialized diagnostics", cc1("-serialize-diagnostic-file", "/tmp/x.dia"), "not run on workers"},
		{"object file name", cc1("-object-file-name=x.o", "-x", "c", "/src/k.hip"), ""},
		{"relative directory", &Job{Tool: "clang", Dir: "src", Args: []string{"-cc1"}}, "not absolute"},
		{"unclean file", &Job{Tool: "clang", Dir: "/", Args: []string{"-cc1"}, Files: []File{{Path: "/a/../b"}}}, "clean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := check(tc.job)
			if tc.want == "" && got != "" {
				t.Fatalf("refused: %s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("check = %q, want a refusal with %q", got, tc.want)
			}
		})
	}
}

// FuzzCheck: check and decodeJob never panic, whatever the record.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"v":1,"tool":"clang","dir":"/","args":["-cc1","-o"],"outputs":["x"]}`))
	f.Add([]byte(`{"v":1,"tool":"lld","dir":"/","args":["-o","/x","-L"],"files":[{"path":"/a","arg":"a"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := decodeJob(data)
		if err != nil {
			return
		}
		check(j)
	})
}
