package poclbin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Errors wrapped by ExtractError.
var (
	ErrExists  = errors.New("exists with different contents")
	ErrSymlink = errors.New("is a symbolic link; refusing to follow or replace it")
	ErrNotFile = errors.New("exists and is not a regular file")
	ErrNotDir  = errors.New("exists and is not a directory")
)

// ExtractError reports why Extract refused or failed to write an entry.
type ExtractError struct {
	Path string // the entry path, or the parent directory concerned
	Err  error  // ErrExists, ErrSymlink, ErrNotFile, ErrNotDir or an I/O error
}

func (e *ExtractError) Error() string {
	return fmt.Sprintf("poclbin: extract %.256q: %v", e.Path, e.Err)
}

func (e *ExtractError) Unwrap() error { return e.Err }

// Extract writes a's entries under dir, which must exist. It first checks
// the archive as ParseArchive does, then checks the destination, and only
// then writes:
//
//   - every access goes through an os.Root opened on dir, so nothing outside
//     dir can be reached, and no existing symbolic link inside dir is
//     followed or replaced, whether it is a parent directory or the file;
//   - an existing file is accepted only if it is byte-identical to the entry
//     (and then left untouched); otherwise Extract fails with ErrExists
//     naming it, before writing anything;
//   - each file is written to a temporary file in its directory and renamed
//     into place; zero-size entries create empty files; a failed write
//     removes its temporary file.
//
// Missing parent directories are created. Files already written when a later
// I/O error occurs are kept: extract into a fresh staging directory and
// rename that into place to make the whole extraction atomic. The checks
// against the destination and the renames are not atomic together, so
// concurrent writers to dir can still race with Extract (within dir).
func Extract(a *Archive, dir string) error {
	if a == nil {
		return errNilArchive
	}
	if err := a.validate(defaultLimits); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()

	// Plan: check every parent directory and target before writing.
	checkedDirs := map[string]bool{} // dir -> exists
	write := make([]bool, len(a.Entries))
	for i, e := range a.Entries {
		if err := checkParents(root, e.Path, checkedDirs); err != nil {
			return err
		}
		same, err := sameFile(root, e.Path, e.Data, checkedDirs)
		if err != nil {
			return err
		}
		write[i] = !same
	}
	for i, e := range a.Entries {
		if !write[i] {
			continue
		}
		if err := ensureParents(root, e.Path); err != nil {
			return err
		}
		if err := writeAtomic(root, e.Path, e.Data); err != nil {
			return err
		}
	}
	return nil
}

// checkParents verifies that each existing parent directory of p is a real
// directory, not a symlink. exists records the directories seen.
func checkParents(root *os.Root, p string, exists map[string]bool) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		ok, seen := exists[d]
		if seen {
			if !ok {
				return nil // missing: everything below is missing too
			}
			continue
		}
		fi, err := root.Lstat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			exists[d] = false
			return nil
		case err != nil:
			return &ExtractError{Path: d, Err: err}
		case fi.Mode()&fs.ModeSymlink != 0:
			return &ExtractError{Path: d, Err: ErrSymlink}
		case !fi.IsDir():
			return &ExtractError{Path: d, Err: ErrNotDir}
		}
		exists[d] = true
	}
	return nil
}

// sameFile reports whether p exists as a regular file with contents data.
// It fails with ErrExists if p is a regular file with other contents, and
// with ErrSymlink or ErrNotFile for anything else in the way.
func sameFile(root *os.Root, p string, data []byte, dirs map[string]bool) (bool, error) {
	if d := path.Dir(p); d != "." && !dirs[d] {
		return false, nil // parent missing
	}
	fi, err := root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, &ExtractError{Path: p, Err: err}
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, &ExtractError{Path: p, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		return false, &ExtractError{Path: p, Err: ErrNotFile}
	case fi.Size() != int64(len(data)):
		return false, &ExtractError{Path: p, Err: ErrExists}
	}
	f, err := root.Open(p)
	if err != nil {
		return false, &ExtractError{Path: p, Err: err}
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	rest := data
	for {
		n, err := f.Read(buf)
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			return false, &ExtractError{Path: p, Err: ErrExists}
		}
		rest = rest[n:]
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, &ExtractError{Path: p, Err: err}
		}
	}
	if len(rest) != 0 {
		return false, &ExtractError{Path: p, Err: ErrExists}
	}
	return true, nil
}

// ensureParents creates p's missing parent directories one at a time,
// refusing symlinks.
func ensureParents(root *os.Root, p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		d := p[:i]
		err := root.Mkdir(d, 0o755)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return &ExtractError{Path: d, Err: err}
		}
		fi, err := root.Lstat(d)
		switch {
		case err != nil:
			return &ExtractError{Path: d, Err: err}
		case fi.Mode()&fs.ModeSymlink != 0:
			return &ExtractError{Path: d, Err: ErrSymlink}
		case !fi.IsDir():
			return &ExtractError{Path: d, Err: ErrNotDir}
		}
	}
	return nil
}

// writeAtomic writes data to a new temporary file next to p and renames it
// to p, removing the temporary file on any failure.
func writeAtomic(root *os.Root, p string, data []byte) (err error) {
	dir := path.Dir(p)
	var tmp string
	var f *os.File
	for try := 0; ; try++ {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		tmp = ".offcc-extract-" + hex.EncodeToString(rnd[:]) + ".tmp"
		if dir != "." {
			tmp = dir + "/" + tmp
		}
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || try >= 10 {
			return &ExtractError{Path: p, Err: err}
		}
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return &ExtractError{Path: p, Err: err}
	}
	if err = f.Sync(); err != nil {
		return &ExtractError{Path: p, Err: err}
	}
	if err = f.Close(); err != nil {
		return &ExtractError{Path: p, Err: err}
	}
	// Re-check just before the rename: never replace a symlink or a file
	// that appeared since the plan was made.
	if fi, lerr := root.Lstat(p); lerr == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			err = ErrSymlink
		case !fi.Mode().IsRegular():
			err = ErrNotFile
		default:
			err = ErrExists
		}
		return &ExtractError{Path: p, Err: err}
	} else if !errors.Is(lerr, fs.ErrNotExist) {
		err = lerr
		return &ExtractError{Path: p, Err: err}
	}
	if err = root.Rename(tmp, p); err != nil {
		return &ExtractError{Path: p, Err: err}
	}
	return nil
}

// isTempName reports whether name is one of Extract's temporary files.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".offcc-extract-") && strings.HasSuffix(name, ".tmp")
}
