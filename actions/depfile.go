package actions

import (
	"fmt"
	"os"
	"strings"
)

// ReadDepFile reads a Makefile-style dependency file as clang writes it
// (-dependency-file) and returns every prerequisite it lists, once each, in
// order. Targets are not returned.
func ReadDepFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read dependency file: %v", err)
	}
	return ParseDepFile(string(data)), nil
}

// ParseDepFile parses the text of a Makefile-style dependency file. It
// undoes clang's escaping: "\ " is a space, "\#" a '#', "\\" before either
// a backslash, "$$" a '$'; a backslash at the end of a line continues it.
func ParseDepFile(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var deps []string
	seen := map[string]bool{}
	var tok strings.Builder
	inTok := false
	afterColon := false
	lineStart := true
	emit := func() {
		if !inTok {
			return
		}
		s := tok.String()
		tok.Reset()
		inTok = false
		if afterColon && !seen[s] {
			seen[s] = true
			deps = append(deps, s)
		}
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
			emit()
			i++ // continuation
		case c == '\\' && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '#' || text[i+1] == '\\'):
			tok.WriteByte(text[i+1])
			inTok = true
			i++
		case c == '$' && i+1 < len(text) && text[i+1] == '$':
			tok.WriteByte('$')
			inTok = true
			i++
		case c == '\n':
			emit()
			afterColon = false
			lineStart = true
			continue
		case c == ' ' || c == '\t':
			emit()
		case c == ':' && !afterColon && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t' || text[i+1] == '\n' || text[i+1] == '\\' || text[i+1] == '\r'):
			emit()
			afterColon = true
		case c == '#' && lineStart && !inTok:
			// A comment line.
			for i < len(text) && text[i] != '\n' {
				i++
			}
			i--
		default:
			tok.WriteByte(c)
			inTok = true
		}
		lineStart = false
	}
	emit()
	return deps
}

// IncludeGraph is the header dependency graph a compile writes for offcc
// (clang -cc1 -dependency-dot FILE) beside a dependency file that leaves
// out system headers (-MMD): clang writes the user's file itself, byte for
// byte as it would without offcc, and the graph names, system headers
// included, every file an #include or #embed directive reached (one that
// an include guard or #pragma once skipped too) and every file holding
// such a directive. (A file that only __has_include or __has_embed found
// is in neither list when it is a system header; the -MD file lists it.)
type IncludeGraph struct {
	// Path is the graph file.
	Path string
	// Sysroot is the prefix clang strips from the names it writes (the
	// command's -isysroot; "/" when it has none, so that clang writes
	// /usr/include/stdio.h as usr/include/stdio.h).
	Sysroot string
	// Forced are the files the command's -include and -imacros options
	// may name, each relative to offcc's working directory or absolute:
	// the graph names such a file only when it includes another. Those
	// that exist after the run count as read.
	Forced []string
}

// ReadDiscovered returns the files a's command read that planning did not
// know, after it succeeded: those a.DepFile lists, then those
// a.IncludeGraph names, once each.
func ReadDiscovered(a *Action) ([]string, error) {
	files, err := ReadDepFile(a.DepFile)
	for i, f := range files {
		files[i] = a.FileNames.Rename(f)
	}
	if err != nil || a.IncludeGraph == nil {
		return files, err
	}
	more, err := a.IncludeGraph.Read(a.FileNames)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(files)+len(more))
	for _, f := range files {
		seen[f] = true
	}
	for _, f := range more {
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files, nil
}

// Read returns the files g names, once each, in order, and then the Forced
// files that exist. A name clang stripped the sysroot from stands for the
// sysroot joined to it, or for itself when it does not start with the
// sysroot: of those, the files that exist (all of them when none does, so
// that a file read and then removed is not forgotten). Names are renamed
// by rename first.
func (g *IncludeGraph) Read(rename NameMap) ([]string, error) {
	data, err := os.ReadFile(g.Path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the include graph: %v", err)
	}
	var files []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, label := range ParseIncludeGraph(string(data)) {
		var names []string
		if g.Sysroot != "" {
			names = append(names, g.Sysroot+label)
		}
		if g.Sysroot == "" || !strings.HasPrefix(label, g.Sysroot) {
			names = append(names, label)
		}
		for i, n := range names {
			names[i] = rename.Rename(n)
		}
		found := false
		for _, n := range names {
			if exists(n) {
				add(n)
				found = true
			}
		}
		if !found {
			for _, n := range names {
				add(n)
			}
		}
	}
	for _, f := range g.Forced {
		if exists(f) {
			add(f)
		}
	}
	return files, nil
}

// exists reports whether path names a file that can be looked at.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ParseIncludeGraph returns the file names of a graph clang's
// -dependency-dot wrote (clang/lib/Frontend/DependencyGraph.cpp), in the
// order of its nodes, with llvm::DOT::EscapeString undone: "\n" is a
// newline, a backslash before another character stands for that
// character, except "\l" (clang's own "\l"), and a bare '|', '{' or '}'
// stands for itself after a backslash. (A tab, written as two spaces,
// cannot be told from them.)
func ParseIncludeGraph(text string) []string {
	var names []string
	for _, line := range strings.Split(text, "\n") {
		_, rest, ok := strings.Cut(line, ` label="`)
		if !ok {
			continue
		}
		var b strings.Builder
		closed := false
	scan:
		for i := 0; i < len(rest); i++ {
			switch c := rest[i]; {
			case c == '"':
				closed = true
				break scan
			case c == '\\' && i+1 < len(rest):
				i++
				switch n := rest[i]; n {
				case 'n':
					b.WriteByte('\n')
				case 'l':
					b.WriteString(`\l`)
				default:
					b.WriteByte(n)
				}
			case c == '|' || c == '{' || c == '}':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		if closed && b.Len() > 0 {
			names = append(names, b.String())
		}
	}
	return names
}

// PrivateOutput reports whether path is a file a's command writes for
// offcc alone (its IncludeGraph), among a's Outputs: the option naming it,
// which makes a user's command uncacheable (-dependency-dot), does not
// make a uncacheable.
func (a *Action) PrivateOutput(path string) bool {
	return a.IncludeGraph != nil && path != "" && path == a.IncludeGraph.Path
}
