package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/offcc/offcc/internal/editdist"
)

// nearestName returns the candidate one edit from word (an insertion,
// deletion or substitution), as clang's driver suggests an option
// (findNearest, taken at distance 1); "" when none is that near or word is
// one of them. Among several, the first in candidates' order wins.
func nearestName(word string, candidates []string) string {
	best, bestDist := "", 2
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if d := editdist.Distance(word, c, bestDist); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// unknownArgument returns clang's words for an option arg that is none of
// flags (as spelt, dashes and all): "unknown argument '--job'; did you
// mean '--jobs'?", comparing the part of arg before any "=" and keeping
// its value, or "unknown argument '--bogus'" when no flag is one edit
// away.
func unknownArgument(arg string, flags []string) string {
	name, value, eq := strings.Cut(arg, "=")
	if near := nearestName(name, flags); near != "" {
		if eq {
			near += "=" + value
		}
		return fmt.Sprintf("unknown argument '%s'; did you mean '%s'?", arg, near)
	}
	return fmt.Sprintf("unknown argument '%s'", arg)
}

// subcommandNames returns the names "offcc NAME" runs, sorted.
func subcommandNames() []string {
	names := []string{"version"}
	for name := range subcommands() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// misspeltSubcommand returns the error for a first argument that misspells
// a subcommand ("offcc cach stats"): one that is no option, no subcommand
// and no file, but one edit from a subcommand's name. It returns "" for
// anything else, which goes to clang as an input: a file of that name
// (even one named like a subcommand) is compiled as it always was.
func misspeltSubcommand(arg string) string {
	if arg == "" || strings.HasPrefix(arg, "-") || isSubcommand(arg) {
		return ""
	}
	near := nearestName(arg, subcommandNames())
	if near == "" {
		return ""
	}
	if _, err := os.Lstat(arg); !errors.Is(err, fs.ErrNotExist) {
		return "" // a file, or one that cannot be told: clang's input
	}
	return fmt.Sprintf("'%s' is not an offcc subcommand; did you mean '%s'?", arg, near)
}

// unknownSubcommand says sub is not one of the subcommands subs of the
// command cmd ("cache", "config", "key"), with the one a single edit away, as
// nearestName finds it.
func unknownSubcommand(cmd, sub string, subs []string) string {
	if near := nearestName(sub, subs); near != "" {
		return fmt.Sprintf("unknown %s subcommand '%s'; did you mean '%s'?", cmd, sub, near)
	}
	return fmt.Sprintf("unknown %s subcommand '%s' (see 'offcc %s --help')", cmd, sub, cmd)
}
