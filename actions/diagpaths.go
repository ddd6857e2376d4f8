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

// JoinDiagnosticDir returns the file name clang would have printed for
// name had it been given the file as an absolute path under dir: name
// itself when it is absolute or not a file (<built-in>), else dir joined
// to it as text (clang keeps a "src/../x.h" as it found it).
func JoinDiagnosticDir(dir, name string) string {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "<") || name == "-" {
		return name
	}
	name = strings.TrimPrefix(name, "./")
	if name == "." || name == "" {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// diagLocationRE matches the file name a diagnostic line starts with: any
// colour codes, "In file included from " where clang prints it, then the
// name up to ":<line>".
// (Compiled on first use: most processes never print a diagnostic.)
var diagLocationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^((?:\x1b\[[0-9;]*m)*(?:In file included from )?(?:\x1b\[[0-9;]*m)*)([^ :\x1b][^:\x1b]*)(:[0-9])`)
})

// RewriteDiagnosticLine returns line with the file name it starts with
// (see diagLocationRE) joined to dir by JoinDiagnosticDir.
func RewriteDiagnosticLine(dir string, line []byte) []byte {
	m := diagLocationRE().FindSubmatchIndex(line)
	if m == nil {
		return line
	}
	name := string(line[m[4]:m[5]])
	joined := JoinDiagnosticDir(dir, name)
	if joined == name {
		return line
	}
	out := make([]byte, 0, len(line)+len(dir)+1)
	out = append(out, line[:m[4]]...)
	out = append(out, joined...)
	return append(out, line[m[5]:]...)
}

// diagnosticWriter passes clang's diagnostics on line by line, with the
// file names they start with joined to dir.
type diagnosticWriter struct {
	dir  string
	w    io.Writer
	line []byte
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
		if _, err := d.w.Write(RewriteDiagnosticLine(d.dir, d.line)); err != nil {
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
	_, err := d.w.Write(RewriteDiagnosticLine(d.dir, d.line))
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
// wrote with its relative file names joined to dir, as clang writes it for
// the same files named by absolute paths.
func rewriteDepFile(path string, argv []string, dir string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read dependency file: %v", err)
	}
	o := DepFileOptionsOf(argv)
	files := ParseDepFile(string(data))
	for i, f := range files {
		files[i] = JoinDiagnosticDir(dir, f)
	}
	o.Input = JoinDiagnosticDir(dir, o.Input)
	return atomicfile.WriteFunc(path, 0o666, func(w io.Writer) error {
		_, err := w.Write(FormatDepFile(o, files))
		return err
	})
}
