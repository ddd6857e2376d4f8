package cache

import (
	"crypto/sha256"
	"fmt"
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

// TestCommandResultKeyLines: a command entry's result key is the SHA-256
// of its key text, line by line as keyText writes it, with every value
// quoted, so that a path holding a newline or a quote cannot pass for
// more lines: one such path is not two.
func TestCommandResultKeyLines(t *testing.T) {
	var mk Sum
	mk[0] = 7
	st := FileStat{Size: 12, Mtime: 34, Ctime: 56, Dev: 7, Ino: 8}
	c := &candidate{
		Headers: []header{{Path: "/usr/include/stdio.h", Stat: st}, {Path: "/src/a \"b\"\nabsent \"/x\"", Stat: st}},
		Absent:  []string{"/usr/local/include/stdio.h", "/with space/\\and\tabs"},
	}
	var k keyText
	k.add("command-result", mk.String())
	for _, h := range c.Headers {
		k.add("read", h.Path, "size=12 mtime=34 ctime=56 dev=7 ino=8")
	}
	for _, p := range c.Absent {
		k.add("absent", p)
	}
	if got, want := commandResultKey(mk, c), Sum(sha256.Sum256([]byte(k.String()))); got != want {
		t.Fatalf("commandResultKey = %x, want the SHA-256 of\n%s", got, k.String())
	}
	one := &candidate{Absent: []string{"/x\"\nabsent \"/y"}}
	two := &candidate{Absent: []string{"/x", "/y"}}
	if commandResultKey(mk, one) == commandResultKey(mk, two) {
		t.Error("an absent path holding a quote and a newline gives the key of two absent paths")
	}
	// A long list (a C++ compile's absent probes) is hashed past the
	// writer's buffer the same way.
	long := &candidate{}
	var lk keyText
	lk.add("command-result", mk.String())
	for i := range 2000 {
		p := fmt.Sprintf("/opt/include/dir%04d/header.h", i)
		long.Absent = append(long.Absent, p)
		lk.add("absent", p)
	}
	if got, want := commandResultKey(mk, long), Sum(sha256.Sum256([]byte(lk.String()))); got != want {
		t.Fatalf("commandResultKey of %d absent paths = %x, want %x", len(long.Absent), got, want)
	}
}
