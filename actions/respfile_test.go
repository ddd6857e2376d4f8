package actions

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/internal/llvmtest"
)

// awkwardArgs are arguments whose quoting a response file must keep.
var awkwardArgs = []string{
	"-DA=a b", `-DB="q"`, `-DC=back\slash`, "-DD='single'", "-DE=tab\there",
	"-DF=$HOME", "-DG=", "-DH=#hash", "-DI=semi;colon", "-DJ=ünïcödé",
}

func TestFitsCommandLine(t *testing.T) {
	long := strings.Repeat("x", maxArgStrlen)
	tests := []struct {
		name  string
		argv  []string
		env   []string
		limit int
		want  bool
	}{
		{"short", []string{"clang", "-c", "a.c"}, []string{"A=1"}, 0, true},
		{"one argument past MAX_ARG_STRLEN", []string{"clang", long}, nil, 1 << 30, false},
		{"one argument just under it", []string{"clang", long[1:]}, nil, 1 << 30, true},
		{"total past the limit", []string{"clang", "-c", "a.c"}, nil, 20, false},
		{"environment counts", []string{"clang"}, []string{strings.Repeat("E", 100)}, 100, false},
	}
	for _, tt := range tests {
		if got := FitsCommandLine(tt.argv, tt.env, tt.limit); got != tt.want {
			t.Errorf("%s: FitsCommandLine = %v, want %v", tt.name, got, tt.want)
		}
	}
	if ArgLimit() < maxArgStrlen/2 {
		t.Errorf("ArgLimit() = %d, below half of MAX_ARG_STRLEN", ArgLimit())
	}
}

func TestSupportsResponseFiles(t *testing.T) {
	for path, want := range map[string]bool{
		"/usr/lib/llvm-22/bin/clang": true, "clang++": true, "/usr/bin/ld.lld": true,
		"llvm-offload-binary": true, "clang-linker-wrapper": true, "/x/offcc": true,
		"/usr/local/cuda/bin/ptxas": false, "fatbinary": false, "nvlink": false,
	} {
		if got := SupportsResponseFiles(path); got != want {
			t.Errorf("SupportsResponseFiles(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestResponseFileReadByClang checks the quoting against LLVM's own
// tokenizer: clang -### reads the file and prints each -D as cc1 gets it.
func TestResponseFileReadByClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	os.WriteFile(src, []byte("int x;\n"), 0o666)
	args := append(slices.Clone(awkwardArgs), "-c", src, "-o", filepath.Join(dir, "a.o"), "-###")
	cmd, cleanup, err := ResponseFileCommand(clang, append([]string{"clang"}, args...), nil, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmd) != 2 || !strings.HasPrefix(cmd[1], "@") {
		t.Fatalf("command = %q, want clang @FILE", cmd)
	}
	out, err := exec.Command(clang, cmd[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("clang %s: %v\n%s", cmd[1], err, out)
	}
	cleanup()
	if _, err := os.Stat(cmd[1][1:]); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s", cmd[1][1:])
	}
	var cc1 []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, `"-cc1"`) {
			if cc1, err = SplitHash(line); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, a := range awkwardArgs {
		if !slices.Contains(cc1, "-D") || !slices.Contains(cc1, strings.TrimPrefix(a, "-D")) {
			t.Errorf("cc1 job lacks %q:\n%q", a, cc1)
		}
	}
}

// TestShellUsesResponseFileWhenTooLong runs a stand-in "clang" that prints
// its arguments, once within the limit and once past it.
func TestShellUsesResponseFileWhenTooLong(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "clang")
	// Prints its arguments one per line, or the response file's content.
	script := "#!/bin/sh\nfor a; do case $a in @*) echo RSP; cat \"${a#@}\";; *) echo \"$a\";; esac; done\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	for _, tc := range []struct {
		limit   int
		wantRsp bool
	}{{0, false}, {64, true}} {
		var out bytes.Buffer
		sh := NewShell(ShellOptions{Stdout: &out, Stderr: &out, TempDir: tmp, ArgLimit: tc.limit})
		g := &Graph{}
		g.MustAdd(&Action{Kind: Compile, Command: append([]string{tool}, awkwardArgs...)})
		if err := Execute(context.Background(), g, sh, Options{Jobs: 1}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		gotRsp := len(lines) > 0 && lines[0] == "RSP"
		if gotRsp != tc.wantRsp {
			t.Fatalf("limit %d: response file used = %v, want %v:\n%s", tc.limit, gotRsp, tc.wantRsp, out.String())
		}
		if gotRsp {
			want := make([]string, len(awkwardArgs))
			for i, a := range awkwardArgs {
				want[i] = QuoteResponseFileArg(a)
			}
			if !slices.Equal(lines[1:], want) {
				t.Errorf("response file:\n%q\nwant\n%q", lines[1:], want)
			}
		} else if !slices.Equal(lines, awkwardArgs[:len(lines)]) || len(lines) != len(awkwardArgs) {
			t.Errorf("arguments:\n%q\nwant\n%q", lines, awkwardArgs)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("limit %d: left %v in the temporary directory", tc.limit, left)
		}
	}
}

// TestSplitResponseFileLikeClang reads one response file with
// SplitResponseFile and with clang, which prints the -D values it got.
func TestSplitResponseFileLikeClang(t *testing.T) {
	clang := llvmtest.Clang(t)
	dir := t.TempDir()
	text := "-DA=a&b;c|d -DB='x y' \"-DC=q\\\"r\" -DD=\\ e '' -DE='a\\'b' -DF=$HOME\r\n-DG=\"tab\there\"\n -DH=#not-a-comment -DI='' -DJ=end"
	rsp := filepath.Join(dir, "args.rsp")
	os.WriteFile(rsp, []byte(text), 0o644)
	src := filepath.Join(dir, "a.c")
	os.WriteFile(src, []byte("int x;\n"), 0o666)
	out, err := exec.Command(clang, "-###", "-c", src, "@"+rsp).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var fromClang []string
	for _, line := range strings.Split(string(out), "\n") {
		if argv, err := SplitHash(line); err == nil && slices.Contains(argv, "-cc1") {
			for i, a := range argv {
				if a == "-D" {
					fromClang = append(fromClang, "-D"+argv[i+1])
				}
			}
		}
	}
	if got := SplitResponseFile(text); !slices.Equal(got, fromClang) {
		t.Errorf("SplitResponseFile:\n%q\nclang read:\n%q", got, fromClang)
	}
}
