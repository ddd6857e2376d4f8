package manual

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/offcc/offcc/config"
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
