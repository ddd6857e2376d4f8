package manual

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/offcc/offcc/config"
	"github.com/offcc/offcc/farm"
)

// TestManPageCommitted checks that docs/offcc.1 is what the source
// renders: run "go generate ./manual" after changing either.
func TestManPageCommitted(t *testing.T) {
	got, err := os.ReadFile("../docs/offcc.1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Man() {
		t.Errorf("docs/offcc.1 is not what package manual renders: run go generate ./manual")
	}
}

// TestManPageRenders renders the man page with groff, warnings on: any
// warning fails.
func TestManPageRenders(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff not installed (apt-get install groff-base)")
	}
	cmd := exec.Command(groff, "-man", "-ww", "-z")
	cmd.Stdin = strings.NewReader(Man())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("groff -man -ww -z: %v\n%s", err, stderr.String())
	}
}

// renderMan renders the roff text page as a reader sees it: with man -l
// (groff -man -Tutf8 where man is missing) at width columns in a UTF-8
// locale, without formatting, tabs expanded. It skips the test when
// neither program is installed.
func renderMan(t *testing.T, page string, width int) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "offcc.1")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	if man, err := exec.LookPath("man"); err == nil {
		cmd = exec.Command(man, "-l", file)
	} else if groff, err := exec.LookPath("groff"); err == nil {
		cmd = exec.Command(groff, "-man", "-Tutf8", "-rLL="+strconv.Itoa(width)+"n", file)
	} else {
		t.Skip("neither man nor groff is installed (apt-get install man-db)")
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "MANWIDTH="+strconv.Itoa(width),
		"MANPAGER=cat", "PAGER=cat", "MAN_KEEP_FORMATTING=", "MANROFFOPT=", "GROFF_NO_SGR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	// Overstrikes (bold, underline) become the character struck.
	text := regexp.MustCompile(`.\x08`).ReplaceAllString(string(out), "")
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		var b strings.Builder
		for _, r := range line {
			if r == '\t' {
				b.WriteString(strings.Repeat(" ", 8-b.Len()%8))
			} else {
				b.WriteRune(r)
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return lines
}

// indent is the number of leading spaces of line.
func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// manSection returns the lines of the rendered page's section title, up
// to the next section heading, or nil when there is none.
func manSection(lines []string, title string) []string {
	start := slices.Index(lines, title)
	if start < 0 {
		return nil
	}
	end := start + 1
	for end < len(lines) && (lines[end] == "" || indent(lines[end]) > 0) {
		end++
	}
	return lines[start+1 : end]
}

// subcommandsRendered checks the SUBCOMMANDS section of a rendered man
// page against Subcommands(): one paragraph per subcommand, in order, each
// synopsis line on a line of its own at the paragraph's indent, then the
// description, starting on a line of its own, indented further, its text
// whole. It returns what is wrong.
func subcommandsRendered(lines []string) []string {
	section := manSection(lines, "SUBCOMMANDS")
	if section == nil {
		return []string{"the rendered man page has no SUBCOMMANDS section"}
	}
	var bad []string
	var paras [][]string
	var cur []string
	for _, line := range append(section, "") {
		if line != "" {
			cur = append(cur, line)
		} else if cur != nil {
			paras = append(paras, cur)
			cur = nil
		}
	}
	subs := Subcommands()
	if len(paras) != len(subs) {
		bad = append(bad, fmt.Sprintf("SUBCOMMANDS renders as %d paragraphs, want one per subcommand (%d)", len(paras), len(subs)))
	}
	for i, c := range subs {
		if i >= len(paras) {
			break
		}
		para := paras[i]
		shown := strings.Join(para, "\n")
		if len(para) <= len(c.Synopsis) {
			bad = append(bad, fmt.Sprintf("offcc %s: %d lines rendered for %d synopsis lines and a description:\n%s", c.Name, len(para), len(c.Synopsis), shown))
			continue
		}
		syn := indent(para[0])
		for j, want := range c.Synopsis {
			if got := para[j]; strings.TrimSpace(got) != "offcc "+want || indent(got) != syn {
				bad = append(bad, fmt.Sprintf("offcc %s: synopsis line %d renders as %q, want %q on a line of its own at column %d:\n%s", c.Name, j+1, got, "offcc "+want, syn, shown))
			}
		}
		desc := para[len(c.Synopsis):]
		for _, line := range desc {
			if indent(line) <= syn {
				bad = append(bad, fmt.Sprintf("offcc %s: description line %q is not indented below the synopsis (column %d):\n%s", c.Name, line, syn, shown))
			}
		}
		// Join the description's lines; a line ending in U+2010 was
		// hyphenated by groff (the word goes on after the next line's
		// indent).
		text := regexp.MustCompile("\u2010\n\\s*").ReplaceAllString(strings.Join(desc, "\n"), "")
		if got, want := strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(c.Doc), " "); got != want {
			bad = append(bad, fmt.Sprintf("offcc %s: the description renders as\n%q\nwant\n%q", c.Name, got, want))
		}
	}
	return bad
}

// TestManSubcommandsRendered renders the man page with man -l, at two
// widths, and checks that every subcommand's synopsis lines each start a
// line of their own and its description a paragraph of its own (under a
// .TP tag, which takes one line, the second and later synopsis lines and
// the description used to run together into one filled paragraph).
func TestManSubcommandsRendered(t *testing.T) {
	for _, width := range []int{80, 120} {
		lines := renderMan(t, Man(), width)
		for _, b := range subcommandsRendered(lines) {
			t.Errorf("man -l docs/offcc.1 at %d columns: %s", width, b)
		}
		if t.Failed() {
			t.Logf("SUBCOMMANDS as rendered:\n%s", strings.Join(manSection(lines, "SUBCOMMANDS"), "\n"))
			return
		}
	}
}

// TestManSubcommandsCheckFails checks that subcommandsRendered finds the
// fault of the layout it replaced: a .TP tag with .br between synopsis
// lines, rendered the same way.
func TestManSubcommandsCheckFails(t *testing.T) {
	var b strings.Builder
	b.WriteString(".SH SUBCOMMANDS\n")
	for _, c := range Subcommands() {
		b.WriteString(".TP\n")
		for i, syn := range c.Synopsis {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(`\fBoffcc ` + roff(syn) + `\fR` + "\n")
		}
		b.WriteString(roff(c.Doc) + "\n")
	}
	b.WriteString(".SH FILES\n")
	section := regexp.MustCompile(`(?s)\.SH SUBCOMMANDS\n.*?\.SH FILES\n`)
	page := Man()
	if !section.MatchString(page) {
		t.Fatal("the man page has no SUBCOMMANDS section followed by FILES")
	}
	page = section.ReplaceAllLiteralString(page, b.String())
	bad := subcommandsRendered(renderMan(t, page, 80))
	if len(bad) == 0 {
		t.Fatal("the check passes the .TP/.br layout, which runs synopsis lines into the description")
	}
	for _, c := range []string{"cache", "config", "worker", "key", "offload-embed"} {
		if !slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(b, "offcc "+c+":") }) {
			t.Errorf("the check finds nothing wrong with offcc %s under .TP/.br:\n%s", c, strings.Join(bad, "\n"))
		}
	}
}

