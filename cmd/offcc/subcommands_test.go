package main

import (
	"strings"
	"testing"

	"github.com/offcc/offcc/manual"
)

// TestSubcommandsMatchManual checks that every subcommand offcc runs is in
// the manual's list (which --help and the man page print) and the other way
// round, so that "offcc help" and --help cannot drift apart.
func TestSubcommandsMatchManual(t *testing.T) {
	runs := subcommands()
	documented := map[string]bool{}
	for _, sc := range manual.Subcommands() {
		name, _, _ := strings.Cut(sc.Name, " ")
		documented[name] = true
		if name != "version" && runs[name] == nil {
			t.Errorf("manual documents subcommand %q, which offcc does not run", sc.Name)
		}
	}
	for name := range runs {
		if !documented[name] {
			t.Errorf("offcc runs subcommand %q, which the manual does not document", name)
		}
	}
	if !documented["version"] || !isSubcommand("version") {
		t.Errorf("version: documented %v, run %v", documented["version"], isSubcommand("version"))
	}
}
