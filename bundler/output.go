package bundler

import (
	"bufio"
	"io"
	"os"

	"github.com/offcc/offcc/internal/atomicfile"
)

// outputs collects a command's output files so that either all of them are
// written or, on error, none: each is written to a temporary file that
// commit renames into place and abort removes.
type outputs struct {
	stdout io.Writer
	files  []*atomicfile.File
	direct []*os.File
}

// write creates output name ("-" is standard output; an existing
// non-regular file such as /dev/null is written in place) and calls fill
// with a buffered writer for it.
func (o *outputs) write(name string, fill func(w io.Writer) error) error {
	var w io.Writer
	switch fi, err := os.Stat(name); {
	case name == "-":
		w = o.stdout
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		o.direct = append(o.direct, f)
		w = f
	default:
		f, err := atomicfile.Create(name)
		if err != nil {
			return err
		}
		o.files = append(o.files, f)
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := fill(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// commit renames every temporary file into place.
func (o *outputs) commit() error {
	for _, f := range o.direct {
		f.Close()
	}
	o.direct = nil
	for i, f := range o.files {
		if err := f.Commit(0o666); err != nil {
			for _, g := range o.files[i+1:] {
				g.Abort()
			}
			o.files = nil
			return err
		}
	}
	o.files = nil
	return nil
}

// abort removes every temporary file not yet committed.
func (o *outputs) abort() {
	for _, f := range o.direct {
		f.Close()
	}
	for _, f := range o.files {
		f.Abort()
	}
	o.files, o.direct = nil, nil
}
