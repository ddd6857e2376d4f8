package farm

import (
	"strings"
	"testing"

	"github.com/offcc/offcc/options"
)

// TestCheck: what a worker runs and what it refuses, by command line.
func TestCheck(t *testing.T) {
	cc1 := func(args ...string) *Job {
		return &Job{Version: JobVersion, Tool: "clang", Dir: "/src",
			Args:    append([]string{"-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-obj", "-o", "/tmp/x.o"}, args...),
			Files:   []File{{Path: "/src/k.hip"}, {Path: "/usr/include/stdio.h"}},
			Outputs: []string{"/tmp/x.o", "/tmp/x.d"}}
	}
	lld := func(args ...string) *Job {
		return &Job{Version: JobVersion, Tool: "lld", Dir: "/src",
			Args:    append([]string{"-m", "elf64_amdgpu", "-shared", "-o", "/tmp/x.out"}, args...),
			Files:   []File{{Path: "/tmp/a.o"}},
			Outputs: []string{"/tmp/x.out"}}
	}
	// flavored is an lld job with exactly these arguments.
	flavored := func(args ...string) *Job {
		j := lld()
		j.Args = args
		return j
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
		{"relative directory", &Job{Tool: "clang", Dir: "src", Args: []string{"-cc1"}}, "not an absolute"},
		{"unclean directory", &Job{Tool: "clang", Dir: "/src/../etc", Args: []string{"-cc1"}}, "not an absolute clean path"},

		// Every spelling family of an option, as clang's and lld's tables
		// have it.
		{"-isystemDIR", cc1("-isystem/opt/inc", "-x", "c", "k.hip"), ""},
		{"-isystem DIR", cc1("-isystem", "/opt/inc", "-x", "c", "k.hip"), ""},
		{"-objcxx-isystem DIR", cc1("-objcxx-isystem", "/opt/inc", "-x", "objective-c++", "k.hip"), ""},
		{"-internal-externc-isystem DIR", cc1("-internal-externc-isystem", "/usr/include", "-x", "c", "k.hip"), ""},
		{"-include FILE shipped", cc1("-include", "/usr/include/stdio.h", "-x", "c", "k.hip"), ""},
		{"-includeFILE unshipped", cc1("-include/etc/passwd", "-x", "c", "k.hip"), "-include/etc/passwd names a file the job does not ship"},
		{"-include FILE unshipped", cc1("-include", "/etc/passwd", "-x", "c", "k.hip"), "-include /etc/passwd names a file"},
		{"--include FILE", cc1("--include", "/etc/passwd", "-x", "c", "k.hip"), "does not ship"},
		{"cc1 option without -Xclang", cc1("-disable-llvm-passes", "-x", "c", "k.hip"), ""},
		{"-Xclang is a driver option", cc1("-Xclang", "-load", "-Xclang", "/tmp/p.so"), "clang -cc1 has no option -Xclang"},
		{"a driver option", cc1("-c", "k.hip"), "clang -cc1 has no option -c"},
		{"-working-directory=", cc1("-working-directory=/etc"), "not run on workers"},
		{"-plugin-arg-", cc1("-plugin-arg-foo", "bar"), "not run on workers (loads a plugin)"},
		{"-dependency-file elsewhere", cc1("-dependency-file", "/etc/x.d"), "-dependency-file names no output"},
		{"unshipped /dev/null", cc1("-fembed-offload-object=/dev/null"), "does not ship"},
		{"a search directory's name", cc1("-fdebug-compilation-dir", "/elsewhere", "-resource-dir", "/opt/llvm"), ""},
		{"lld -script=", lld("/tmp/a.o", "-script=x.ld"), "linker script"},
		{"lld --script=", lld("/tmp/a.o", "--script=x.ld"), "linker script"},
		{"lld --script", lld("/tmp/a.o", "--script", "x.ld"), "linker script"},
		{"lld -Tx", lld("/tmp/a.o", "-Tx.ld"), "linker script"},
		{"lld --error-handling-script=", lld("/tmp/a.o", "--error-handling-script=x.sh"), "runs a program"},
		{"lld --error-handling-script", lld("/tmp/a.o", "--error-handling-script", "x.sh"), "runs a program"},
		{"lld -plugin-opt=obj-path=", lld("/tmp/a.o", "-plugin-opt=obj-path=/tmp/x.o"), "not run on workers"},
		{"lld --plugin-opt=obj-path=", lld("/tmp/a.o", "--plugin-opt=obj-path=/tmp/x.o"), "not run on workers"},
		{"lld -plugin-opt obj-path=", lld("/tmp/a.o", "-plugin-opt", "obj-path=/tmp/x.o"), "not run on workers"},
		{"lld -plugin-opt -load", lld("/tmp/a.o", "-plugin-opt", "-load=/tmp/p.so"), "may load code"},
		{"lld -plugin-opt mcpu", lld("/tmp/a.o", "-plugin-opt", "mcpu=gfx90a", "-plugin-opt=O3"), ""},
		{"lld --version-script=", lld("/tmp/a.o", "--version-script=/tmp/v.map"), "not run on workers"},
		{"lld --version-script", lld("/tmp/a.o", "--version-script", "/tmp/v.map"), "not run on workers"},
		{"lld -L DIR", lld("/tmp/a.o", "-L", "/usr/lib"), "not run on workers"},
		{"lld -lNAME", lld("/tmp/a.o", "-lc"), "not run on workers"},
		{"lld --output PATH", lld("/tmp/a.o", "--output", "/tmp/x.out"), "outputs go as -o PATH"},
		{"lld --Map=", lld("/tmp/a.o", "--Map=/tmp/x.map"), "not run on workers"},
		{"lld -mllvm -load", lld("/tmp/a.o", "-mllvm", "-load=/tmp/p.so"), "may load code"},
		{"lld unknown option", lld("/tmp/a.o", "--bogus"), "ld.lld has no option --bogus"},
		{"lld -- is no option", lld("--", "/tmp/a.o"), "ld.lld has no option --"},

		// An option at the end without its value would take the
		// -ivfsoverlay the worker appends: refused.
		{"trailing -include", cc1("-x", "c", "k.hip", "-include"), "argument to '-include' is missing"},
		{"trailing -o", cc1("-x", "c", "k.hip", "-o"), "argument to '-o' is missing"},
		{"trailing -main-file-name", cc1("-x", "c", "k.hip", "-main-file-name"), "is missing"},
		{"trailing -plugin-arg-", cc1("-x", "c", "k.hip", "-plugin-arg-foo"), "is missing"},
		{"lld trailing -o", lld("/tmp/a.o", "-o"), "argument to '-o' is missing"},
		{"lld trailing --script", lld("/tmp/a.o", "--script"), "is missing"},
		// A value that looks like an option: the worker rewrites from
		// the parse, so it stays a value (see TestPlanCommand).
		{"-mllvm -dependency-file", cc1("-mllvm", "-dependency-file", "x.d"), "an LLVM option outside the allow-list"},
		{"-MT -o then an unshipped input", cc1("-MT", "-o", "x.o"), "x.o names a file the job does not ship"},
		{"-main-file-name -o", cc1("-main-file-name", "-o", "k.hip"), ""},
		{"lld -mllvm -o", lld("/tmp/a.o", "-mllvm", "-o", "x.out"), "an LLVM option outside the allow-list"},

		// The attacks of the farm's security issue, and their kin.
		{"-mllvm -info-output-file=", cc1("-mllvm", "-info-output-file=/tmp/x"), "outside the allow-list"},
		{"-mllvm an allowed option with a path", cc1("-mllvm", "-amdgpu-x=/etc/passwd"), "outside the allow-list"},
		{"-mllvm an allowed option", cc1("-mllvm", "-amdgpu-early-inline-all=true"), ""},
		{"-mllvm of OpenMP nvptx64 device compiles", cc1("-mllvm", "-enable-memcpyopt-without-libcalls"), ""},
		{"relative include climbing out", cc1("-include", "../../etc/passwd"), "does not ship"},
		{"relative input climbing out", cc1("-x", "c", "../etc/passwd"), "does not ship"},
		{"relative shipped include", cc1("-include", "k.hip"), ""},
		// A forced include by name, found through the search
		// directories (clang's OpenMP and CUDA wrapper headers): only
		// a name a shipped file's path ends with.
		{"include by name, shipped", cc1("-include", "stdio.h"), ""},
		{"include by a relative path, shipped", cc1("-imacros", "include/stdio.h"), ""},
		{"include by name, not shipped", cc1("-include", "passwd"), "does not ship"},
		{"include by a name climbing out", cc1("-include", "../include/stdio.h"), "does not ship"},
		{"include by ./name", cc1("-include", "./stdio.h"), "does not ship"},
		{"include by a name that is part of one", cc1("-include", "dio.h"), "does not ship"},
		{"a read file by name", cc1("-fopenmp-host-ir-file-path", "stdio.h"), "does not ship"},
		{"an unclassified value naming a file", cc1("-target-sdk-version=/etc/passwd"), "does not ship"},
		{"an unclassified relative path", cc1("-target-sdk-version=../x"), "a value with a path"},
		{"an unclassified value", cc1("-target-sdk-version=11.8", "-fvisibility=hidden", "-O3"), ""},
		{"lld --format=binary", lld("/tmp/a.o", "--format=binary"), "not one of the device links' options"},
		{"lld -b binary", lld("/tmp/a.o", "-b", "binary"), "not run on workers"},
		{"lld -m with a path", lld("/tmp/a.o", "-m", "/etc/x"), "not an emulation of the device links"},
		{"lld --defsym", lld("/tmp/a.o", "--defsym=x=1"), "not run on workers"},
		{"lld -plugin-opt=-info-output-file=", lld("/tmp/a.o", "-plugin-opt=-info-output-file=/tmp/x"), "outside the allow-list"},
		{"lld --plugin-opt=dwo_dir=", lld("/tmp/a.o", "--plugin-opt=dwo_dir=/tmp/x"), "not run on workers"},
		{"lld input by a climbing argument", &Job{Version: JobVersion, Tool: "lld", Dir: "/src", Args: []string{"-o", "/tmp/x.out", "../a.o"},
			Files: []File{{Path: "/a.o", Arg: "../a.o"}}, Outputs: []string{"/tmp/x.out"}}, "leaves the job's directory"},
		{"an output climbing out", &Job{Version: JobVersion, Tool: "lld", Dir: "/src", Args: []string{"-o", "../x.out", "/tmp/a.o"},
			Files: []File{{Path: "/tmp/a.o"}}, Outputs: []string{"../x.out"}}, "not a path in the job's directory"},
		{"-o takes an option as its value", cc1("-o", "-include"), "names no output"},
		{"an absolute value swallowed", cc1("-MT", "-o", "/tmp/x.o"), "/tmp/x.o names a file the job does not ship"},
		{"unclean file", &Job{Tool: "clang", Dir: "/", Args: []string{"-cc1"}, Files: []File{{Path: "/a/../b"}}}, "clean"},

		// One lld flavour: the ELF driver, run as ld.lld. -flavor
		// anywhere, in any spelling, and -m with a PE emulation (lld's
		// MinGW driver) or any but the device links' are refused.
		{"lld -flavor gnu", flavored("-flavor", "gnu"), "lld runs only as ld.lld"},
		{"lld -flavor link", flavored("-flavor", "link", "-mllvm:-version", "x.obj"), "-flavor is not run on workers"},
		{"lld -flavor darwin", flavored("-flavor", "darwin"), "-flavor is not run on workers"},
		{"lld -flavor wasm", flavored("-flavor", "wasm"), "-flavor is not run on workers"},
		{"lld -flavor LINK", flavored("-flavor", "LINK"), "-flavor is not run on workers"},
		{"lld --flavor", flavored("--flavor", "link"), "--flavor is not run on workers"},
		{"lld -flavor later", lld("/tmp/a.o", "-flavor", "gnu"), "-flavor is not run on workers"},
		{"lld -m i386pep", lld("/tmp/a.o", "-m", "i386pep"), "MinGW"},
		{"lld -m i386pep first", flavored("-m", "i386pep"), "MinGW"},
		{"lld -m mipspe", flavored("-m", "mipspe"), "MinGW"},
		{"lld -m arm64xpe", flavored("-m", "arm64xpe"), "MinGW"},
		{"lld -m as a value", lld("/tmp/a.o", "-z", "-m", "i386pe"), "MinGW"},
		{"lld -mi386pep", lld("/tmp/a.o", "-mi386pep"), "MinGW"},
		{"lld -m=i386pep", lld("/tmp/a.o", "-m=i386pep"), "not an emulation of the device links"},
		{"lld -m elf_i386", lld("/tmp/a.o", "-m", "elf_i386"), "not an emulation of the device links"},
		{"lld -m elf_x86_64", flavored("-m", "elf_x86_64", "-shared", "-o", "/tmp/x.out", "/tmp/a.o"), ""},
		{"lld -melf64_amdgpu", flavored("-melf64_amdgpu", "-shared", "-o", "/tmp/x.out", "/tmp/a.o"), ""},
		{"lld without -m", flavored("-shared", "--lto-partitions=8", "-plugin-opt=mcpu=gfx906", "-plugin-opt=O3", "--lto-CGO3", "-o", "/tmp/x.out", "/tmp/a.o", "-mllvm=-amdgpu-internalize-symbols"), ""},

		// LLVM options: exact names, values of the shapes each takes.
		// The file writers of the security review, in every spelling.
		{"-mllvm -amdgpu-module-splitting-print-partition-summaries=", cc1("-mllvm", "-amdgpu-module-splitting-print-partition-summaries=F"), "outside the allow-list"},
		{"-mllvm -amdgpu-module-splitting-print-module-dotcfg=", cc1("-mllvm", "-amdgpu-module-splitting-print-module-dotcfg=F"), "outside the allow-list"},
		{"-mllvm -x86-lvi-load-dot-only", cc1("-target-feature", "+lvi-load-hardening", "-mllvm", "-x86-lvi-load-dot-only"), "outside the allow-list"},
		{"-mllvm -x86-lvi-load-dot", cc1("-mllvm", "-x86-lvi-load-dot"), "outside the allow-list"},
		{"-mllvm -x86-lvi-load-opt-plugin=", cc1("-mllvm", "-x86-lvi-load-opt-plugin=p.so"), "may load code"},
		{"lld -plugin-opt=-amdgpu-module-splitting-print-partition-summaries=", lld("/tmp/a.o", "-plugin-opt=-amdgpu-module-splitting-print-partition-summaries=F"), "outside the allow-list"},
		{"lld -plugin-opt=-amdgpu-module-splitting-print-module-dotcfg=", lld("/tmp/a.o", "-plugin-opt=-amdgpu-module-splitting-print-module-dotcfg=F"), "outside the allow-list"},
		{"lld -plugin-opt=-x86-lvi-load-dot-only", lld("/tmp/a.o", "-plugin-opt=-x86-lvi-load-dot-only"), "outside the allow-list"},
		{"lld --plugin-opt=-amdgpu-module-splitting-print-partition-summaries=", lld("/tmp/a.o", "--plugin-opt=-amdgpu-module-splitting-print-partition-summaries=F"), "outside the allow-list"},
		{"lld -plugin-opt -amdgpu-module-splitting-print-module-dotcfg=", lld("/tmp/a.o", "-plugin-opt", "-amdgpu-module-splitting-print-module-dotcfg=F"), "outside the allow-list"},
		{"lld -plugin-opt -x86-lvi-load-dot-only", lld("/tmp/a.o", "-plugin-opt", "-x86-lvi-load-dot-only"), "outside the allow-list"},
		{"lld -mllvm -amdgpu-module-splitting-print-partition-summaries=", lld("/tmp/a.o", "-mllvm", "-amdgpu-module-splitting-print-partition-summaries=F"), "outside the allow-list"},
		{"lld -mllvm=-amdgpu-module-splitting-print-module-dotcfg=", lld("/tmp/a.o", "-mllvm=-amdgpu-module-splitting-print-module-dotcfg=F"), "outside the allow-list"},
		{"lld -mllvm -x86-lvi-load-dot-only", lld("/tmp/a.o", "-mllvm", "-x86-lvi-load-dot-only"), "outside the allow-list"},
		// A prefix of an allowed name, or an allowed name as a prefix,
		// is not the option.
		{"-mllvm a name the old prefix list allowed", cc1("-mllvm", "-amdgpu-dump-hsa-metadata"), "outside the allow-list"},
		{"-mllvm an allowed name and more", cc1("-mllvm", "-inline-threshold-x=1"), "outside the allow-list"},
		{"-mllvm unroll-count", cc1("-mllvm", "-unroll-count=4"), "outside the allow-list"},
		// Values.
		{"-mllvm a number", cc1("-mllvm", "-inline-threshold=1000", "-mllvm", "--amdhsa-code-object-version=6"), ""},
		{"-mllvm a number without its value", cc1("-mllvm", "-inline-threshold"), "takes =NUMBER"},
		{"-mllvm a number that is a word", cc1("-mllvm", "-inline-threshold=F"), "takes =NUMBER"},
		{"-mllvm a number with a path", cc1("-mllvm", "-unroll-threshold=1/x"), "takes =NUMBER"},
		{"-mllvm a flag", cc1("-mllvm", "-amdgpu-internalize-symbols", "-mllvm", "-nvptx-short-ptr=false", "-mllvm", "-vectorize-slp=0"), ""},
		{"-mllvm a flag with a word", cc1("-mllvm", "-amdgpu-internalize-symbols=F"), "takes no value or =true or =false"},
		{"-mllvm three dashes", cc1("-mllvm", "---inline-threshold=1"), "not an LLVM option"},
		{"-mllvm -mattr (no clang option)", cc1("-mllvm", "-mattr=+xnack"), "not passed to this tool"},
		{"lld -plugin-opt=-mattr=", lld("/tmp/a.o", "-plugin-opt=-mattr=+xnack,-tgsplit", "-plugin-opt=-mattr=-wavefrontsize64"), ""},
		{"lld -plugin-opt=-mattr= with a path", lld("/tmp/a.o", "-plugin-opt=-mattr=+x/y"), "takes =WORD"},
		{"lld -plugin-opt=-mattr= dot-leading", lld("/tmp/a.o", "-plugin-opt=-mattr=.x"), "takes =WORD"},
		{"lld -plugin-opt=-mattr= with =", lld("/tmp/a.o", "-plugin-opt=-mattr=a=b"), "takes =WORD"},
		{"lld -mllvm an NVPTX option", lld("/tmp/a.o", "-mllvm", "-nvptx-short-ptr"), "not passed to this tool"},
		{"lld -plugin-opt= an LLVM option without its dash", lld("/tmp/a.o", "-plugin-opt=amdgpu-internalize-symbols"), "lld has no plugin option amdgpu-internalize-symbols"},
		{"lld -plugin-opt= GCC's lto-wrapper", lld("/tmp/a.o", "-plugin-opt=/usr/lib/gcc/lto-wrapper"), "not run on workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := check22(tc.job)
			if tc.want == "" && got != "" {
				t.Fatalf("refused: %s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("check = %q, want a refusal with %q", got, tc.want)
			}
		})
	}
}

