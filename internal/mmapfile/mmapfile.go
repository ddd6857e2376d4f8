// Package mmapfile maps input files read-only into memory, so that parsers
// can look at gigabyte-sized containers without copying them.
package mmapfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// File is a read-only view of a file's bytes. Data is valid until Close.
type File struct {
	// Data holds the file's contents. It is backed by a shared read-only
	// mapping for regular files and by a heap copy for anything else
	// (pipes, standard input, empty files); writing to it faults.
	Data   []byte
	mapped bool
}

// Open maps the named file; "-" reads standard input into memory. A regular
// file that is empty, or that cannot be mapped (some file systems refuse),
// is read instead.
func Open(name string) (*File, error) {
	if name == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return &File{Data: b}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return FromFile(f)
}

// FromFile maps an open file; the caller may close f afterwards.
func FromFile(f *os.File) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &os.PathError{Op: "read", Path: f.Name(), Err: syscall.EISDIR}
	}
	size := st.Size()
	if st.Mode().IsRegular() && size > 0 && int64(int(size)) == size {
		b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err == nil {
			return &File{Data: b, mapped: true}, nil
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return &File{Data: b}, nil
}

// Close releases the mapping. Data must not be used afterwards.
func (f *File) Close() error {
	if f == nil {
		return nil
	}
	b, mapped := f.Data, f.mapped
	f.Data, f.mapped = nil, false
	if !mapped {
		return nil
	}
	return syscall.Munmap(b)
}