// TestHelpSections checks that --help lists every option, setting and
// subcommand of the source, each once, and the usage naming the program.
func TestHelpSections(t *testing.T) {
	h := Help("offcc++")
	if !strings.HasPrefix(h, "OVERVIEW: offcc - ") || !strings.Contains(h, "USAGE: offcc++ [clang options] file...\n") {
		t.Errorf("--help as offcc++ does not begin with the overview and usage:\n%s", h[:200])
	}
	for _, want := range []string{"\n  --remote-exec=URL ", "\n  --no-remote-exec ", "\n  OFFCC_REMOTE_CACHE_READONLY=0|1\n",
		"\n  OFFCC_CONFIG=FILE ", "--zero-only", "\n  config ", "\n  version "} {
		if !strings.Contains(h, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	for _, s := range config.All() {
		if n := strings.Count(h, "\n  "+EnvName(s)); n != 1 {
			t.Errorf("--help lists %s %d times, want once", s.Env, n)
		}
	}
	for i, line := range strings.Split(h, "\n") {
		if len(line) > helpWidth {
			t.Errorf("--help line %d is %d columns wide: %q", i+1, len(line), line)
		}
	}
}

// manualRefs returns the names the reference sections of docs/manual.md
// document: the backquoted words of the first column of the tables under
// "## Options", "## Environment and configuration" and "## Subcommands".
func manualRefs(t *testing.T) (opts, envs, subs []string) {
	data, err := os.ReadFile("../docs/manual.md")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]+)`")
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			span := m[1]
			switch section {
			case "Options":
				if o := optionWord(span); o != "" {
					opts = append(opts, o)
				}
			case "Environment and configuration":
				if e := regexp.MustCompile(`OFFCC_[A-Z_]+`).FindString(span); e != "" {
					envs = append(envs, e)
				}
			case "Subcommands":
				if s := subcommandWord(span); s != "" {
					subs = append(subs, s)
				}
			}
		}
	}
	return opts, envs, subs
}

// optionWord is the option a spelling such as "--job-trace=FILE" or
// "-j N" names ("--job-trace", "-j"), or "" for none.
func optionWord(s string) string {
	if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "@") {
		return ""
	}
	if i := strings.IndexAny(s, "=[ "); i > 0 {
		s = s[:i]
	}
	return s
}

// subcommandWord is the subcommand "offcc NAME ..." names, or "".
func subcommandWord(s string) string {
	w := strings.Fields(s)
	if len(w) < 2 || w[0] != "offcc" {
		return ""
	}
	for _, c := range Subcommands() {
		if strings.HasPrefix(strings.Join(w[1:], " ")+" ", c.Name+" ") {
			return c.Name
		}
	}
	return w[1]
}

// TestManualMatchesHelp checks that every option, variable and subcommand
// of --help is in the manual's reference sections, and every one those
// document is in --help.
func TestManualMatchesHelp(t *testing.T) {
	var helpOpts, helpEnvs, helpSubs []string
	for _, o := range Options() {
		for _, n := range o.Names {
			helpOpts = append(helpOpts, optionWord(n))
		}
	}
	helpEnvs = append(helpEnvs, config.EnvConfig)
	for _, s := range config.All() {
		helpEnvs = append(helpEnvs, s.Env)
	}
	for _, c := range Subcommands() {
		helpSubs = append(helpSubs, c.Name)
	}
	opts, envs, subs := manualRefs(t)
	if len(opts) == 0 || len(envs) == 0 || len(subs) == 0 {
		t.Fatalf("docs/manual.md: no reference tables found (options %d, environment %d, subcommands %d)", len(opts), len(envs), len(subs))
	}
	compare := func(what string, help, manual []string) {
		for _, h := range help {
			if !slices.Contains(manual, h) {
				t.Errorf("%s %s is in --help but not in docs/manual.md", what, h)
			}
		}
		for _, m := range manual {
			if !slices.Contains(help, m) {
				t.Errorf("%s %s is in docs/manual.md but not in --help", what, m)
			}
		}
	}
	compare("option", helpOpts, opts)
	compare("variable", helpEnvs, envs)
	compare("subcommand", helpSubs, subs)
}

// TestRemoteExecNamesWhatGoes checks that --help's --remote-exec (and so
// the man page's) names every tool a farm worker runs (farm.Tools) and the
// OpenMP front ends the client sends (farm.Client.Accepts; e2e's
// TestFarmOpenMP runs them on a worker).
func TestRemoteExecNamesWhatGoes(t *testing.T) {
	var doc string
	for _, o := range Options() {
		if slices.Contains(o.Names, "--remote-exec=URL") {
			doc = o.Doc
		}
	}
	if doc == "" {
		t.Fatal("no --remote-exec=URL option")
	}
	for _, tool := range farm.Tools {
		name := tool
		if tool == "clang" {
			name = "clang -cc1"
		}
		if !strings.Contains(doc, name) {
			t.Errorf("--remote-exec's help does not name %s, which workers run: %q", name, doc)
		}
	}
	for _, want := range []string{"HIP, CUDA and SYCL compiles", "OpenMP front ends", "stable kernel names"} {
		if !strings.Contains(doc, want) {
			t.Errorf("--remote-exec's help does not say %q: %q", want, doc)
		}
	}
}
