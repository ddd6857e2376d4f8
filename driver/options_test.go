package driver

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/options"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		offload actions.OffloadKind
		clang   []string
		jobs    int
		check   func(*Options) bool
	}{
		{"plain compile", []string{"-c", "x.c", "-o", "x.o"}, actions.None, []string{"-c", "x.c", "-o", "x.o"}, 0, nil},
		{"openmp without targets", []string{"-fopenmp", "-c", "x.c"}, actions.None, nil, 0, nil},
		{"openmp targets", []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "x.c"}, actions.OpenMP, nil, 0, nil},
		{"offload arch", []string{"-fopenmp", "--offload-arch=gfx90a,sm_80", "x.c"}, actions.OpenMP, nil, 0, nil},
		{"fno-openmp wins when last", []string{"-fopenmp", "--offload-arch=gfx90a", "-fno-openmp", "x.c"}, actions.None, nil, 0, nil},
		{"fopenmp=libgomp is not offload", []string{"-fopenmp=libgomp", "--offload-arch=gfx90a", "x.c"}, actions.None, nil, 0, nil},
		{"-j separate is offcc's", []string{"-j", "3", "-fopenmp", "--offload-arch=gfx90a", "-c", "x.c"}, actions.OpenMP,
			[]string{"-fopenmp", "--offload-arch=gfx90a", "-c", "x.c"}, 3, nil},
		{"-j joined", []string{"-j7", "-c", "x.c"}, actions.None, []string{"-c", "x.c"}, 7, nil},
		{"--offload-jobs", []string{"--offload-jobs=5", "-c", "x.c"}, actions.None, []string{"-c", "x.c"}, 5, nil},
		{"jobserver", []string{"--offload-jobs=jobserver", "x.c"}, actions.None, []string{"x.c"}, 0,
			func(o *Options) bool { return o.UseJobserver }},
		{"llvm dir", []string{"--llvm-dir=/opt/llvm/bin", "x.c"}, actions.None, []string{"x.c"}, 0,
			func(o *Options) bool { return o.LLVMDir == "/opt/llvm/bin" }},
		{"-Xclang value is not an option", []string{"-Xclang", "-fopenmp", "--offload-arch=gfx90a", "x.c"}, actions.None, nil, 0, nil},
		{"-o value is not an input", []string{"-fopenmp", "--offload-arch=gfx90a", "-c", "x.c", "-o", "y.cu"}, actions.OpenMP, nil, 0, nil},
		{"cuda input", []string{"-fopenmp", "--offload-arch=sm_80", "k.cu"}, actions.CUDA, nil, 0, nil},
		{"-x hip", []string{"-x", "hip", "--offload-arch=gfx90a", "k.c"}, actions.HIP, nil, 0, nil},
		{"-x cuda then -x c", []string{"-x", "cuda", "a.cu", "-x", "c", "b.c"}, actions.CUDA, nil, 0, nil},
		{"-fsycl", []string{"-fsycl", "k.cpp"}, actions.SYCL, nil, 0, nil},
		{"-fsyclbin=object", []string{"-fsyclbin=object", "k.cpp"}, actions.SYCL, nil, 0, nil},
		{"-E goes to clang", []string{"-E", "-fopenmp", "--offload-arch=gfx90a", "x.c"}, actions.OpenMP, nil, 0,
			func(o *Options) bool { return o.PreprocessOnly }},
		{"--print-job-graph and --job-trace are offcc's", []string{"--print-job-graph=dot", "--job-trace=t.json", "-c", "x.c"}, actions.None,
			[]string{"-c", "x.c"}, 0, func(o *Options) bool { return o.PrintJobGraph == "dot" && o.JobTrace == "t.json" }},
		{"-Xopenmp-target= takes the next argument", []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu",
			"-Xopenmp-target=x86_64-pc-linux-gnu", "-j", "x.c"}, actions.OpenMP, nil, 0,
			func(o *Options) bool { return o.Jobs == 0 && o.ClangArgs[3] == "-j" }},
		{"-### and -v", []string{"-###", "-v", "x.c"}, actions.None, nil, 0, func(o *Options) bool { return o.HashHashHash && o.Verbose }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if o.OffloadKind() != tt.offload {
				t.Errorf("OffloadKind() = %v, want %v", o.OffloadKind(), tt.offload)
			}
			if tt.clang != nil && !reflect.DeepEqual(o.ClangArgs, tt.clang) {
				t.Errorf("ClangArgs = %q, want %q", o.ClangArgs, tt.clang)
			}
			if o.Jobs != tt.jobs {
				t.Errorf("Jobs = %d, want %d", o.Jobs, tt.jobs)
			}
			if tt.check != nil && !tt.check(o) {
				t.Errorf("check failed for %+v", o)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-j", "0", "x.c"},
		{"--offload-jobs=many", "x.c"},
		{"-c", "x.c", "-o"},
		{"--print-job-graph=svg", "x.c"},
		{"--job-trace=", "x.c"},
	} {
		if _, err := Parse(args); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", args)
		}
	}
}

