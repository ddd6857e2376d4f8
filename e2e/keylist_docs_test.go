package e2e

// What every text says about lists of trusted keys.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsKeyListSeparator checks that every text that says how a list of
// trusted keys is separated says what trust.LoadKeyring reads, ':' or
// ',': offcc's --help and its subcommands', key generate's advice, the man
// page and the Markdown pages.
func TestDocsKeyListSeparator(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the texts are offcc's")
	dir := t.TempDir()
	_, tmp := tmpEnv(t)
	env := []string{tmp, "HOME=" + dir, "XDG_CONFIG_HOME=", "OFFCC_CONFIG="}
	texts := map[string]string{}
	for _, argv := range [][]string{{"--help"}, {"cache", "--help"}, {"key", "--help"}, {"worker", "--help"},
		{"config", "--help"}, {"key", "generate", "demo", "--dir", dir}} {
		r := cmdSpec{dir: dir, env: env, name: c.cc, args: argv}.mustRun(t)
		texts["offcc "+strings.Join(argv, " ")] = r.stdout + r.stderr
	}
	pages := []string{"README.md", "docs/offcc.1"}
	mds, _ := filepath.Glob(repoPath(t, "docs/*.md"))
	for _, p := range mds {
		pages = append(pages, filepath.Join("docs", filepath.Base(p)))
	}
	for _, p := range pages {
		data, err := os.ReadFile(repoPath(t, p))
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(data)
	}
	// A separator named alone: ':'-separated, or separated by ':' without
	// "or ','" after it.
	dash := regexp.MustCompile("['`]:['`]-separated")
	by := regexp.MustCompile("separated by ['`]:['`]( or ['`],['`])?")
	for name, text := range texts {
		flat := strings.Join(strings.Fields(strings.ReplaceAll(text, `\-`, "-")), " ")
		bad := dash.FindAllStringIndex(flat, -1)
		for _, m := range by.FindAllStringSubmatchIndex(flat, -1) {
			if m[2] < 0 {
				bad = append(bad, m[:2])
			}
		}
		for _, m := range bad {
			t.Errorf("%s: %q: trust.LoadKeyring separates a key list by ':' or ','", name, flat[max(0, m[0]-60):min(len(flat), m[1]+20)])
		}
	}
}