// TestCheckPerRelease: a job is read with the option tables of its own
// LLVM release, so that what one release's clang -cc1 has and the other's
// lacks runs only on a worker of the release that knows it, and what
// offcc knows of 19's own options holds on its workers (19's Objective-C
// migration report is a file written, never run there).
func TestCheckPerRelease(t *testing.T) {
	t19, err := options.ForRelease(19)
	if err != nil {
		t.Fatal(err)
	}
	cc1 := func(args ...string) *Job {
		return &Job{Version: JobVersion, Tool: "clang", Dir: "/src",
			Args:    append([]string{"-cc1", "-triple", "amdgcn-amd-amdhsa", "-emit-obj", "-o", "/tmp/x.o"}, append(args, "-x", "hip", "k.hip")...),
			Files:   []File{{Path: "/src/k.hip"}},
			Outputs: []string{"/tmp/x.o"}}
	}
	for _, tc := range []struct {
		name   string
		job    *Job
		want19 string // "" runs on a worker of LLVM 19; else a substring of the refusal
		want22 string // the same for LLVM 22
	}{
		// clang 19's cc1 has -fpreserve-vec3-type (LLVM 20 made it a
		// default) and 22's --no-offloadlib (new in 22): each is
		// unknown to the other release's clang, which refuses it.
		{"-fpreserve-vec3-type", cc1("-fpreserve-vec3-type"), "", "has no option -fpreserve-vec3-type"},
		{"--no-offloadlib", cc1("--no-offloadlib"), "has no option --no-offloadlib", ""},
		{"-arcmt-migrate-report-output", cc1("-arcmt-migrate-report-output", "/tmp/r.plist"), "not run on workers", "has no option -arcmt-migrate-report-output"},
		{"-load in both", cc1("-load", "/tmp/p.so"), "not run on workers", "not run on workers"},
	} {
		for _, r := range []struct {
			tables *options.Tables
			want   string
		}{{t19, tc.want19}, {tables22(), tc.want22}} {
			_, got := check(tc.job, r.tables)
			switch {
			case r.want == "" && got != "":
				t.Errorf("%s, LLVM %d: refused (%s), want it run", tc.name, r.tables.Major, got)
			case r.want != "" && !strings.Contains(got, r.want):
				t.Errorf("%s, LLVM %d: check = %q, want a refusal with %q", tc.name, r.tables.Major, got, r.want)
			}
		}
	}
}

