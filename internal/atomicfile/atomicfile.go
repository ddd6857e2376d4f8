// Package atomicfile writes files so that readers see either the old
// content or the whole new content, never a truncated file. Its errors name
// the file the caller asked for, never the hidden temporary beside it.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to a temporary file in name's directory and renames it
// to name. perm is filtered by the umask as os.Create would. On failure the
// temporary is removed and name is untouched.
func Write(name string, data []byte, perm os.FileMode) error {
	return WriteFunc(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// File is a temporary file that becomes name on Commit.
type File struct {
	*os.File
	name string
}

// Create opens a new temporary file beside name.
func Create(name string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".offcc-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
		}
		return nil, err
	}
	return &File{File: f, name: name}, nil
}

// named returns err, an error of an operation on the hidden temporary tmp,
// naming name instead, the file the user knows: a write to the temporary
// fails as a write to name. Errors about other files are returned as they
// are.
func named(err error, tmp, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) && le.Old == tmp {
		return &fs.PathError{Op: le.Op, Path: name, Err: le.Err}
	}
	return err
}

// Write writes to the temporary file; an error names the final file.
func (f *File) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	return n, named(err, f.File.Name(), f.name)
}

// WriteString writes to the temporary file; an error names the final file.
func (f *File) WriteString(s string) (int, error) {
	n, err := f.File.WriteString(s)
	return n, named(err, f.File.Name(), f.name)
}

// ReadFrom copies r to the temporary file (io.Copy uses it); an error
// writing names the final file.
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	n, err := f.File.ReadFrom(r)
	return n, named(err, f.File.Name(), f.name)
}

// Sync commits the temporary file to stable storage; an error names the
// final file.
func (f *File) Sync() error { return named(f.File.Sync(), f.File.Name(), f.name) }

// TempPath returns the hidden temporary's path.
func (f *File) TempPath() string { return f.File.Name() }

// TempName returns a fresh name beside name for a tool to write to; the
// caller renames it to name on success and removes it otherwise. The file
// is left with mode 0666 less the umask, as a tool would create it: tools
// that truncate an existing output keep its mode (GNU ld then only adds
// the execute bits), so a private 0600 would leak into the result.
func TempName(name string) (string, error) {
	f, err := Create(name)
	if err != nil {
		return "", err
	}
	tmp := f.TempPath()
	err = f.Chmod(0o666 &^ umask())
	f.File.Close()
	if err != nil {
		os.Remove(tmp)
		return "", named(err, tmp, name)
	}
	return tmp, nil
}

// Commit closes the file, sets its mode (perm minus the umask) and renames it
// to the final name.
// Errors name the final file.
func (f *File) Commit(perm os.FileMode) error {
	tmp := f.File.Name()
	if err := f.File.Close(); err != nil {
		os.Remove(tmp)
		return named(err, f.File.Name(), f.name)
	}
	if err := os.Chmod(tmp, perm&^umask()); err != nil {
		os.Remove(tmp)
		return named(err, f.File.Name(), f.name)
	}
	if err := os.Rename(tmp, f.name); err != nil {
		os.Remove(tmp)
		return named(err, f.File.Name(), f.name)
	}
	return nil
}

// Abort closes and removes the temporary file.
func (f *File) Abort() {
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFunc writes name atomically with the function write: its output
// goes to a temporary file beside name, renamed to name (mode perm less the
// umask) when write succeeds and removed otherwise.
func WriteFunc(name string, perm os.FileMode, write func(io.Writer) error) error {
	f, err := Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(perm)
}