func TestResponseFiles(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.rsp")
	os.WriteFile(inner, []byte(`--offload-arch=gfx90a`), 0o644)
	outer := filepath.Join(dir, "outer.rsp")
	os.WriteFile(outer, []byte("-fopenmp \"-DNAME=a b\" 'x.c'\n@"+inner+"\n"), 0o644)
	o, err := Parse([]string{"@" + outer, "-c"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-fopenmp", "-DNAME=a b", "x.c", "--offload-arch=gfx90a", "-c"}
	if !reflect.DeepEqual(o.ClangArgs, want) {
		t.Errorf("ClangArgs = %q, want %q", o.ClangArgs, want)
	}
	if o.OffloadKind() != actions.OpenMP {
		t.Error("offload options inside a response file were not seen")
	}
}

// FuzzResponseFileRoundTrip: arguments offcc writes to a response file
// (for clang, GNU quoting) read back unchanged through offcc's own @file
// expansion.
func FuzzResponseFileRoundTrip(f *testing.F) {
	f.Add("-DA=a b", `-DB="q"`, `back\slash`)
	f.Add("&&", "'single'", "tab\there\nnewline")
	f.Add("$HOME", "#hash", "ünï")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		for _, s := range in {
			// LLVM's reader drops empty arguments (ResponseFileCommand
			// never writes one); NUL cannot be in an argument.
			if s == "" || strings.ContainsRune(s, 0) || !utf8.ValidString(s) || strings.HasPrefix(s, "@") {
				t.Skip()
			}
		}
		name, err := actions.WriteResponseFile(t.TempDir(), in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := expandResponseFiles([]string{"@" + name}, 0)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !slices.Equal(got, in) {
			t.Fatalf("read back %q, wrote %q", got, in)
		}
	})
}

// TestOffccOptionsAreNotClangs checks that clang 22 has no option spelled
// like one of offcc's: each, with a value where it takes one, is an unknown
// argument to clang's driver table. --offload-jobs= is clang's too, with
// the meaning offcc gives it.
func TestOffccOptionsAreNotClangs(t *testing.T) {
	for _, o := range offccOptions {
		if o.name == "--offload-jobs=" {
			if a, _ := options.ClangDriver().ParseOne([]string{"--offload-jobs=2"}, 0); !a.Is("offload_jobs_EQ") {
				t.Errorf("--offload-jobs= is no longer clang's: %v", a.Option.ID)
			}
			continue
		}
		arg := o.name
		if o.kind != options.Flag {
			arg += "1"
		}
		a, err := options.ClangDriver().ParseOne([]string{arg, "x"}, 0)
		if err != nil || !a.IsUnknown() {
			t.Errorf("%s is clang's option %v too (err %v)", arg, a.Option.ID, err)
		}
	}
}

// TestOffccOptionDiagnostics checks clang's wording for misspelt offcc
// options and offcc options without their value, and that arguments near
// none of them are left to clang.
func TestOffccOptionDiagnostics(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--no-cachee", "unknown argument '--no-cachee'; did you mean '--no-cache'?"},
		{"--no-cach", "unknown argument '--no-cach'; did you mean '--no-cache'?"},
		{"--no-remote-exe", "unknown argument '--no-remote-exe'; did you mean '--no-remote-exec'?"},
		{"--job-trac=t.json", "unknown argument '--job-trac=t.json'; did you mean '--job-trace=t.json'?"},
		{"--offload-jobz=3", "unknown argument '--offload-jobz=3'; did you mean '--offload-jobs=3'?"},
		{"--llvm-dirr=/x", "unknown argument '--llvm-dirr=/x'; did you mean '--llvm-dir=/x'?"},
		{"--offload-rdcc", "unknown argument '--offload-rdcc'; did you mean '--offload-rdc'?"},
		{"--job-trace", "argument to '--job-trace' is missing (expected 1 value)"},
		{"--llvm-dir", "argument to '--llvm-dir' is missing (expected 1 value)"},
		{"--remote-exec", "argument to '--remote-exec' is missing (expected 1 value)"},
		{"--print-job-graph", "argument to '--print-job-graph' is missing (expected 1 value)"},
		{"--print-compile-commands", "argument to '--print-compile-commands' is missing (expected 1 value)"},
		{"--syclbin-version", "argument to '--syclbin-version' is missing (expected 1 value)"},
		{"--offload-jobs", "argument to '--offload-jobs' is missing (expected 1 value)"},
	} {
		_, err := Parse([]string{tc.arg, "-c", "x.c"})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%s): %v\nwant %s", tc.arg, err, tc.want)
		}
	}
	// Far from every offcc option, or too short to suggest (-j): clang's.
	for _, arg := range []string{"--no-such-thing", "-jj", "--cache"} {
		o, err := Parse([]string{arg, "-c", "x.c"})
		if err != nil || !slices.Contains(o.ClangArgs, arg) {
			t.Errorf("Parse(%s) = %v, %v; want it passed to clang", arg, o, err)
		}
	}
}

// TestOffloadMemOption checks --offload-mem=: a size or off, kept from
// clang, the last one winning, and a bad value named in one line.
func TestOffloadMemOption(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--offload-mem=600M", "-c", "x.c"}, "600M"},
		{[]string{"--offload-mem=off", "-c", "x.c"}, "off"},
		{[]string{"--offload-mem=1G", "--offload-mem=0", "-c", "x.c"}, "0"},
		{[]string{"-c", "x.c"}, ""},
	} {
		o, err := Parse(tc.args)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.args, err)
		}
		if o.OffloadMem != tc.want || !slices.Equal(o.ClangArgs, []string{"-c", "x.c"}) {
			t.Errorf("Parse(%q): OffloadMem %q, ClangArgs %q; want %q and clang's args alone", tc.args, o.OffloadMem, o.ClangArgs, tc.want)
		}
	}
	for _, v := range []string{"lots", ""} {
		_, err := Parse([]string{"--offload-mem=" + v, "-c", "x.c"})
		want := "invalid value '" + v + "' in '--offload-mem=" + v + "': expected a size such as 600M, or 'off'"
		if err == nil || err.Error() != want {
			t.Errorf("Parse(--offload-mem=%s): %v\nwant %s", v, err, want)
		}
	}
}
