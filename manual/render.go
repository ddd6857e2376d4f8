package manual

import (
	"fmt"
	"strings"

	"github.com/offcc/offcc/config"
)

// helpWidth is the width --help fills its lines to.
const helpWidth = 78

// Help returns offcc's --help text, its usage naming the program prog
// (offcc or offcc++).
func Help(prog string) string {
	var b strings.Builder
	b.WriteString("OVERVIEW: offcc - a parallel clang-compatible driver for offload programs\n\n")
	fmt.Fprintf(&b, "USAGE: %s [clang options] file...\n", prog)
	fmt.Fprintf(&b, "       %s <subcommand> [options]\n\n", strings.Repeat(" ", len(prog)-len("offcc"))+"offcc")
	b.WriteString(fill(Overview, "", helpWidth-2))
	b.WriteString("\nOFFCC OPTIONS:\n")
	for _, o := range Options() {
		b.WriteString(entry(strings.Join(o.Names, ", "), o.Doc, 2, 26))
	}
	b.WriteString("\nENVIRONMENT AND CONFIGURATION:\n")
	b.WriteString(fill(ConfigDoc, "  ", helpWidth))
	b.WriteString("\n")
	b.WriteString(entry(config.EnvConfig+"=FILE", "the configuration file", 2, 26))
	for _, s := range config.All() {
		b.WriteString(entry(EnvName(s), SettingDoc(s, false), 2, 26))
	}
	b.WriteString("\nSUBCOMMANDS:\n")
	for _, c := range Subcommands() {
		b.WriteString(entry(c.Name, c.Doc, 2, 19))
	}
	b.WriteString("\n")
	b.WriteString(fill(Tools, "", helpWidth))
	b.WriteString("\nRun 'clang --help' for the compiler options; 'man offcc' or docs/manual.md\nfor the manual.\n")
	return b.String()
}

// EnvName is a setting's entry name in --help: VARIABLE=PLACEHOLDER.
func EnvName(s config.Setting) string {
	if s.Placeholder == "" {
		return s.Env
	}
	return s.Env + "=" + s.Placeholder
}

// FileKey is the configuration file key that ConfigDoc promises for a
// setting: its variable's name without OFFCC_, in lower case.
func FileKey(s config.Setting) string {
	return strings.ToLower(strings.TrimPrefix(s.Env, "OFFCC_"))
}

// SettingDoc is a setting's description with its default and, where it
// is not FileKey's, or always when withKey, its configuration file key.
func SettingDoc(s config.Setting, withKey bool) string {
	doc := s.Doc
	switch s.Kind {
	case config.Size, config.Duration:
		if s.Default != "" {
			doc += " (default " + s.Default + ")"
		}
	}
	if withKey || s.Key != FileKey(s) {
		doc += "; file key: " + s.Key
	}
	return doc
}

// entry lays out one two-column entry of --help: name at column indent,
// the doc from column col, on the next line when the name reaches it.
func entry(name, doc string, indent, col int) string {
	pad := strings.Repeat(" ", col)
	first := strings.Repeat(" ", indent) + name
	text := fill(doc, pad, helpWidth)
	if len(first)+2 <= col {
		return first + strings.Repeat(" ", col-len(first)) + text[col:]
	}
	return first + "\n" + text
}

// fill wraps text into lines of at most width columns, each starting with
// prefix.
func fill(text, prefix string, width int) string {
	var b strings.Builder
	line := prefix
	for _, w := range strings.Fields(text) {
		if len(line) > len(prefix) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = prefix
		}
		if len(line) > len(prefix) {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// groupTitles are the ENVIRONMENT subsections of the man page, by
// config.Setting.Group.
var groupTitles = map[string]string{
	"build":        "Builds",
	"cache":        "The build cache",
	"shared cache": "The shared cache",
	"farm":         "The build farm (clients)",
	"worker":       "The build farm (workers)",
}

// Man returns the man page offcc.1 in roff with man(7) macros.
func Man() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p(`.\" offcc.1: generated from package manual by "go generate ./manual"; do not edit.`)
	p(`.TH OFFCC 1 "" "offcc" "User Commands"`)
	p(".SH NAME")
	p(`offcc, offcc++ \- a parallel clang\-compatible driver for offload programs`)
	p(".SH SYNOPSIS")
	p(`\fBoffcc\fR [\fIclang options\fR] \fIfile\fR...`)
	p(".br")
	p(`\fBoffcc\fR \fIsubcommand\fR [\fIoptions\fR]`)
	p(".SH DESCRIPTION")
	p("%s", roff(Overview))
	p(".PP")
	p("%s", roff(Tools))
	p(".SH OPTIONS")
	p("%s", roff("offcc's own options; every other option is clang's and reaches the compile jobs as clang passes it (see clang --help)."))
	for _, o := range Options() {
		p(".TP")
		p(`\fB%s\fR`, roff(strings.Join(o.Names, ", ")))
		p("%s", roff(o.Doc))
	}
	p(".SH CONFIGURATION")
	p("%s", roff(ConfigDoc))
	p(".PP")
	p("For example:")
	p(".PP")
	p(".RS")
	p(".nf")
	p("%s", roff("# ~/.config/offcc/offcc.conf"))
	p("cache_size = 20G")
	p("remote_cache = redis://cache.example.org:6379")
	p(".fi")
	p(".RE")
	p(".SH ENVIRONMENT")
	p(".TP")
	p(`\fB%s\fR=\fIFILE\fR`, config.EnvConfig)
	p("the configuration file (see CONFIGURATION)")
	group := ""
	for _, s := range config.All() {
		if s.Group != group {
			group = s.Group
			title := groupTitles[group]
			if title == "" {
				title = group
			}
			p(".SS %s", roff(title))
		}
		p(".TP")
		if s.Placeholder != "" {
			p(`\fB%s\fR=\fI%s\fR`, roff(s.Env), roff(s.Placeholder))
		} else {
			p(`\fB%s\fR`, roff(s.Env))
		}
		p("%s", roff(SettingDoc(s, true)))
	}
	p(".SH SUBCOMMANDS")
	// Each subcommand is a paragraph of its synopsis lines, one per output
	// line (no fill), and its description indented below them: .TP would
	// take only the first line as its tag and fill the rest into the
	// description.
	for _, c := range Subcommands() {
		p(".PP")
		p(".nf")
		for _, syn := range c.Synopsis {
			p(`\fBoffcc %s\fR`, roff(syn))
		}
		p(".fi")
		p(".RS")
		p("%s", roff(c.Doc))
		p(".RE")
	}
	p(".SH FILES")
	for _, f := range Files() {
		p(".TP")
		p(`\fI%s\fR`, roff(f.Path))
		p("%s", roff(f.Doc))
	}
	p(".SH EXIT STATUS")
	p("%s", roff("That of clang for what offcc hands to clang or plans as clang would; 1 for offcc's own errors, which are one line beginning offcc: error:."))
	p(".SH SEE ALSO")
	p(`\fBclang\fR(1), \fBccache\fR(1); docs/manual.md and the other pages under docs/ in offcc's source tree.`)
	return b.String()
}

// roff escapes plain text for a roff text line: backslashes, minus signs
// (so that options copy as ASCII hyphens), and a leading control
// character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
