package cache

import (
	"os"
	"path/filepath"
	"strings"
)

// ClearResult says what Clear removed.
type ClearResult struct {
	// Entries and Bytes count the entries removed (damaged ones
	// included) and the bytes of the sound ones.
	Entries, Bytes int64
	// Temporaries counts the temporary and trash directories removed.
	Temporaries int64
}

// Clear empties the cache: every entry (sound or damaged), the store's
// temporaries and trash in the shards (a build writing an entry meanwhile
// only fails to store it), the statistics and the trim marker. It removes
// only names of the store's layout: DIR/xx/<key>, DIR/xx/.tmp-* and
// DIR/xx/.trash-* for two-hex-digit shards, DIR/stats/<n> and
// DIR/trim.txt (and it records the time in DIR/stats/zeroed); anything else in DIR is left alone, so a wrong
// OFFCC_CACHE_DIR loses nothing of its own. A shard that is a symbolic
// link is not entered; a symbolic link in a shard is removed itself, never
// followed. Empty shard directories are kept.
func (c *Cache) Clear() (ClearResult, error) {
	var res ClearResult
	s := c.Store
	err := s.walk(func(key Sum, dir string, e *Entry, info os.FileInfo) error {
		if s.Remove(key) == nil {
			res.Entries++
			if e != nil {
				res.Bytes += e.Size()
			}
		}
		return nil
	}, func(path string, info os.FileInfo) {
		base := filepath.Base(path)
		if strings.HasPrefix(base, tmpPrefix) || strings.HasPrefix(base, trashPrefix) {
			if os.RemoveAll(path) == nil {
				res.Temporaries++
			}
		}
	})
	if err != nil {
		return res, err
	}
	if err := c.ZeroStats(); err != nil {
		return res, err
	}
	if err := os.Remove(filepath.Join(c.Dir, trimMarker)); err != nil && !os.IsNotExist(err) {
		return res, err
	}
	return res, nil
}