// TestPlanCommand: the worker rewrites outputs and lld's inputs from the
// parse: a value spelled like an output option stays as it is.
func TestPlanCommand(t *testing.T) {
	j := &Job{Version: JobVersion, Tool: "clang", Dir: "/src",
		Args:    []string{"-cc1", "-main-file-name", "-o", "-MT", "-dependency-file", "-o", "/tmp/x.o", "-dependency-file", "/tmp/x.d", "k.hip"},
		Files:   []File{{Path: "/src/k.hip"}},
		Outputs: []string{"/tmp/x.o", "/tmp/x.d"}}
	p, why := check22(j)
	if why != "" {
		t.Fatal(why)
	}
	got := strings.Join(p.command(map[string]string{"/tmp/x.o": "W/o0", "/tmp/x.d": "W/o1"}, nil), " ")
	want := "-cc1 -main-file-name -o -MT -dependency-file -o W/o0 -dependency-file W/o1 k.hip"
	if got != want {
		t.Errorf("command = %s\nwant      %s", got, want)
	}
	l := &Job{Version: JobVersion, Tool: "lld", Dir: "/src",
		Args:    []string{"-m", "elf64_amdgpu", "-plugin-opt", "mcpu=gfx90a", "-o", "/tmp/x.out", "a.o", "/tmp/b.o"},
		Files:   []File{{Path: "/src/a.o", Arg: "a.o"}, {Path: "/tmp/b.o"}},
		Outputs: []string{"/tmp/x.out"}}
	if p, why = check22(l); why != "" {
		t.Fatal(why)
	}
	got = strings.Join(p.command(map[string]string{"/tmp/x.out": "W/o0"}, map[string]string{"a.o": "W/in/f0", "/tmp/b.o": "W/in/f1"}), " ")
	want = "-m elf64_amdgpu -plugin-opt mcpu=gfx90a -o W/o0 W/in/f0 W/in/f1"
	if got != want {
		t.Errorf("command = %s\nwant      %s", got, want)
	}
}

