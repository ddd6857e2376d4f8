package main

import (
	"os"
	"testing"
)

// TestMisspeltSubcommand: a first argument one edit from a subcommand's
// name is said to be no subcommand unless a file has that name (then it
// is clang's input, as before); options, real subcommands, sources and
// words near no subcommand are left to clang.
func TestMisspeltSubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("cahe", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"cach":     "'cach' is not an offcc subcommand; did you mean 'cache'?",
		"caches":   "'caches' is not an offcc subcommand; did you mean 'cache'?",
		"workr":    "'workr' is not an offcc subcommand; did you mean 'worker'?",
		"versio":   "'versio' is not an offcc subcommand; did you mean 'version'?",
		"cahe":     "", // a file
		"cache":    "", // a subcommand
		"-cach":    "",
		"foo.c":    "",
		"c":        "",
		"":         "",
		"inspect2": "'inspect2' is not an offcc subcommand; did you mean 'inspect'?",
	} {
		if got := misspeltSubcommand(arg); got != want {
			t.Errorf("misspeltSubcommand(%q) = %q, want %q", arg, got, want)
		}
	}
}

func TestUnknownArgument(t *testing.T) {
	flags := []string{"--jobs", "--job-cpu", "--json"}
	for arg, want := range map[string]string{
		"--job":   "unknown argument '--job'; did you mean '--jobs'?",
		"--job=3": "unknown argument '--job=3'; did you mean '--jobs=3'?",
		"--jsn":   "unknown argument '--jsn'; did you mean '--json'?",
		"--bogus": "unknown argument '--bogus'",
		"--j":     "unknown argument '--j'",
	} {
		if got := unknownArgument(arg, flags); got != want {
			t.Errorf("unknownArgument(%q) = %q, want %q", arg, got, want)
		}
	}
}
