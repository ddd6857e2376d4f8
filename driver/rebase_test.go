package driver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRebase: absolute paths under the base directory that name inputs
// and options' files become relative to the working directory, in any
// spelling clang accepts; others stay.
func TestRebase(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proj/src/inc", "proj/build", "other"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "proj/src/k.c"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "proj/src/pre.h"), nil, 0o644)
	t.Chdir(filepath.Join(root, "proj/build"))
	cwd, _ := os.Getwd()
	p := func(rel string) string { return filepath.Join(root, rel) }
	o, err := Parse([]string{"-fopenmp", "-I" + p("proj/src/inc"), "-isystem", p("other"), "-include", p("proj/src/pre.h"),
		"-DX=" + p("proj/src"), "-c", p("proj/src/k.c"), "-o", p("proj/build/k.o"), "-MF", p("proj/build/k.o.d"),
		"--offload-jobs=2", "-fdebug-prefix-map=" + p("proj") + "=."})
	if err != nil {
		t.Fatal(err)
	}
	o.rebase(p("proj"), cwd)
	want := []string{"-fopenmp", "-I../src/inc", "-isystem", p("other"), "-include", "../src/pre.h",
		"-DX=" + p("proj/src"), "-c", "../src/k.c", "-o", "k.o", "-MF", "k.o.d", "-fdebug-prefix-map=" + p("proj") + "=."}
	if !slices.Equal(o.ClangArgs, want) {
		t.Errorf("got  %q\nwant %q", o.ClangArgs, want)
	}
	if !slices.Equal(o.Inputs, []string{"../src/k.c"}) || o.Jobs != 2 || o.ClangArgs[o.InputArgs[0]] != "../src/k.c" {
		t.Errorf("inputs %q at %v, jobs %d", o.Inputs, o.InputArgs, o.Jobs)
	}
	if o.Args[len(o.Args)-1].Index != len(o.ClangArgs)-1 {
		t.Error("the parsed arguments do not index the new command line")
	}

	// -working-directory: relative paths would not be relative to cwd.
	o, _ = Parse([]string{"-working-directory", p("proj"), "-c", p("proj/src/k.c")})
	o.rebase(p("proj"), cwd)
	if o.Inputs[0] != p("proj/src/k.c") {
		t.Errorf("with -working-directory: %q", o.ClangArgs)
	}
}

// TestRebaseThroughLinks: a path is made relative only when the relative
// one names the same file from the working directory, which ".." along
// a symbolic link does not.
func TestRebaseThroughLinks(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proj/src"), 0o755)
	os.MkdirAll(filepath.Join(root, "elsewhere/build"), 0o755)
	os.WriteFile(filepath.Join(root, "proj/src/k.c"), nil, 0o644)
	if err := os.Symlink(filepath.Join(root, "elsewhere/build"), filepath.Join(root, "proj/build")); err != nil {
		t.Fatal(err)
	}
	// The working directory as the shell names it: through the link.
	t.Chdir(filepath.Join(root, "proj/build"))
	t.Setenv("PWD", filepath.Join(root, "proj/build"))
	cwd := filepath.Join(root, "proj/build")
	src := filepath.Join(root, "proj/src/k.c")
	o, _ := Parse([]string{"-c", src, "-o", filepath.Join(cwd, "k.o")})
	o.rebase(filepath.Join(root, "proj"), cwd)
	if o.Inputs[0] != src {
		t.Errorf("../src/k.c from a linked directory names another file, but the source became %q", o.Inputs[0])
	}
	if !slices.Contains(o.ClangArgs, "k.o") {
		t.Errorf("the output in the working directory stays absolute: %q", o.ClangArgs)
	}
}
