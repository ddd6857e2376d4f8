package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/offcc/offcc/internal/atomicfile"
)

// SetInFile makes the configuration file path set the setting key (a file
// key or an environment variable) to value, after checking value: the
// first line of that key gets the new value, later ones go, and a key not
// there yet is added at the end. Comments and other lines stay as they
// are. The file (and its directory) is created when missing; the new
// content replaces the old atomically, keeping the file's mode.
func SetInFile(path, key, value string) error {
	s, ok := Lookup(key)
	if !ok {
		return unknownKey(key)
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\n\r") {
		return fmt.Errorf("%s: a value is one line", s.Key)
	}
	if why := Check(s, value, true); why != "" {
		return &ValueError{Setting: s, Value: value, Why: why}
	}
	return editFile(path, s.Key, s.Key+" = "+value)
}

// UnsetInFile removes the setting key's lines from the configuration file
// path, keeping the rest; it reports whether there were any. A missing
// file has none.
//
// A key that is no setting (one an older or newer offcc knew, or a typo,
// which fails every command that reads the file) is removed too when the
// file has lines of it, spelt as given; when it has none, that is an
// error (with the nearest setting), as set's: a misspelt unset must not
// pass for done. Lookup tells the caller which it was.
func UnsetInFile(path, key string) (bool, error) {
	fileKey := strings.TrimSpace(key)
	s, known := Lookup(key)
	if known {
		fileKey = s.Key
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if !known {
			return false, unknownKey(key)
		}
		return false, nil
	}
	removed := false
	err := editFileFunc(path, fileKey, func(lines []string, at []int) ([]string, bool) {
		removed = len(at) > 0
		return drop(lines, at), removed
	})
	if err == nil && !known && !removed {
		err = unknownKey(key)
	}
	return removed, err
}

func unknownKey(key string) error {
	msg := fmt.Sprintf("unknown setting '%s'", key)
	if sug := Suggest(key); sug != "" {
		msg += fmt.Sprintf("; did you mean '%s'?", sug)
	}
	return errors.New(msg + " (offcc config lists them)")
}

// editFile puts line in place of key's first line (dropping the others),
// or at the end when there is none.
func editFile(path, key, line string) error {
	return editFileFunc(path, key, func(lines []string, at []int) ([]string, bool) {
		if len(at) == 0 {
			if n := len(lines); n > 0 && lines[n-1] == "" {
				lines = lines[:n-1] // the final newline's empty piece
			}
			return append(lines, line, ""), true
		}
		lines[at[0]] = line
		return drop(lines, at[1:]), true
	})
}

// drop returns lines without the lines at (ascending indices).
func drop(lines []string, at []int) []string {
	out := lines[:0:0]
	j := 0
	for i, l := range lines {
		if j < len(at) && at[j] == i {
			j++
			continue
		}
		out = append(out, l)
	}
	return out
}

// editFileFunc rewrites the file path with edit, given its lines (split
// at '\n', so a final newline leaves an empty last piece) and the indices
// of key's lines; it writes only when edit says it changed something.
func editFileFunc(path, key string, edit func(lines []string, at []int) ([]string, bool)) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // edit the file a link points to, not the link
	}
	perm := os.FileMode(0o666)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if info, err := os.Stat(path); err == nil {
			perm = info.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			return fmt.Errorf("cannot create the directory of %s: %v", path, unwrapPath(err))
		}
	default:
		return fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	var lines []string
	if len(data) > 0 {
		lines = strings.Split(string(data), "\n")
	}
	var at []int
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		k, _, ok := strings.Cut(t, "=")
		if ok && strings.TrimSpace(k) == key {
			at = append(at, i)
		}
	}
	lines, changed := edit(lines, at)
	if !changed {
		return nil
	}
	if err := atomicfile.Write(path, []byte(strings.Join(lines, "\n")), perm); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
	}
	return nil
}
