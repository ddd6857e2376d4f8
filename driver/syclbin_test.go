package driver

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/toolchain"
)

// TestSYCLBINOptions: -fsyclbin's spellings and states, --syclbin-version
// and --offload-rdc are offcc's; clang sees none of them.
func TestSYCLBINOptions(t *testing.T) {
	tests := []struct {
		args    []string
		state   string
		version int
		clang   []string
		err     string
	}{
		{[]string{"-fsyclbin", "k.cpp"}, "executable", 0, []string{"k.cpp"}, ""},
		{[]string{"-fsyclbin=input", "k.cpp"}, "input", 0, []string{"k.cpp"}, ""},
		{[]string{"-fsyclbin=object", "--syclbin-version=2", "k.cpp"}, "object", 2, []string{"k.cpp"}, ""},
		{[]string{"-fsycl", "--offload-rdc", "-c", "k.cpp"}, "", 0, []string{"-fsycl", "-fgpu-rdc", "-c", "k.cpp"}, ""},
		{[]string{"-fsyclbin=shared", "k.cpp"}, "", 0, nil, "invalid value 'shared' in '-fsyclbin=shared'"},
		{[]string{"-fsyclbin", "--syclbin-version=3", "k.cpp"}, "", 0, nil, "invalid value '3' in '--syclbin-version=3'"},
	}
	for _, tt := range tests {
		o, err := Parse(tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if o.SYCLBIN != tt.state || o.SYCLBINVersion != tt.version || !slices.Equal(o.ClangArgs, tt.clang) {
			t.Errorf("%q: state %q version %d clang %q, want %q %d %q", tt.args, o.SYCLBIN, o.SYCLBINVersion, o.ClangArgs, tt.state, tt.version, tt.clang)
		}
	}
}

// TestCheckSYCLBIN: -fsycl-device-only wins over -fsyclbin with clang's
// unused-argument warning; options asking for host output or an early
// stop are clang-style errors.
func TestCheckSYCLBIN(t *testing.T) {
	tests := []struct {
		args         []string
		warning, err string
		stillSYCLBIN bool
	}{
		{[]string{"-fsyclbin", "k.cpp"}, "", "", true},
		{[]string{"-fsyclbin=object", "-fsycl-device-only", "k.cpp"}, "argument unused during compilation: '-fsyclbin=object'", "", false},
		{[]string{"-fsyclbin", "-c", "k.cpp"}, "", "invalid argument '-fsyclbin' not allowed with '-c'", false},
		{[]string{"-fsyclbin=input", "-fsycl-host-only", "k.cpp"}, "", "invalid argument '-fsyclbin=input' not allowed with '-fsycl-host-only'", false},
		{[]string{"-fsyclbin"}, "", "no input files", false},
		{[]string{"-fsyclbin", "-ccc-print-phases", "k.cpp"}, "", "-ccc-print-phases", false},
	}
	for _, tt := range tests {
		o, err := Parse(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		w, err := checkSYCLBIN(o)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !strings.Contains(w, tt.warning) || (w == "") != (tt.warning == "") {
			t.Errorf("%q: warning %q error %v, want %q", tt.args, w, err, tt.warning)
		}
		if (o.SYCLBIN != "") != tt.stillSYCLBIN {
			t.Errorf("%q: SYCLBIN = %q after the check", tt.args, o.SYCLBIN)
		}
	}
}

// TestNewSYCLBINBuild: sources become the device-only clang command line;
// objects and .syclbin files go to the link stage; -o names the output.
func TestNewSYCLBINBuild(t *testing.T) {
	o, err := Parse([]string{"-fsyclbin=object", "-O2", "a.cpp", "lib.syclbin", "-o", "out/k.syclbin", "b.o", "-DX=1", "c.cc"})
	if err != nil {
		t.Fatal(err)
	}
	b := newSYCLBINBuild(o)
	if b.output != "out/k.syclbin" || b.state != "object" {
		t.Errorf("output %q state %q", b.output, b.state)
	}
	want := []syclbinArg{{"a.cpp", true}, {"lib.syclbin", false}, {"b.o", false}, {"c.cc", true}}
	if !slices.Equal(b.inputs, want) {
		t.Errorf("inputs = %v, want %v", b.inputs, want)
	}
	if want := []string{"-fsycl", "-O2", "-DX=1", "--offload-device-only", "-c", "a.cpp", "c.cc"}; !slices.Equal(b.clangArgs, want) {
		t.Errorf("clang args = %q, want %q", b.clangArgs, want)
	}
	o, _ = Parse([]string{"-fsyclbin", "x.syclbin", "y.syclbin"})
	if b := newSYCLBINBuild(o); b.clangArgs != nil || b.output != "a.syclbin" {
		t.Errorf("no sources: clang args %q, output %q", b.clangArgs, b.output)
	}
}

// TestCheckSYCLBINRelease: -fsyclbin is refused, in one line, with a
// release whose profile says it cannot work (LLVM 19), and passes with
// one that can; a command line without it passes with either.
func TestCheckSYCLBINRelease(t *testing.T) {
	for _, release := range toolchain.Profiles() {
		for _, args := range [][]string{{"-fsyclbin=object", "k.cpp"}, {"-c", "k.cpp"}} {
			opts, err := Parse(args)
			if err != nil {
				t.Fatal(err)
			}
			err = checkSYCLBINRelease(opts, release)
			refused := opts.SYCLBIN != "" && !release.SYCLBIN
			switch {
			case refused && (err == nil || err.Error() != fmt.Sprintf("unsupported option '-fsyclbin=object' with LLVM %d: its clang has no -fsycl-device-only and it has no clang-sycl-linker", release.Major)):
				t.Errorf("LLVM %d %q: %v, want it refused", release.Major, args, err)
			case !refused && err != nil:
				t.Errorf("LLVM %d %q: %v", release.Major, args, err)
			}
		}
	}
	if toolchain.ProfileOf(19).SYCLBIN || !toolchain.ProfileOf(22).SYCLBIN {
		t.Errorf("-fsyclbin should be LLVM 22's, not 19's")
	}
}
