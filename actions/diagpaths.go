package actions

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/offcc/offcc/internal/atomicfile"
)

// NameMap renames the files a command names in what it prints and
// writes (diagnostics, dependency files, include graphs) when offcc gave
// it other names for them than the user's: the OpenMP front ends of
// stable kernel names know each file by a longer spelling of the user's
// name (see driver/stable.go). A nil map renames nothing.
type NameMap []NameRule

// NameRule replaces the prefix From of a name by To.
type NameRule struct {
	From, To string
}

// Rename returns name with the From of the first rule it starts with
// replaced by that rule's To; names no rule matches stay. A rule with an
// empty From matches relative names only (not clang's own names such as
// <built-in> either).
func (m NameMap) Rename(name string) string {
	for _, r := range m {
		if r.From == "" && (name == "" || name[0] == '/' || name[0] == '<') {
			continue
		}
		if rest, ok := strings.CutPrefix(name, r.From); ok {
			return r.To + rest
		}
	}
	return name
}

// diagLocationRE matches the file name a diagnostic line starts with: any
// colour codes, "In file included from " where clang prints it, then the
// name up to ":<line>".
// (Compiled on first use: most processes never print a diagnostic.)
var diagLocationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^((?:\x1b\[[0-9;]*m)*(?:In file included from )?(?:\x1b\[[0-9;]*m)*)([^ :\x1b][^:\x1b]*)(:[0-9])`)
})

// RewriteDiagnosticLine returns line with the file name it starts with
// (see diagLocationRE) renamed by m.
func (nm NameMap) RewriteDiagnosticLine(line []byte) []byte {
	m := diagLocationRE().FindSubmatchIndex(line)
	if m == nil {
		return line
	}
	name := string(line[m[4]:m[5]])
	renamed := nm.Rename(name)
	if renamed == name {
		return line
	}
	out := make([]byte, 0, len(line)+len(renamed))
	out = append(out, line[:m[4]]...)
	out = append(out, renamed...)
	return append(out, line[m[5]:]...)
}

// diagnosticWriter passes clang's diagnostics on line by line, with the
// file names they start with renamed by names.
type diagnosticWriter struct {
	names NameMap
	w     io.Writer
	line  []byte
}

func (d *diagnosticWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.line = append(d.line, p...)
			break
		}
		d.line = append(d.line, p[:i+1]...)
		p = p[i+1:]
		if _, err := d.w.Write(d.names.RewriteDiagnosticLine(d.line)); err != nil {
			return n, err
		}
		d.line = d.line[:0]
	}
	return n, nil
}

// Close writes a last line without a newline.
func (d *diagnosticWriter) Close() error {
	if len(d.line) == 0 {
		return nil
	}
	_, err := d.w.Write(d.names.RewriteDiagnosticLine(d.line))
	d.line = nil
	return err
}

// DepFileOptions are what a clang -cc1 command says about the dependency
// file it writes: the targets (-MT values, already quoted by the driver),
// whether it adds phony targets (-MP) and its main input.
type DepFileOptions struct {
	Targets []string
	Phony   bool
	Input   string
}

// DepFileOptionsOf reads DepFileOptions from a cc1 command line.
func DepFileOptionsOf(argv []string) DepFileOptions {
	var o DepFileOptions
	for i := 1; i < len(argv); i++ {
		switch argv[i] {
		case "-MT", "-MQ":
			if i+1 < len(argv) {
				o.Targets = append(o.Targets, argv[i+1])
				i++
			}
		case "-MP":
			o.Phony = true
		}
	}
	if n := len(argv); n >= 3 && argv[n-3] == "-x" {
		o.Input = argv[n-1]
	}
	return o
}

// FormatDepFile writes a dependency file as clang's DependencyFileGenerator
// (clang/lib/Frontend/DependencyFile.cpp) writes it in Make format: the
// targets and files wrapped before column 75, files escaped the GNU way,
// and under -MP a phony target for every file but the main input.
func FormatDepFile(o DepFileOptions, files []string) []byte {
	const maxColumns = 75
	var b bytes.Buffer
	columns := 0
	for _, t := range o.Targets {
		n := len(t)
		switch {
		case columns == 0:
			columns += n
		case columns+n+2 > maxColumns:
			columns = n + 2
			b.WriteString(" \\\n  ")
		default:
			columns += n + 1
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	b.WriteByte(':')
	columns++
	for _, f := range files {
		if f == "<stdin>" {
			continue
		}
		n := len(f)
		if columns+(n+1)+2 > maxColumns {
			b.WriteString(" \\\n ")
			columns = 2
		}
		b.WriteByte(' ')
		writeDepName(&b, f)
		columns += n + 1
	}
	b.WriteByte('\n')
	if o.Phony && len(files) > 0 {
		skipped := false
		for _, f := range files {
			if !skipped && f == o.Input {
				skipped = true
				continue
			}
			writeDepName(&b, f)
			b.WriteString(":\n")
		}
	}
	return b.Bytes()
}

// writeDepName escapes a file name as clang's PrintFilename does for Make:
// '#' and ' ' get a backslash (a space's preceding backslashes doubled),
// '$' becomes "$$".
func writeDepName(b *bytes.Buffer, name string) {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '#':
			b.WriteByte('\\')
		case ' ':
			b.WriteByte('\\')
			for j := i; j > 0 && name[j-1] == '\\'; j-- {
				b.WriteByte('\\')
			}
		case '$':
			b.WriteByte('$')
		}
		b.WriteByte(name[i])
	}
}

// rewriteDepFile rewrites the dependency file path that the command argv
// wrote with its file names renamed by names, as clang writes it for
// the same files named by absolute paths.
func rewriteDepFile(path string, argv []string, names NameMap) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read dependency file: %v", err)
	}
	o := DepFileOptionsOf(argv)
	files := ParseDepFile(string(data))
	for i, f := range files {
		files[i] = names.Rename(f)
	}
	o.Input = names.Rename(o.Input)
	return atomicfile.WriteFunc(path, 0o666, func(w io.Writer) error {
		_, err := w.Write(FormatDepFile(o, files))
		return err
	})
}
