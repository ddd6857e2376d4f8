// Package atomicfile writes files so that readers see either the old
// content or the whole new content, never a truncated file.
package atomicfile

import (
	"io"
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
		return nil, err
	}
	return &File{File: f, name: name}, nil
}

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
	tmp := f.Name()
	err = f.Chmod(0o666 &^ umask())
	f.Close()
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// Commit closes the file, sets its mode (perm minus the umask) and renames it
// to the final name.
func (f *File) Commit(perm os.FileMode) error {
	if err := f.File.Close(); err != nil {
		os.Remove(f.File.Name())
		return err
	}
	if err := os.Chmod(f.File.Name(), perm&^umask()); err != nil {
		os.Remove(f.File.Name())
		return err
	}
	if err := os.Rename(f.File.Name(), f.name); err != nil {
		os.Remove(f.File.Name())
		return err
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
