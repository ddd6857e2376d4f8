package e2e

// The documentation's shell examples, run as written, and the man page
// that make install installs.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/llvmtest"
)

// docBlock is one fenced ```sh block of a Markdown page.
type docBlock struct {
	file   string // relative to the repository
	line   int    // of the opening fence
	text   string
	notRun string // the reason of its <!-- not run: REASON --> mark, or ""
}

// notRunMark is the comment that, on the line right before a block, says
// why it cannot run in CI.
var notRunMark = regexp.MustCompile(`^<!-- not run: (.+) -->$`)

// docBlocks returns the ```sh blocks of the Markdown file path.
func docBlocks(t *testing.T, root, rel string) []docBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```sh" {
			continue
		}
		b := docBlock{file: rel, line: i + 1}
		if i > 0 {
			if m := notRunMark.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.notRun = m[1]
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: unterminated ```sh block", rel, b.line)
		}
		b.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks
}

// TestDocExamples runs every ```sh block of README.md and docs/*.md in a
// fresh directory with offcc and offcc++ first on PATH, with bash -e, and
// fails on a non-zero exit. A block marked <!-- not run: REASON --> is
// skipped and counted; every other block runs, so none goes unchecked.
func TestDocExamples(t *testing.T) {
	c := offccOnly(t, "the examples document offcc, not the reference compiler")
	root := repoPath(t, "")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	rels := []string{"README.md"}
	for _, p := range pages {
		rels = append(rels, filepath.Join("docs", filepath.Base(p)))
	}
	run, skipped := 0, 0
	for _, rel := range rels {
		for _, b := range docBlocks(t, root, rel) {
			if b.notRun != "" {
				skipped++
				t.Logf("%s:%d: not run: %s", b.file, b.line, b.notRun)
				continue
			}
			run++
			t.Run(strings.ReplaceAll(b.file, "/", "_")+":"+strconv.Itoa(b.line), func(t *testing.T) {
				t.Parallel()
				runDocBlock(t, c, b)
			})
		}
	}
	t.Logf("%d blocks run, %d marked not run", run, skipped)
	if run < 5 {
		t.Errorf("only %d shell examples run: the README's examples must run as written", run)
	}
}

// runDocBlock runs one block as a user would: bash -e in an empty
// directory, offcc on PATH, a private HOME, cache and configuration. It
// returns that directory, which holds what the block wrote.
func runDocBlock(t *testing.T, c compiler, b docBlock) string {
	if strings.Contains(b.text, "-x cuda") {
		llvmtest.CUDA(t)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, tmpVar := tmpEnv(t)
	env := append(os.Environ(),
		"PATH="+c.dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "OFFCC_CONFIG=",
		"OFFCC_CACHE_DIR="+filepath.Join(dir, "cache"), tmpVar,
		"MAKEFLAGS=", "MAKELEVEL=", "CC=", "CXX=")
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", b.text)
	cmd.Dir, cmd.Env = work, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Errorf("%s:%d: the example fails (%v) after %v:\n%s\n--- output:\n%s", b.file, b.line, err, time.Since(start).Round(time.Millisecond), b.text, out.String())
	}
	return work
}

// TestDocBlocksMarked checks the marking rule itself on a page: a block
// right after a not-run comment is skipped, others are not.
func TestDocBlocksMarked(t *testing.T) {
	dir := t.TempDir()
	page := "# x\n\n<!-- not run: needs an NVIDIA GPU -->\n```sh\n./gpu\n```\n\ntext\n\n```sh\ntrue\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "p.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	bs := docBlocks(t, dir, "p.md")
	if len(bs) != 2 || bs[0].notRun != "needs an NVIDIA GPU" || bs[1].notRun != "" || bs[1].text != "true\n" {
		t.Errorf("blocks of a page with one marked and one plain block: %+v", bs)
	}
}

// TestInstallManPage runs make install into a DESTDIR and checks that the
// man page is installed as PREFIX/share/man/man1/offcc.1, equal to
// docs/offcc.1, and that man -l renders it (groff when man is missing).
func TestInstallManPage(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "make install installs offcc, not the reference compiler")
	mk := buildTool(t, "make")
	stage := t.TempDir()
	const prefix = "/usr/local"
	cmdSpec{dir: repoPath(t, ""), env: buildEnv(t), name: mk,
		args: []string{"--no-print-directory", "install", "DESTDIR=" + stage, "PREFIX=" + prefix,
			"INSTALL_EXE=" + c.cc, "LLVM_BIN=" + llvmBin}}.mustRun(t)
	page := filepath.Join(stage, prefix, "share", "man", "man1", "offcc.1")
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("make install did not install the man page: %v", err)
	}
	want, err := os.ReadFile(repoPath(t, "docs/offcc.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from docs/offcc.1", page)
	}
	var render *exec.Cmd
	if man, err := exec.LookPath("man"); err == nil {
		render = exec.Command(man, "-l", page)
		render.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80", "MAN_KEEP_FORMATTING=")
	} else if groff, err := exec.LookPath("groff"); err == nil {
		render = exec.Command(groff, "-man", "-Tutf8", page)
	} else {
		llvmtest.Missing(t, "neither man nor groff is installed (make deps installs man-db)")
	}
	var stderr bytes.Buffer
	render.Stderr = &stderr
	out, err := render.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%s: %v\n%s", strings.Join(render.Args, " "), err, stderr.String())
	}
	text := string(out)
	for _, want := range []string{"NAME", "offcc", "OPTIONS", "--remote-exec", "ENVIRONMENT", "OFFCC_CACHE_SIZE", "SUBCOMMANDS", "cache stats"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered man page lacks %q:\n%s", want, text)
		}
	}
}