// FuzzCheck: check and decodeJob never panic, whatever the record.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"v":1,"tool":"clang","dir":"/","args":["-cc1","-o"],"outputs":["x"]}`))
	f.Add([]byte(`{"v":1,"tool":"lld","dir":"/","args":["-o","/x","-L"],"files":[{"path":"/a","arg":"a"}]}`))
	f.Add([]byte(`{"v":1,"tool":"lld","dir":"/","args":["-plugin-opt","obj-path=/x","-plugin-opt"],"outputs":["/x"]}`))
	f.Add([]byte(`{"v":1,"tool":"clang","dir":"/","args":["-cc1","-mllvm","-o","-o","x","-plugin-arg-a","b","-isystem/i","@r"],"outputs":["x"]}`))
	f.Add([]byte(`{"v":1,"tool":"lld","dir":"/","args":["--output=/x","-T","s","--","-o"],"files":[{"path":"/s"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := decodeJob(data)
		if err != nil {
			return
		}
		p, why := check22(j)
		if why != "" {
			return
		}
		// An accepted job's command names no file but the worker's:
		// every output option's value is one of the worker's paths.
		out := map[string]string{}
		for _, o := range j.Outputs {
			out[o] = "/W/out"
		}
		cmd := p.command(out, map[string]string{})
		table := options.LLD()
		if j.Tool == "clang" {
			table, cmd = options.ClangCC1(), cmd[1:]
		}
		args, err := table.Parse(cmd)
		if err != nil {
			t.Fatalf("the worker's command does not parse: %v", err)
		}
		for _, a := range args {
			if outputIDs[j.Tool][a.Option.ID] && a.Value() != "/W/out" {
				t.Fatalf("output %s escapes the worker's rewriting in %q", a.Value(), cmd)
			}
		}
	})
}

// TestPathOf: the absolute path a cc1 argument names by itself, as the
// client looks for /dev/null.
func TestPathOf(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"/dev/null", "/dev/null"},
		{"-fembed-offload-object=/dev/null", "/dev/null"},
		{"-fprofile-instrument-use-path=/p.profdata", "/p.profdata"},
		{"-include/x.h", "/x.h"},
		{"-I/usr/include", ""},
		{"-fdebug-compilation-dir=/src", ""},
		{"-o/tmp/x.o", ""},
		{"-mllvm", ""},
		{"k.c", ""},
		{"-bogus=/x", ""},
	} {
		p, ok := pathOf(tables22().ClangCC1(), tc.arg)
		if p != tc.want || ok != (tc.want != "") {
			t.Errorf("pathOf(%q) = %q, %v; want %q", tc.arg, p, ok, tc.want)
		}
	}
}

// tables22 returns LLVM 22's option tables, the release of the tests'
// clang.
func tables22() *options.Tables {
	t, err := options.ForRelease(22)
	if err != nil {
		panic(err)
	}
	return t
}

// check22 is check with LLVM 22's option tables.
func check22(j *Job) (*plan, string) { return check(j, tables22()) }
