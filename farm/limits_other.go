//go:build !linux

package farm

import (
	"errors"
	"math"
)

// freeSpace reports no limit: this system's free space is not watched.
func freeSpace(dir string) (int64, error) { return math.MaxInt64 / 2, nil }

// fsFull reports false: not known on this system.
func fsFull(dir string) bool { return false }

// mountJobTmpfs fails: job directories are plain directories here.
func mountJobTmpfs(dir string, size int64, files int) error {
	return errors.New("no tmpfs per job on this system")
}

// unmountJobTmpfs does nothing: nothing is mounted.
func unmountJobTmpfs(dir string) error { return nil }

// unmountStale does nothing: nothing is mounted.
func unmountStale(dir string) error { return nil }
