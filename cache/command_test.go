package cache

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommandMayWrite: a command entry restores only the files its
// command line writes: the -o file (relative or absolute), a -MF file in
// either spelling, and the .d file -MD names after the object; never
// another path, whatever the entry says: not the source, not a file
// another option names.
func TestCommandMayWrite(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	k := CommandKey{Output: "obj/k.o", Args: []string{"-c", "k.c", "-o", "obj/k.o", "-MD", "-MFdeps/k.dep", "-MF", "k2.d", "--trace=t.json"}}
	for path, want := range map[string]bool{
		"obj/k.o":                       true,
		filepath.Join(wd, "obj/k.o"):    true,
		"obj/k.d":                       true,
		"deps/k.dep":                    true,
		"k2.d":                          true,
		"t.json":                        false,
		"k.c":                           false,
		"/etc/passwd":                   false,
		"obj/../../k.o":                 false,
		"other.o":                       false,
		"":                              false,
		filepath.Join(wd, "deps/x.dep"): false,
	} {
		if got := k.mayWrite(path); got != want {
			t.Errorf("mayWrite(%q) = %v, want %v", path, got, want)
		}
	}
}
